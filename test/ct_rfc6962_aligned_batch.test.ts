/**
 * An RFC 6962 log that cuts its answers at page boundaries (pages of 256) is read in its pages after a
 * round that started 2 entries before a page end: the short answer of 2 is alignment, and the full
 * answers after it teach the batch, which only grows. A backlog is not read 2 entries a request.
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

test("a log with aligned pages of 256 entries is not read 2 entries a request after one round started 2 before a page end", async () => {
  world = await startCtWorld({ logs: [{ kind: "rfc6962", batchLimit: 256 }] });
  const w = world;
  const log = w.logs[0]!;
  await w.caughtUp(0);
  let n = 0;
  // The follower's position lands 2 entries before a page boundary (254 = 256 - 2).
  for (; n < 254; n++) log.logRaw(rawEntry(n));
  w.publishAll();
  await w.caughtUp(254);
  // A backlog round starting there: its first answer is cut at 256 (2 entries), the rest in full.
  for (; n < 854; n++) log.logRaw(rawEntry(n));
  w.publishAll();
  await w.caughtUp(854);

  // Another backlog of 256 entries: in the log's own pages, 2 or 3 requests.
  const before = log.requests.length;
  for (; n < 1110; n++) log.logRaw(rawEntry(n));
  w.publishAll();
  await w.caughtUp(1110);
  const getEntries = log.requests.slice(before).filter((path) => path.startsWith("ct/v1/get-entries"));
  expect(getEntries.length).toBeLessThanOrEqual(8);
}, 60_000);
