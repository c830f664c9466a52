/**
 * The renewal information cache on sqld is how one process's answer is honoured by the others (CONTRACT
 * §19), and an entry may be dropped once its leaf has expired. Every 256th put sweeps the leaves
 * expired by the time of that put: an answer about a leaf still valid, even one expiring within the
 * hour, stays for the other process (it once took the put's next-ask time, six hours ahead after an
 * error, for now), and a leaf expired is swept.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { HOUR, MINUTE } from "../core/base/time.ts";
import type { RenewalInfo } from "../core/base/records.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { startSqld } from "./support/sqld.ts";

setDefaultTimeout(30_000);

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

describe("the shared renewal information cache on sqld", () => {
  test("an answer about a leaf that has not expired is still there for another process after 256 puts", async () => {
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    // Two processes' stores on one database.
    const a = await openLibsqlStore({ url: sqld.url });
    const b = await openLibsqlStore({ url: sqld.url });
    cleanups.push(() => a.close(), () => b.close());

    const now = Date.now();
    // A 160-hour leaf in its last three hours; the CA answered it a minute ago, asking again in an hour.
    const answered: RenewalInfo = {
      window: { start: now - 10 * HOUR, end: now - 5 * HOUR },
      explanationUrl: null,
      checkedAt: now - MINUTE,
      requestedEnd: null,
      nextAt: now + HOUR,
      lastError: null,
    };
    // A leaf that expired a minute ago: nobody asks about it again.
    await a.renewalInfo.put("expired.leaf", answered, now - MINUTE, now);
    await a.renewalInfo.put("shortlived.leaf", answered, now + 3 * HOUR, now);
    // Other leaves' answers, as a busy process writes them…
    for (let i = 0; i < 253; i++) {
      await a.renewalInfo.put(`other.${i}`, { ...answered, window: { start: now + 10 * HOUR, end: now + 20 * HOUR } }, now + 30 * 24 * HOUR, now);
    }
    // …and the 256th: a CA error about a leaf never answered before.
    await a.renewalInfo.put("failed.leaf", { window: null, explanationUrl: null, checkedAt: null, requestedEnd: null, nextAt: now + 6 * HOUR, lastError: "the CA answered HTTP 500" }, now + 30 * 24 * HOUR, now);

    // The other process reads the first answer: it is still valid, and so is the leaf.
    expect(await b.renewalInfo.get("shortlived.leaf")).toEqual(answered);
    // The sweep ran: the expired leaf's answer is gone.
    expect(await b.renewalInfo.get("expired.leaf")).toBeNull();
  });
});
