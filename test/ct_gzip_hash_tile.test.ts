/**
 * A hash tile is bounded at 8 KiB once decompressed, with room on the wire for what gzip adds: a full
 * hash tile (8,192 random bytes, which gzip cannot shrink: about 8,215 bytes gzipped) from a tile log
 * or the CDN in front of it that answers gzip is read, and the log followed.
 */
import { afterEach, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("a tile log whose full hash tile comes gzip-encoded (8 KiB of hashes, a few bytes more gzipped) is still followed", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  const log = w.logs[0]!;
  await w.caughtUp(0);
  // Entries are filled with one certificate logged again and again (as a log may hold duplicates), and
  // a few issued ones between: what is read is tiles, whatever they hold.
  const filler = await w.issue({ dnsNames: ["filler.gz.example"], logs: [] });
  const fill = (until: number) => {
    while (log.entries.length < until) log.logCertificate(filler.certificate.rawData, filler.chain);
  };
  fill(295);
  for (let i = 0; i < 5; i++) await w.issue({ dnsNames: [`n${i}.gz.example`] });
  w.publishAll();
  const size1 = log.entries.length;
  await w.caughtUp(size1);
  fill(3 * 256 - 5);
  for (let i = 5; i < 10; i++) await w.issue({ dnsNames: [`n${i}.gz.example`] });
  w.publishAll();
  const size2 = log.entries.length;
  expect(Math.floor(size1 / 256)).toBeLessThan(Math.floor(size2 / 256)); // a full tile exists past the position
  // Every full hash tile is answered gzip-encoded (a compressing CDN): same hashes, Content-Encoding: gzip.
  const full = gzipSync(log.tree.hashTile(0, Math.floor(size1 / 256), 256));
  expect(full.length).toBeGreaterThan(8192);
  log.intercept(
    { status: 200, headers: { "content-encoding": "gzip", "content-type": "application/octet-stream" }, body: full },
    { match: new RegExp(`^tile/0/${String(Math.floor(size1 / 256)).padStart(3, "0")}$`), times: 1000 },
  );
  await w.caughtUp(size2);
  const listed = await w.ctLogs();
  expect(listed[0].lastError).toBeNull();
}, 60_000);
