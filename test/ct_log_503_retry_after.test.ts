/**
 * A log that is overloaded answers 503 Service Unavailable with Retry-After (RFC 9110 §10.2.3, as 429):
 * the follower waits it out before asking the log again (CONTRACT §21: Retry-After honoured per log),
 * instead of the first backoff of other errors.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("a 503 with Retry-After: 2 on the checkpoint is waited out before the log is asked again", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  const log = w.logs[0]!;
  await w.caughtUp(0);
  const asked = log.requests.length;
  log.intercept({ status: 503, headers: { "retry-after": "2" }, body: "overloaded" }, { match: /^checkpoint$/ });
  await w.issue({ dnsNames: ["busy.example"] });
  w.publishAll();
  const shown = await w.until("the 503", async () => (await w.ctLogs())[0]?.lastError);
  expect(shown).toBe(`${log.url}checkpoint asked to slow down (HTTP 503)`);
  await w.caughtUp(1);
  const heads = log.requestTimes.filter((_, i) => i >= asked && log.requests[i] === "checkpoint");
  const gaps = heads.slice(1).map((t, i) => t - heads[i]!);
  // One of the gaps is the wait after the 503: at least its 2 s.
  expect(Math.max(...gaps)).toBeGreaterThanOrEqual(2000);
});
