/**
 * Review (scale-out, CONTRACT §19): the renewal information cache is how one process's answer is
 * honoured by the others ("kept in the database"), and its port says an entry "may be dropped once
 * the leaf has expired". Every 256th put sweeps expired leaves with `expires_at < info.checkedAt ??
 * info.nextAt` (adapters/sql/renewal_info.ts): when that put is an error about a leaf never answered
 * (checkedAt null), nextAt is six hours ahead, and the answers of every leaf still valid but expiring
 * within six hours are deleted. Another process serving such a leaf then asks the CA again, inside
 * the Retry-After of the answer it should have read.
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
    await a.renewalInfo.put("shortlived.leaf", answered, now + 3 * HOUR);
    // Other leaves' answers, as a busy process writes them…
    for (let i = 0; i < 254; i++) {
      await a.renewalInfo.put(`other.${i}`, { ...answered, window: { start: now + 10 * HOUR, end: now + 20 * HOUR } }, now + 30 * 24 * HOUR);
    }
    // …and the 256th: a CA error about a leaf never answered before.
    await a.renewalInfo.put("failed.leaf", { window: null, explanationUrl: null, checkedAt: null, requestedEnd: null, nextAt: now + 6 * HOUR, lastError: "the CA answered HTTP 500" }, now + 30 * 24 * HOUR);

    // The other process reads the first answer: it is still valid, and so is the leaf.
    expect(await b.renewalInfo.get("shortlived.leaf")).toEqual(answered);
  });
});
