/**
 * Only a 429 or a 503 makes a log's Retry-After the wait before it is asked again; any other error
 * backs off from 5 s, doubling, whatever headers it carries: a log answering HTTP 500 with
 * `Retry-After: 30` is asked again after the first backoff, not left alone for 30 s.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("an HTTP 500 carrying Retry-After: 30 is backed off as another error (the first backoff), not for 30 s", async () => {
  // firstBackoffMs is 100 in this world: the log is asked again within a second or so.
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  await w.caughtUp(0);
  const log = w.logs[0]!;
  log.intercept({ status: 500, headers: { "retry-after": "30" }, body: "oops" }, { match: /^checkpoint$/ });
  const asked = log.requests.length;
  await w.until("the 500", async () => (await w.ctLogs())[0]?.lastError);
  const failedAt = Date.now();
  await Bun.sleep(3000);
  const after = log.requests.slice(asked).filter((path) => path === "checkpoint").length;
  // The failed request, then at least one more within 3 s.
  expect({ checkpointsWithin3s: after >= 2, waited: Date.now() - failedAt >= 3000 }).toEqual({ checkpointsWithin3s: true, waited: true });
});
