/**
 * Review (docs/ct-logs.md, failure modes): a log answering fewer entries than asked is "read on from
 * where it stopped (its batch size is learned)". The RFC 6962 reader takes the most entries one answer
 * held as the log's batch size, and never asks for more than that again: a log whose head grew by a few
 * entries in one round answers all of them (it was asked no more), and from then on every get-entries
 * asks for that few, however large the log's real batch limit and the backlog.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { uintBytes, vector } from "./support/ct_log_tree.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function rawEntry(i: number): Buffer {
  return Buffer.concat([uintBytes(Date.now(), 8), uintBytes(0, 2), vector(Buffer.from(`not a certificate ${i}`), 3), vector(Buffer.alloc(0), 2)]);
}

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
