/**
 * A log list served at an https URL (CERTKEEPER_CT_LOG_LIST) that cannot be read when the follower
 * starts (a passing 500): it is read again a minute later, not at the next reading of the list hours
 * later, and the logs it names are followed then. One CT follower on a fake clock.
 */
import { afterEach, expect, test } from "bun:test";
import { FakeClock } from "./support/fake_clock.ts";
import { logListJson, startFixtureLog, type FixtureLog } from "./support/ct_log_server.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createLogger } from "../core/base/log.ts";
import { CtFollower } from "../core/ctlogs/follower.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(check: () => boolean | Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return true;
    await Bun.sleep(10);
  }
  return false;
}

test("a list that failed at the first reading is read again a minute later, and its logs followed", async () => {
  const log: FixtureLog = await startFixtureLog({ kind: "tiled" });
  cleanups.push(() => log.close());
  log.publish();
  let listAsked = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      listAsked++;
      return listAsked === 1 ? new Response("oops", { status: 500 }) : new Response(logListJson([log]), { headers: { "content-type": "application/json" } });
    },
  });
  cleanups.push(() => server.stop(true));
  const clock = new FakeClock(Date.now());
  const store = createMemoryStore();
  cleanups.push(() => store.close());
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  cleanups.push(() => fetcher.close());
  const follower = new CtFollower({
    store,
    clock,
    logger: createLogger("error", () => {}),
    fetcher,
    owner: "proc_list",
    logList: `http://127.0.0.1:${server.port}/log_list.json`,
    requestTimeoutMs: 3000,
    leaseMs: 10 * 60_000,
  });
  follower.start();
  cleanups.push(async () => {
    const stopping = follower.stop();
    clock.advance(1);
    await stopping;
  });
  expect(await until(() => listAsked === 1)).toBe(true);
  await Bun.sleep(100); // the failure handled, the follower asleep
  expect((await store.ctLogs.list()).length).toBe(0);
  clock.advance(61_000);
  expect(await until(() => listAsked === 2)).toBe(true);
  expect(await until(async () => (await store.ctLogs.list()).some((l) => l.url === log.url && l.listed))).toBe(true);
}, 20_000);
