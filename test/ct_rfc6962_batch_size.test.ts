/**
 * An RFC 6962 log's batch size is learned from the answers it cuts short (it answers at most its
 * batch): a round that finds only a few new entries, asked and answered in full, says nothing of it.
 * A log that once grew by 2 entries is read afterwards in its own batches (64 here), not 2 at a time.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { unreadableEntry as rawEntry } from "./support/ct_log_tree.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("a log that once grew by 2 entries is read 64 at a time afterwards (its limit), not 2 at a time", async () => {
  world = await startCtWorld({ logs: [{ kind: "rfc6962", batchLimit: 64 }] });
  const w = world;
  const log = w.logs[0]!;
  await w.caughtUp(0);
  // A quiet moment: the log grows by two entries, both answered at once.
  log.logRaw(rawEntry(0));
  log.logRaw(rawEntry(1));
  w.publishAll();
  await w.caughtUp(2);

  // A backlog of 256 entries; the log answers up to 64 per get-entries.
  const before = log.requests.length;
  for (let i = 2; i < 258; i++) log.logRaw(rawEntry(i));
  w.publishAll();
  await w.caughtUp(258);
  const getEntries = log.requests.slice(before).filter((path) => path.startsWith("ct/v1/get-entries"));
  // 256 entries at up to 64 an answer: 4 requests (a few more at most), not 128.
  expect(getEntries.length).toBeLessThanOrEqual(8);
});
