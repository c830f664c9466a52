/**
 * A static-ct-api log read from a position in the middle of a tile (CONTRACT §21: partial tiles only at
 * the tree's end): however the backlog is split into requests, every data tile asked for below the
 * tree's last tile is a full one; the only partial tile asked for is the tree's last.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { unreadableEntry } from "./support/ct_log_tree.ts";
import { tileIndexPath } from "../core/ctlogs/tile_reader.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("a backlog of 4,200 entries read from mid-tile asks for full data tiles, and a partial tile only at the tree's end", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled", gzip: false }], start: false });
  const w = world;
  const log = w.logs[0]!;
  // First seen at 10: followed from there, the 10th entry being in the middle of tile 0.
  for (let i = 0; i < 10; i++) log.logRaw(unreadableEntry(i));
  w.publishAll();
  w.start();
  await w.caughtUp(10);
  const asked = log.requests.length;
  for (let i = 10; i < 4210; i++) log.logRaw(unreadableEntry(i));
  w.publishAll();
  await w.caughtUp(4210);
  const dataTiles = log.requests.slice(asked).filter((path) => path.startsWith("tile/data/"));
  const partials = dataTiles.filter((path) => path.includes(".p/"));
  // 4210 = 16 full tiles and 114 entries: tile 16, partial of width 114, is the only partial there is.
  expect([...new Set(partials)]).toEqual([`tile/data/${tileIndexPath(16)}.p/114`]);
  expect(new Set(dataTiles).size).toBe(17);
}, 30_000);
