/**
 * Benchmark (b): the API's reads as users run them. certkeeper is started the way `npm start` starts
 * it (`bun adapters/cli/main.ts serve`), in a process of its own, at the default log level (info: one
 * line per request) with its output redirected to a file, on the embedded libSQL database. An owner
 * key made with the CLI, 200 certificates added through the API (each checked against a local TLS
 * server in another process, as the tests do), then wrk in a third process, one thread and 64
 * connections, rotating over the 200 ids. The floor is a bare Elysia server in a process of its own
 * answering the same bodies from memory. Both are measured one after the other, `--runs` times (a
 * floor then certkeeper each time: the machine's own pace moves between runs, by a third and more on a
 * shared machine, so each ratio is taken within its run and the median of the runs is printed last):
 *
 *   GET /v1/certificates/{id}         rotating over the 200 certificates (target >= 0.5x, p99 <= 4x the floor's)
 *   GET /v1/certificates?limit=100    the first page (target >= 0.2x)
 *
 * Prints requests per second, p50/p99/max latency, the ratios to the floor and the CPU time the server
 * process spent per request (from /proc/<pid>/stat), which carries over between machines better
 * than a rate.
 *
 *   bun bench/api_get.ts [--connections 64] [--seconds 5] [--runs 5] [--log-level info] [--profile DIR]
 *
 * With `--profile DIR` the server runs under Bun's CPU profiler (`--cpu-prof-md`), only certkeeper is
 * loaded, and the profile (Markdown, hottest functions first) is written to DIR when it stops; `--only get`
 * or `--only list` profiles one of the two loads.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { benchWorkspace, ROOT } from "./support/workspace.ts";
import { runWrk, type LoadResult } from "./support/wrk.ts";

const { values } = parseArgs({
  options: {
    connections: { type: "string", default: "64" },
    seconds: { type: "string", default: "5" },
    runs: { type: "string", default: "5" },
    // Unset: certkeeper's default (info). Pass warn to see what the request lines cost.
    "log-level": { type: "string" },
    profile: { type: "string" },
    only: { type: "string" },
  },
});
const connections = Number(values.connections);
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const CERTIFICATES = 200;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
const DOMAIN = "bench.certkeeper.test";

const workspace = benchWorkspace("certkeeper-bench-api-");
const { dir, cleanup, spawnReporting } = workspace;

try {
  // The TLS server the 200 certificates live on (one wildcard certificate, 200 names).
  const tls = await spawnReporting([process.execPath, join(ROOT, "bench/support/tls_server.ts")]);
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, tls.info.rootPem);

  const env = workspace.serverEnv({ domain: DOMAIN, caFile }, values["log-level"] ? { CERTKEEPER_LOG_LEVEL: values["log-level"] } : {});

  const key = await workspace.benchKey(env);
  // certkeeper as `npm start` runs it, its output to a file as `npm start > certkeeper.log` would.
  const profiler = values.profile ? ["--cpu-prof-md", `--cpu-prof-dir=${resolve(values.profile)}`] : [];
  const { child: server, base } = await workspace.serve(env, { profiler });

  const headers = { authorization: `Bearer ${key}` };
  const ids: string[] = [];
  for (let start = 0; start < CERTIFICATES; start += 20) {
    const added = await Promise.all(
      Array.from({ length: Math.min(20, CERTIFICATES - start) }, async (_, i) => {
        const response = await fetch(`${base}/v1/certificates`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ domain: `c${start + i}.${DOMAIN}`, port: tls.info.port }),
        });
        if (response.status !== 201) throw new Error(`adding a certificate answered ${response.status}: ${await response.text()}`);
        return ((await response.json()) as { data: { id: string } }).data.id;
      }),
    );
    ids.push(...added);
  }
  const bodies: Record<string, unknown> = {};
  for (const id of ids) bodies[id] = await (await fetch(`${base}/v1/certificates/${id}`, { headers })).json();
  const page = await (await fetch(`${base}/v1/certificates?limit=100`, { headers })).json();
  const bodiesPath = join(dir, "bodies.json");
  writeFileSync(bodiesPath, JSON.stringify({ bodies, page }));
  const bare = await spawnReporting([process.execPath, join(ROOT, "bench/support/bare_server.ts"), bodiesPath]);
  const bareBase = `http://127.0.0.1:${bare.info.port}`;

  const targets = {
    get: ids.map((id) => `/v1/certificates/${id}`),
    list: ["/v1/certificates?limit=100"],
  };
  const load = (which: "certkeeper" | "bare", paths: string[], secs: number) =>
    runWrk({
      base: which === "certkeeper" ? base : bareBase,
      paths,
      headers: which === "certkeeper" ? headers : {},
      connections,
      seconds: secs,
      pid: which === "certkeeper" ? server.pid : bare.child.pid,
      scriptPath: join(dir, "load.lua"),
    });

  if (values.profile) {
    for (const [name, paths] of Object.entries(targets)) {
      if (values.only && values.only !== name) continue;
      const r = await load("certkeeper", paths, seconds);
      console.log(`${paths.length} path(s): ${Math.round(r.requestsPerSecond)} req/s, ${Math.round(r.cpuUsPerRequest)} µs CPU/request`);
    }
    server.kill("SIGTERM");
    await server.exited;
    console.log(`profile written to ${resolve(values.profile)}`);
    cleanup();
    process.exit(0);
  }

  // Warm both up (JIT, caches), then measure each alone, the floor first, `runs` times.
  for (const paths of Object.values(targets)) {
    await load("bare", paths, 2);
    await load("certkeeper", paths, 2);
  }
  const results: Record<keyof typeof targets, Array<{ floor: LoadResult; measured: LoadResult }>> = { get: [], list: [] };
  for (let run = 0; run < runs; run++) {
    for (const [name, paths] of Object.entries(targets) as Array<[keyof typeof targets, string[]]>) {
      const floor = await load("bare", paths, seconds);
      const measured = await load("certkeeper", paths, seconds);
      results[name].push({ floor, measured });
    }
  }

  const num = (n: number, width: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }).padStart(width);
  const row = (label: string, r: LoadResult) =>
    `  ${label.padEnd(11)} ${num(r.requestsPerSecond, 8)} req/s   p50 ${num(r.p50Ms, 6, 2)} ms   p99 ${num(r.p99Ms, 6, 2)} ms   max ${num(r.maxMs, 6, 1)} ms   ` +
    `CPU ${num(r.cpuUsPerRequest, 4)} µs/request${r.non2xx + r.errors > 0 ? `   non-2xx ${r.non2xx}, errors ${r.errors}` : ""}`;
  const level = values["log-level"] ?? "info (default)";
  console.log(`certkeeper serve (own process, log level ${level}, logs to a file) vs bare Elysia (own process)`);
  console.log(`wrk -t1 -c${connections}, ${seconds} s each, ${CERTIFICATES} certificates, ${runs} run(s)\n`);
  const titles = {
    get: `GET /v1/certificates/{id}, rotating over ${CERTIFICATES} ids   (target >= 0.5x, p99 <= 4x the floor's)`,
    list: "GET /v1/certificates?limit=100   (target >= 0.2x)",
  };
  for (const name of Object.keys(targets) as Array<keyof typeof targets>) {
    console.log(titles[name]);
    results[name].forEach(({ floor, measured }, run) => {
      console.log(`run ${run + 1}`);
      console.log(row("bare Elysia", floor));
      console.log(row("certkeeper", measured));
      console.log(`  ratio ${(measured.requestsPerSecond / floor.requestsPerSecond).toFixed(2)}x, p99 ${(measured.p99Ms / floor.p99Ms).toFixed(1)}x the floor's`);
    });
    const runsOf = results[name];
    const ratios = runsOf.map(({ floor, measured }) => measured.requestsPerSecond / floor.requestsPerSecond);
    const p99s = runsOf.map(({ floor, measured }) => measured.p99Ms / floor.p99Ms);
    const cpu = runsOf.map(({ measured }) => measured.cpuUsPerRequest);
    const floorCpu = runsOf.map(({ floor }) => floor.cpuUsPerRequest);
    console.log(
      `median of ${runsOf.length} runs: ratio ${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}), ` +
        `p99 ${median(p99s).toFixed(1)}x the floor's, CPU ${Math.round(median(cpu))} µs/request against ${Math.round(median(floorCpu))}`,
    );
    console.log("");
  }
} finally {
  cleanup();
}
process.exit(0);
