/**
 * A log's 429 Retry-After is honoured however long it is (up to a day): the log is not asked again
 * before the time it named, and is asked once it has passed (CONTRACT §21: "Requests honour 429 /
 * Retry-After"). One follower on a fake clock, against a fixture RFC 6962 log.
 */
import { afterEach, expect, test } from "bun:test";
import { FakeClock } from "./support/fake_clock.ts";
import { startFixtureLog, logListJson, type FixtureLog } from "./support/ct_log_server.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createLogger } from "../core/base/log.ts";
import { parseLogList } from "../core/ctlogs/log_list.ts";
import { Rfc6962Reader } from "../core/ctlogs/rfc6962_reader.ts";
import { followLog } from "../core/ctlogs/log_follower.ts";
import { WatchIndexSource } from "../core/ctlogs/watch_index.ts";

let log: FixtureLog | undefined;
afterEach(async () => {
  await log?.close();
  log = undefined;
});

test("Retry-After: 7200 on get-sth: not asked again within the two hours, asked once they have passed", async () => {
  log = await startFixtureLog({ kind: "rfc6962" });
  log.publish();
  const clock = new FakeClock(Date.now());
  const store = createMemoryStore();
  const owner = "review";
  expect(await store.ctLogs.leaseFollower({ owner, now: clock.now(), leaseUntil: clock.now() + 30 * 86_400_000 })).toBe(true);
  const [spec] = parseLogList(logListJson([log])).logs;
  expect(await store.ctLogs.setListed(owner, [spec!], clock.now())).toBe(true);
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  const http = { fetcher, timeoutMs: 3000 };
  log.intercept({ status: 429, headers: { "retry-after": "7200" } }, { match: /get-sth/, times: 1 });
  const abort = new AbortController();
  const context = {
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
  const done = followLog(spec!, new Rfc6962Reader(spec!, http), context, abort.signal);
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await Bun.sleep(10);
  };
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
