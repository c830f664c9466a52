/**
 * Paced HTTP load in a process of its own, for bench/load.ts: `--connections` keep-alive connections,
 * each sending its share of `--rate` requests a second at fixed times (a request goes out at its time
 * even when the one before is late, on another connection of the pool), cycling through the paths in
 * the JSON file `--paths` (an array of strings, or of [path, weight] pairs). Runs `--seconds`, then
 * prints one JSON line: requests sent and answered, their latencies (p50, p99, max, in ms, from the
 * moment each was sent), non-2xx answers and errors.
 *
 *   bun bench/support/paced_load.ts --base http://127.0.0.1:3000 --paths paths.json --rate 80 --connections 4 --seconds 30 [--header "authorization: Bearer …"]
 */
import http from "node:http";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    paths: { type: "string" },
    rate: { type: "string", default: "80" },
    connections: { type: "string", default: "4" },
    seconds: { type: "string", default: "30" },
    header: { type: "string", multiple: true, default: [] },
  },
});
const base = new URL(values.base!);
const rate = Number(values.rate);
const connections = Number(values.connections);
const seconds = Number(values.seconds);
const headers = Object.fromEntries(values.header!.map((line) => [line.slice(0, line.indexOf(":")).trim(), line.slice(line.indexOf(":") + 1).trim()]));

// Weighted paths, spread evenly: a path of weight 3 comes three times in each round of the list.
const listed = JSON.parse(readFileSync(values.paths!, "utf8")) as Array<string | [string, number]>;
const paths: string[] = [];
for (const entry of listed) {
  const [path, weight] = typeof entry === "string" ? [entry, 1] : entry;
  for (let i = 0; i < weight; i++) paths.push(path);
}
for (let i = paths.length - 1; i > 0; i--) {
  const j = Math.floor(Math.random() * (i + 1));
  [paths[i], paths[j]] = [paths[j]!, paths[i]!];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const latencies: number[] = [];
let sent = 0;
let non2xx = 0;
let errors = 0;

function request(path: string): Promise<void> {
  const started = performance.now();
  sent++;
  return new Promise((resolve) => {
    const req = http.request({ host: base.hostname, port: base.port, path, headers, agent }, (res) => {
      res.resume();
      res.on("end", () => {
        latencies.push(performance.now() - started);
        if (res.statusCode! < 200 || res.statusCode! >= 300) non2xx++;
        resolve();
      });
      res.on("error", () => {
        errors++;
        resolve();
      });
    });
    req.on("error", () => {
      errors++;
      resolve();
    });
    req.end();
  });
}

const interval = 1000 / rate;
const start = performance.now();
const end = start + seconds * 1000;
const inFlight = new Set<Promise<void>>();
let next = start;
let n = 0;
while (next < end) {
  const wait = next - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  // Every request whose time has come goes out now: a late timer does not lower the rate.
  while (next <= performance.now() && next < end) {
    const pending = request(paths[n++ % paths.length]!);
    inFlight.add(pending);
    void pending.then(() => inFlight.delete(pending));
    next += interval;
  }
}
await Promise.all(inFlight);
agent.destroy();

latencies.sort((a, b) => a - b);
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil(p * latencies.length) - 1))] ?? 0;
console.log(
  JSON.stringify({
    sent,
    answered: latencies.length,
    seconds: (performance.now() - start) / 1000,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: latencies.at(-1) ?? 0,
    non2xx,
    errors,
  }),
);
process.exit(0);
