/**
 * A data tile is bounded by its width as a get-entries answer is by its count: a 1-entry partial tile
 * that gunzips to 60 MiB is refused once 1 MiB is decompressed, not inflated in full first.
 */
import { expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { decodeChunk } from "../core/ctlogs/entry_decode.ts";

test("a 1-entry data tile that gunzips to 60 MiB is refused as too large before it is decompressed in full", () => {
  const bomb = gzipSync(Buffer.alloc(60 * 1024 * 1024), { level: 9 });
  expect(bomb.length).toBeLessThan(128 * 1024);
  let message = "";
  const started = performance.now();
  try {
    decodeChunk({ format: "tile", body: bomb, gzip: true, first: 0, width: 1 }, { version: "v", domains: new Set() });
  } catch (error) {
    message = (error as Error).message;
  }
  const elapsed = performance.now() - started;
  console.log(`refused after ${elapsed.toFixed(0)} ms: ${message}`);
  // 1 entry may not hold more than the 1 MiB a get-entries answer of 1 entry may.
  expect(message).toMatch(/more than 1048576 bytes once decompressed/);
});
