/**
 * Hash tiles are kept for reuse, but not one that led to a wrong root: a full hash tile that arrives
 * once with the right length and wrong bytes (a bad cache or proxy in front of the log, a passing
 * fault) is read again at the next try, so a tile log that answers honestly again is followed again
 * without a restart.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { uintBytes } from "./support/ct_log_tree.ts";

setDefaultTimeout(60_000);
let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** A TimestampedEntry whose certificate is not one (matches nothing, still a leaf of the tree). */
const rawEntry = () => Buffer.concat([uintBytes(Date.now(), 8), uintBytes(0, 2), uintBytes(1, 3), Buffer.from([0x30]), uintBytes(0, 2)]);

test("one corrupted full hash tile does not keep a tile log refused once it answers honestly again", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  await w.caughtUp(0);
  const log = w.logs[0]!;
  log.logRaw(rawEntry());
  log.publish();
  await w.caughtUp(1);
  for (let i = 1; i < 300; i++) log.logRaw(rawEntry());
  // The proof that 300 extends 1 needs the full level-0 tile 0: it comes once with wrong bytes.
  log.intercept({ status: 200, headers: { "content-type": "application/octet-stream" }, body: randomBytes(256 * 32) }, { match: /^tile\/0\/000$/, times: 1 });
  log.publish();
  const refused = await w.until("the bad tile refused", async () => (await w.ctLogs()).find((l) => l.lastError));
  console.log(`refused: ${refused.lastError}`);
  // From now on the log answers honestly: it should be read on to 300.
  expect(log.intercepts.length).toBe(0);
  let caught: unknown = null;
  try {
    await w.caughtUp(300);
  } catch (error) {
    caught = error;
  }
  const tileRequests = log.requests.filter((r) => r === "tile/0/000").length;
  console.log(`tile/0/000 asked ${tileRequests} time(s); after 15 s: ${JSON.stringify(await w.ctLogs())}`);
  expect(caught).toBeNull();
});
