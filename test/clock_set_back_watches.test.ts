/**
 * A Certificate Transparency watch's next poll is a wall-clock moment in the database, chosen as the
 * end of its last poll plus CERTKEEPER_CT_INTERVAL. After the wall clock is set back a day (NTP
 * correcting a clock that ran a day ahead), the watch is polled again within the interval plus a lease
 * of the corrected clock, not a day later, with a warning. The clock here steps (its now() jumps)
 * while its sleeps run on elapsed time; the CT search service is real HTTP on loopback.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { CtClient, WatchPoller } from "../core/watches/mod.ts";
import type { Scope } from "../core/base/records.ts";
import { createLogger } from "../core/base/log.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";
import { SteppingClock } from "./support/fake_clock.ts";

let ct: CtServer;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
beforeAll(async () => {
  ct = await startCtServer();
});
afterAll(async () => {
  await ct.close();
  await fetcher.close();
});

const INTERVAL = HOUR;
const LEASE = 5 * MINUTE;

async function world() {
  const clock = new SteppingClock(Date.now());
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const watch = watchRecord(scope, { nextPollAt: clock.now() - 1000, lastPolledAt: null, domain: `stepped${Math.random().toString(36).slice(2, 8)}.test` });
  expect(await store.watches.insert(watch, { limit: 10 })).toBe("created");
  const polls: number[] = [];
  const warnings: string[] = [];
  const logger = createLogger("warn", (line) => warnings.push(line));
  const poller = new WatchPoller({
    store,
    clock,
    logger,
    client: new CtClient({ fetcher, baseUrl: ct.url, timeoutMs: 2_000 }),
    intervalMs: INTERVAL,
    owner: "proc_a",
    leaseMs: LEASE,
    pollMs: MINUTE,
    addCertificate: async () => true,
    onPoll: () => polls.push(clock.now()),
  });
  poller.loop.start();
  for (let i = 0; i < 400 && polls.length === 0; i++) await Bun.sleep(5);
  expect(polls.length).toBe(1);
  return { clock, poller, polls, warnings };
}

/** Lets `ms` of time pass in one-minute steps, giving the loop a turn at each. */
async function pass(clock: SteppingClock, ms: number, stopWhen: () => boolean): Promise<void> {
  for (let t = 0; t < ms && !stopWhen(); t += MINUTE) {
    clock.advance(MINUTE);
    await Bun.sleep(3);
  }
}

test("control: without a step, the watch is polled again after the interval", async () => {
  const { clock, poller, polls, warnings } = await world();
  await pass(clock, INTERVAL + LEASE + 10 * MINUTE, () => polls.length >= 2);
  await poller.loop.stop();
  expect(polls.length).toBe(2);
  expect(polls[1]! - polls[0]!).toBeGreaterThanOrEqual(INTERVAL);
  expect(warnings.filter((line) => line.includes("set back"))).toEqual([]);
});

test("after the wall clock steps back a day, the watch is polled again within the interval plus a lease (not a day later), with a warning", async () => {
  const { clock, poller, polls, warnings } = await world();
  clock.step(-DAY);
  await pass(clock, INTERVAL + LEASE + 10 * MINUTE, () => polls.length >= 2);
  await poller.loop.stop();
  expect(polls.length).toBe(2);
  expect(warnings.filter((line) => line.includes("watch polls planned on a clock since set back are due now"))).toHaveLength(1);
});
