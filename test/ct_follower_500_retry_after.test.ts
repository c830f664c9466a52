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
  // The failed request, then at least one more within 3 s (looked for until then, not slept through).
  const checkpoints = () => log.requests.slice(asked).filter((path) => path === "checkpoint").length;
  while (checkpoints() < 2 && Date.now() - failedAt < 3000) await Bun.sleep(20);
  expect({ checkpointsWithin3s: checkpoints() >= 2 }).toEqual({ checkpointsWithin3s: true });
});
