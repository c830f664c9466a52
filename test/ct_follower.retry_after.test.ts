/**
 * A log's 429 Retry-After is honoured however long it is (up to a day): the log is not asked again
 * before the time it named, and is asked once it has passed (CONTRACT §21: "Requests honour 429 /
 * Retry-After"). One follower on a fake clock, against a fixture RFC 6962 log. The wait is kept with
 * the log: a follower started after a restart, or by another process taking the lease over, waits out
 * what is left of it (in memory and in the embedded database); one written on a wall clock since set
 * back a day is not.
 */
import { afterEach, expect, test } from "bun:test";
import { FakeClock } from "./support/fake_clock.ts";
import { startFixtureLog, logListJson, type FixtureLog } from "./support/ct_log_server.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import type { Store } from "../core/store/mod.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import type { HttpFetcher } from "../core/net/mod.ts";
import { createLogger } from "../core/base/log.ts";
import { parseLogList, type LogSpec } from "../core/ctlogs/log_list.ts";
import { Rfc6962Reader } from "../core/ctlogs/rfc6962_reader.ts";
import { followLog } from "../core/ctlogs/log_follower.ts";
import { WatchIndexSource } from "../core/ctlogs/watch_index.ts";

let log: FixtureLog | undefined;
afterEach(async () => {
  await log?.close();
  log = undefined;
});

/** What a log follower of `owner` is given, as the CT follower gives it. */
function followerContext(store: Store, clock: FakeClock, owner: string) {
  return {
    store,
    clock,
    logger: createLogger("error", () => {}),
    owner,
    watches: new WatchIndexSource({ store: store.ctLogs, clock, settleMs: 0, refreshMs: 1000 }),
    runEntries: 4096,
    fetchesPerLog: 4,
    headIntervalMs: 30_000,
    firstBackoffMs: 5_000,
    onLeaseLost: () => {},
  };
}

/** Waits up to 2 s for `check`. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await Bun.sleep(10);
}

test("Retry-After: 7200 on get-sth: not asked again within the two hours, asked once they have passed", async () => {
  log = await startFixtureLog({ kind: "rfc6962" });
  log.publish();
  const clock = new FakeClock(Date.now());
  const store = createMemoryStore();
  const owner = "proc_follower";
  expect(await store.ctLogs.leaseFollower({ owner, now: clock.now(), leaseUntil: clock.now() + 30 * 86_400_000 })).toBe(true);
  const [spec] = parseLogList(logListJson([log])).logs;
  expect(await store.ctLogs.setListed(owner, [spec!], clock.now())).toBe(true);
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  const http = { fetcher, timeoutMs: 3000 };
  log.intercept({ status: 429, headers: { "retry-after": "7200" } }, { match: /get-sth/, times: 1 });
  const abort = new AbortController();
  const done = followLog(spec!, new Rfc6962Reader(spec!, http), followerContext(store, clock, owner), abort.signal);
  await until(() => log!.requests.length === 1);
  await Bun.sleep(200); // the 429 handled, the follower asleep
  expect(log.requests).toEqual(["ct/v1/get-sth"]);
  clock.advance(3_600_000 + 1_000); // an hour later: still within the 2 h the log asked for
  await Bun.sleep(300);
  const asked = log.requests.slice();
  clock.advance(3_600_000); // past the two hours
  await until(() => log!.requests.length > 1);
  const after = log.requests.slice();
  abort.abort();
  clock.advance(1);
  await done;
  await fetcher.close();
  expect(asked).toEqual(["ct/v1/get-sth"]);
  expect(after.slice(0, 2)).toEqual(["ct/v1/get-sth", "ct/v1/get-sth"]);
}, 20_000);

/** A log follower of `owner` started on `spec`; `stop()` ends it (a restart, or its process dying). */
function follow(store: Store, clock: FakeClock, spec: LogSpec, fetcher: HttpFetcher, owner: string) {
  const abort = new AbortController();
  const run = followLog(spec, new Rfc6962Reader(spec, { fetcher, timeoutMs: 3000 }), followerContext(store, clock, owner), abort.signal);
  return {
    stop: async () => {
      abort.abort();
      clock.advance(1);
      await run;
    },
  };
}

/** A first process follows `log`, is told by a 429 on get-sth to come back in `seconds`, writes that wait down, and stops. */
async function firstToldToWait(log: FixtureLog, store: Store, clock: FakeClock, spec: LogSpec, fetcher: HttpFetcher, seconds: number) {
  expect(await store.ctLogs.leaseFollower({ owner: "first", now: clock.now(), leaseUntil: clock.now() + 60_000 })).toBe(true);
  expect(await store.ctLogs.setListed("first", [spec], clock.now())).toBe(true);
  log.intercept({ status: 429, headers: { "retry-after": String(seconds) } }, { match: /get-sth/, times: 1 });
  const first = follow(store, clock, spec, fetcher, "first");
  await until(() => log.requests.length === 1);
  // The 429 handled: its wait written down.
  for (let i = 0; i < 100 && (await store.ctLogs.list())[0]?.retryAt === null; i++) await Bun.sleep(10);
  expect((await store.ctLogs.list())[0]!.retryAt).toBe(clock.now() + seconds * 1000);
  await first.stop();
}

for (const [name, open] of [
  ["memory", async () => ({ store: createMemoryStore() as Store, done: async () => {} })],
  [
    "the embedded database",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "ck-retry-"));
      const store = await openLibsqlStore({ url: `file:${join(dir, "ck.db")}` });
      return { store, done: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
    },
  ],
] as const) {
  /** A fixture RFC 6962 log with one head, this store, a fake clock and a fetcher, for `body`; all closed after. */
  const inWorld = async (body: (world: { log: FixtureLog; clock: FakeClock; store: Store; fetcher: HttpFetcher; spec: LogSpec }) => Promise<void>) => {
    const started = (log = await startFixtureLog({ kind: "rfc6962" }));
    started.publish();
    const { store, done } = await open();
    const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
    try {
      await body({ log: started, clock: new FakeClock(Date.now()), store, fetcher, spec: parseLogList(logListJson([started])).logs[0]! });
    } finally {
      await fetcher.close();
      await done();
    }
  };

  test(`${name}: a follower started after a 429 waits out what is left of its Retry-After, then asks`, async () => {
    await inWorld(async ({ log, clock, store, fetcher, spec }) => {
      // The first process is told to come back in two hours, and stops (a restart, or it dies).
      await firstToldToWait(log, store, clock, spec, fetcher, 7200);
      // Half an hour later another process holds the lease: it does not ask for an hour and a half more.
      clock.advance(1_800_000);
      expect(await store.ctLogs.leaseFollower({ owner: "second", now: clock.now(), leaseUntil: clock.now() + 30 * 86_400_000 })).toBe(true);
      const second = follow(store, clock, spec, fetcher, "second");
      await Bun.sleep(300);
      clock.advance(3_600_000); // still 30 minutes short of the two hours
      await Bun.sleep(300);
      const asked = log.requests.slice();
      clock.advance(1_800_000 + 1_000); // past them
      await until(() => log!.requests.length > 1);
      const after = log.requests.slice();
      await second.stop();
      expect(asked).toEqual(["ct/v1/get-sth"]);
      expect(after.slice(0, 2)).toEqual(["ct/v1/get-sth", "ct/v1/get-sth"]);
    });
  }, 20_000);

  test(`${name}: a wait written on a wall clock since set back a day is not waited out by the follower started after it`, async () => {
    await inWorld(async ({ log, clock, store, fetcher, spec }) => {
      // On a clock a day ahead, the log asks for 5 minutes; the process stops.
      await firstToldToWait(log, store, clock, spec, fetcher, 300);
      // NTP sets the clock back a day; a follower starts (a restart, or another process).
      clock.set(clock.now() - 86_400_000 + 60_000);
      // The first's lease, taken on the clock ahead, is not waited out (a live holder renews on the new clock).
      const now = clock.now();
      expect(await store.ctLogs.leaseFollower({ owner: "second", now, leaseUntil: now + 60_000, latest: now + 60_000 + 600_000 })).toBe(true);
      const second = follow(store, clock, spec, fetcher, "second");
      // Asked at once (the fake clock does not move: waiting a day, or the 5 minutes, would never end).
      await until(() => log!.requests.length > 1);
      const after = log.requests.slice();
      await second.stop();
      expect(after.slice(0, 2)).toEqual(["ct/v1/get-sth", "ct/v1/get-sth"]);
    });
  }, 20_000);
}
