/**
 * A log that fails and answers again (CONTRACT §21): GET /v1/ct/logs' lastError says why a log is
 * skipped right now, so it is cleared as soon as the log answers again, even with nothing new to read;
 * and errors are backed off per failure streak: once the log answered, a new failure starts again from
 * the first backoff, not from where the last streak's doubling stopped.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("a log that failed on its head and then answers the same head again shows lastError null (nothing new to read)", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  const log = w.logs[0]!;
  await w.issue({ dnsNames: ["steady.example"] });
  w.publishAll();
  await w.caughtUp(1);
  log.intercept({ status: 500, body: "oops" }, { match: /^checkpoint$/ });
  const failed = await w.until("the failure shown", async () => (await w.ctLogs())[0]?.lastError);
  expect(failed).toBe(`${log.url}checkpoint answered HTTP 500`);
  // The log answers again, with the head already read: nothing more to read, and nothing is wrong.
  const shown = await w.until("lastError cleared", async () => {
    const now = (await w.ctLogs())[0];
    return now?.lastError === null ? now : null;
  }, 5_000);
  expect(shown).toMatchObject({ treeSize: 1, position: 1, lastError: null });
});

test("after a log answered again, its next failure is backed off from the first backoff, not the last streak's", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  const log = w.logs[0]!;
  await w.caughtUp(0);
  // A streak of 5 failures (waits of 100, 200, 400, 800 and 1600 ms in this world), then answers.
  log.intercept({ status: 500, body: "oops" }, { match: /^checkpoint$/, times: 5 });
  await w.issue({ dnsNames: ["streak.example"] });
  w.publishAll();
  await w.caughtUp(1);
  await w.until("lastError cleared", async () => ((await w.ctLogs())[0]?.lastError === null ? true : null));
  // One more failure: the log is asked again after the first backoff (100 ms), not 3.2 s later; the
  // heads read around it come every 100 ms (the head interval here).
  const asked = log.requests.length;
  log.intercept({ status: 500, body: "oops" }, { match: /^checkpoint$/ });
  const heads = await w.until("the failure and the heads read after it", async () => {
    const times = log.requestTimes.filter((_, i) => i >= asked && log.requests[i] === "checkpoint");
    return times.length >= 4 ? times : null;
  }, 10_000);
  const gaps = heads.slice(1).map((t, i) => t - heads[i]!);
  expect(gaps.every((gap) => gap < 1500)).toBe(true);
  expect(log.intercepts).toEqual([]);
});
