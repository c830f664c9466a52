/**
 * A CT search service's Retry-After (429 or 503) is honoured up to a day, as the logs' and the CAs'
 * are: one answer with a far date or an enormous number of seconds, from the service or a proxy in
 * front of it, delays the watch's next poll by a day, not by centuries, in either store.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { CtClient, WatchPoller } from "../core/watches/mod.ts";
import type { Store } from "../core/store/ports.ts";
import type { Scope } from "../core/base/records.ts";
import { createLogger } from "../core/base/log.ts";
import { systemClock } from "../core/base/time.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";

const DAY = 86_400_000;
let ct: CtServer;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
const dirs: string[] = [];
beforeAll(async () => {
  ct = await startCtServer();
});
afterAll(async () => {
  await ct.close();
  await fetcher.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function pollRateLimited(store: Store, retryAfter: string) {
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const watch = watchRecord(scope, { nextPollAt: 0, domain: `limited${Math.random().toString(36).slice(2, 8)}.test` });
  expect(await store.watches.insert(watch, { limit: 10 })).toBe("created");
  const poller = new WatchPoller({
    store,
    clock: systemClock,
    logger: createLogger("error"),
    client: new CtClient({ fetcher, baseUrl: ct.url, timeoutMs: 2_000 }),
    intervalMs: 3_600_000,
    owner: "proc_a",
    leaseMs: 60_000,
    pollMs: 1_000,
    addCertificate: async () => true,
  });
  const claimed = (await store.watches.claimDue({ owner: "proc_a", now: Date.now(), leaseUntil: Date.now() + 60_000, limit: 1000 })).find((w) => w.id === watch.id)!;
  ct.fail(429, 1, retryAfter);
  const started = Date.now();
  const result = await poller.poll(claimed).catch((error: Error) => `threw: ${error.message}`);
  const stored = (await store.watches.get(scope, watch.id))!;
  return { result, stored, started };
}

for (const retryAfter of ["Fri, 31 Dec 9999 23:59:59 GMT", "315360000000"]) {
  test(`memory store: a 429 with Retry-After "${retryAfter}" does not stop the watch for more than a day`, async () => {
    const { result, stored, started } = await pollRateLimited(createMemoryStore(), retryAfter);
    expect(result).toBe("rate_limited");
    console.log(`next poll at ${new Date(stored.nextPollAt).toISOString?.() ?? stored.nextPollAt} (${((stored.nextPollAt - started) / DAY / 365).toFixed(0)} years away)`);
    expect(stored.nextPollAt - started).toBeLessThanOrEqual(DAY + 10_000); // a day from the answer
    expect(stored.nextPollAt - started).toBeGreaterThan(DAY - 10_000);
  });
}

test("libsql store: a 429 with Retry-After of 10^20 seconds does not stop the watch for more than a day", async () => {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-review-"));
  dirs.push(dir);
  const store = await openLibsqlStore({ url: `file:${join(dir, "test.db")}` });
  try {
    const { result, stored, started } = await pollRateLimited(store, "100000000000000000000");
    console.log(`libsql: poll ${result}; nextPollAt ${stored.nextPollAt}; lastError ${stored.lastError}; leaseOwner ${(stored as any).leaseOwner}`);
    expect(result).toBe("rate_limited");
    expect(stored.nextPollAt - started).toBeLessThanOrEqual(DAY + 10_000); // a day from the answer
    expect(stored.nextPollAt - started).toBeGreaterThan(DAY - 10_000);
  } finally {
    await store.close();
  }
});
