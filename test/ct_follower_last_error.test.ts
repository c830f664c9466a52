/**
 * GET /v1/ct/logs' `lastError` says why a log is skipped right now: a log that failed once and is then
 * read again (its position moving, answer after good answer) shows null from its first run written,
 * while it reads its backlog, not the old error until it has caught up.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { unreadableEntry as rawEntry } from "./support/ct_log_tree.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("a log read again after one failed answer shows lastError null while its position moves", async () => {
  world = await startCtWorld({ logs: [{ kind: "rfc6962", batchLimit: 8 }], ctFollower: { runEntries: 8, fetchesPerLog: 1 } });
  const w = world;
  const log = w.logs[0]!;
  await w.caughtUp(0);
  // Teach the reader the log's batch size (8: it answers 8 of the 16 asked), so that the backlog below
  // is read in runs of 8.
  for (let i = 0; i < 16; i++) log.logRaw(rawEntry(i));
  w.publishAll();
  await w.caughtUp(16);

  // One failed get-sth, then a backlog read slowly: 25 runs of 8 entries, a few hundred ms each.
  log.intercept({ status: 500, body: "oops" }, { match: /get-sth/ });
  for (let i = 16; i < 216; i++) log.logRaw(rawEntry(i));
  log.delayMs = 60;
  w.publishAll();
  await w.until("the failure shown", async () => (await w.ctLogs())[0]?.lastError);
  const reading = await w.until("the backlog being read", async () => {
    const shown = (await w.ctLogs())[0];
    return shown && shown.position > 40 && shown.position < 200 ? shown : null;
  });
  // The log has answered dozens of requests since its one failure and is being followed.
  expect({ position: reading.position > 40, lastError: reading.lastError }).toEqual({ position: true, lastError: null });
}, 30_000);
