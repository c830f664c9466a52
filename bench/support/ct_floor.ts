/**
 * The floor of bench:ct, in a process of its own: a bare loop over the same logs (the `floor` list of
 * bench/support/ct_logs.ts) that fetches and decodes the same entries the follower reads, with the same
 * readers, requests in flight per log and fetcher, decoded on the event loop against the same 10,000
 * watched domains, and does nothing else: no verification, no matching, no database. Prints
 * `{ entries, seconds, cpuSeconds, idleRssMb, maxRssMb }` (its resident memory before reading, and at
 * its most while reading).
 *
 *   bun bench/support/ct_floor.ts <list.json> <entries per log> <watches>
 */
import { readFileSync } from "node:fs";
import { parseLogList, Rfc6962Reader, TileReader, type LogReader } from "../../core/ctlogs/mod.ts";
import { TrustStore } from "../../core/tls/mod.ts";
import { createHttpFetcher } from "../../adapters/notify/mod.ts";

const [listPath, sizeText, watchesText] = process.argv.slice(2);
const size = Number(sizeText);
const watches = { version: "bench", domains: new Set(Array.from({ length: Number(watchesText) }, (_, i) => `w${i}.bench.example`)) };
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
const http = { fetcher, timeoutMs: 30_000 };
const FETCHES_PER_LOG = 4;

async function drain(reader: LogReader): Promise<number> {
  const head = await reader.head();
  let read = 0;
  let next = 0;
  let planned: Array<[number, number]> = [];
  const inFlight: Array<Promise<{ decoded: { from: number; to: number } }>> = [];
  const fill = () => {
    while (inFlight.length < FETCHES_PER_LOG) {
      if (planned.length === 0) {
        if (next >= head.size) return;
        planned = reader.chunks(next, Math.min(head.size, next + 4096));
        next = planned.at(-1)![1];
      }
      const [start, end] = planned.shift()!;
      inFlight.push(reader.entries(start, end, head, watches));
    }
  };
  fill();
  while (inFlight.length > 0) {
    const { decoded } = await inFlight.shift()!;
    read += decoded.to - decoded.from;
    fill();
  }
  return read;
}

const { logs } = parseLogList(readFileSync(listPath!, "utf8"));
const idleRss = process.memoryUsage().rss;
let maxRss = idleRss;
const sampling = setInterval(() => (maxRss = Math.max(maxRss, process.memoryUsage().rss)), 50);
const cpuBefore = process.cpuUsage();
const started = performance.now();
const counts = await Promise.all(logs.map((spec) => drain(spec.kind === "rfc6962" ? new Rfc6962Reader(spec, http) : new TileReader(spec, http))));
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
clearInterval(sampling);
if (counts.some((count) => count !== size)) throw new Error(`the floor read ${counts.join(", ")} entries, not ${size} per log`);
console.log(JSON.stringify({ entries: counts.reduce((a, b) => a + b, 0), seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, idleRssMb: idleRss / 1048576, maxRssMb: maxRss / 1048576 }));
await fetcher.close();
