/**
 * Benchmark: the API's tail under a moderate mixed load, as users run certkeeper. The server is
 * started the way `npm start` starts it (`bun adapters/cli/main.ts serve`), in a process of its own,
 * at the default log level with its output in a file, on the embedded libSQL database, its checks
 * every 10 s (CERTKEEPER_CHECK_INTERVAL). Then, each in a process of its own:
 *
 * - 500 certificates on a local TLS server, re-checked every 10 s: 50 checks a second;
 * - API traffic at `--rate` (890) requests a second from 32 keep-alive connections, paced (each request
 *   at its time, late or not): GET of one certificate 70 %, the first page of the list 10 %, the list
 *   filtered by status 5 %, the summary 5 %, the events 10 %;
 * - a probe: 80 GETs of one certificate a second on connections of its own, whose latency is the figure.
 *
 * The floor is a bare Elysia server in a process of its own, answering the same GETs with the bodies
 * certkeeper gave, from memory, under the same traffic and probe (no checks). Printed for each, `--runs`
 * times: the probe's p50, p99 and max; the traffic and check rates reached; the server's CPU.
 * Goals: certkeeper's probe p99 <= 10 ms and max <= 50 ms.
 *
 *   bun bench/load.ts [--seconds 30] [--runs 1] [--rate 890] [--certificates 500] [--profile DIR]
 *
 * With `--profile DIR` certkeeper runs under Bun's CPU profiler (`--cpu-prof`, the JSON format with a
 * timestamp per sample) and the profile is written to DIR when it stops; the floor is skipped.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { benchWorkspace, ROOT } from "./support/workspace.ts";
import { cpuSeconds } from "./support/wrk.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "30" },
    runs: { type: "string", default: "1" },
    rate: { type: "string", default: "890" },
    certificates: { type: "string", default: "500" },
    profile: { type: "string" },
  },
});
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const rate = Number(values.rate);
const CERTIFICATES = Number(values.certificates);
const CHECK_INTERVAL_S = 10;
const PROBE_RATE = 80;
const DOMAIN = "bench.certkeeper.test";
const METRICS_TOKEN = "bench-metrics-token-0123456789";

const workspace = benchWorkspace("certkeeper-bench-load-");
const { dir, cleanup, spawnReporting } = workspace;

interface Paced {
  sent: number;
  answered: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
}

/** Runs bench/support/paced_load.ts to its end: its summary line. */
async function paced(
  base: string,
  paths: Array<string | [string, number]>,
  options: { rate: number; connections: number; headers: Record<string, string>; name: string; seconds: number },
): Promise<Paced> {
  const pathsFile = join(dir, `${options.name}.json`);
  writeFileSync(pathsFile, JSON.stringify(paths));
  const header = Object.entries(options.headers).flatMap(([name, value]) => ["--header", `${name}: ${value}`]);
  const child = Bun.spawn(
    [process.execPath, join(ROOT, "bench/support/paced_load.ts"), "--base", base, "--paths", pathsFile, "--rate", String(options.rate), "--connections", String(options.connections), "--seconds", String(options.seconds), ...header],
    { stdout: "pipe", stderr: "inherit" },
  );
  workspace.track(child);
  const out = await new Response(child.stdout).text();
  return JSON.parse(out.trim().split("\n").at(-1)!) as Paced;
}

try {
  const tls = await spawnReporting([process.execPath, join(ROOT, "bench/support/tls_server.ts")]);
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, tls.info.rootPem);

  const env = workspace.serverEnv({ domain: DOMAIN, caFile }, { CERTKEEPER_CHECK_INTERVAL: `${CHECK_INTERVAL_S}s`, CERTKEEPER_METRICS_TOKEN: METRICS_TOKEN });

  const headers = { authorization: `Bearer ${await workspace.benchKey(env)}` };
  const profiler = values.profile ? ["--cpu-prof", `--cpu-prof-dir=${resolve(values.profile)}`] : [];
  const { child: server, base } = await workspace.serve(env, { profiler });

  // The certificates, in one import.
  const imported = await fetch(`${base}/v1/imports`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ certificates: Array.from({ length: CERTIFICATES }, (_, i) => ({ domain: `c${i}.${DOMAIN}`, port: tls.info.port })) }),
  });
  if (imported.status !== 202) throw new Error(`the import answered ${imported.status}: ${await imported.text()}`);
  const importId = ((await imported.json()) as { data: { id: string } }).data.id;
  for (;;) {
    const state = ((await (await fetch(`${base}/v1/imports/${importId}`, { headers })).json()) as { data: { status: string; created: number; failed: number } }).data;
    if (state.status === "finished") {
      if (state.created !== CERTIFICATES) throw new Error(`the import created ${state.created} certificates, ${state.failed} failed`);
      break;
    }
    await Bun.sleep(250);
  }
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = (await (await fetch(`${base}/v1/certificates?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { headers })).json()) as { data: Array<{ id: string }>; meta: { nextCursor: string | null } };
    ids.push(...page.data.map((certificate) => certificate.id));
    cursor = page.meta.nextCursor;
  } while (cursor);

  const gets = ids.map((id) => `/v1/certificates/${id}`);
  const share = (percent: number) => Math.max(1, Math.round((gets.length * percent) / 70));
  const traffic: Array<string | [string, number]> = [
    ...gets,
    ["/v1/certificates?limit=100", share(10)],
    ["/v1/certificates?status=expiring,valid&limit=100", share(5)],
    ["/v1/certificates/summary", share(5)],
    ["/v1/events?limit=50", share(10)],
  ];

  const checksTotal = async () => {
    const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    return text
      .split("\n")
      .filter((line) => line.startsWith("certkeeper_checks_total"))
      .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
  };

  /** The traffic and the probe together against `target`: the probe's figures, the traffic's, and the checks and CPU meanwhile. */
  const measure = async (target: string, pid: number, withChecks: boolean, secs = seconds) => {
    const checksBefore = withChecks ? await checksTotal() : 0;
    const cpuBefore = cpuSeconds(pid);
    const [load, probe] = await Promise.all([
      paced(target, traffic, { rate, connections: 32, headers, name: "traffic", seconds: secs }),
      paced(target, gets, { rate: PROBE_RATE, connections: 8, headers, name: "probe", seconds: secs }),
    ]);
    const cpu = cpuSeconds(pid) - cpuBefore;
    const checks = withChecks ? (await checksTotal()) - checksBefore : 0;
    return { load, probe, checksPerSecond: checks / load.seconds, cpuPercent: (100 * cpu) / load.seconds };
  };

  // Every certificate has been checked once: the re-checks run every 10 s from now on. Warm up a round.
  await measure(base, server.pid, true, CHECK_INTERVAL_S);
  if (values.profile) {
    const r = await measure(base, server.pid, true);
    console.log(`probe p50 ${r.probe.p50Ms.toFixed(2)} ms, p99 ${r.probe.p99Ms.toFixed(2)} ms, max ${r.probe.maxMs.toFixed(1)} ms; ${r.checksPerSecond.toFixed(1)} checks/s`);
    server.kill("SIGTERM");
    await server.exited;
    console.log(`profile written to ${resolve(values.profile)}`);
    cleanup();
    process.exit(0);
  }

  const bodies: Record<string, unknown> = {};
  for (const id of ids) bodies[id] = await (await fetch(`${base}/v1/certificates/${id}`, { headers })).json();
  const page = await (await fetch(`${base}/v1/certificates?limit=100`, { headers })).json();
  const bodiesPath = join(dir, "bodies.json");
  writeFileSync(bodiesPath, JSON.stringify({ bodies, page }));
  const bare = await spawnReporting([process.execPath, join(ROOT, "bench/support/bare_server.ts"), bodiesPath]);
  const bareBase = `http://127.0.0.1:${bare.info.port}`;
  await measure(bareBase, bare.child.pid, false, 5);

  const num = (n: number, width: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }).padStart(width);
  const row = (label: string, r: Awaited<ReturnType<typeof measure>>) =>
    `  ${label.padEnd(11)} probe p50 ${num(r.probe.p50Ms, 6, 2)} ms   p99 ${num(r.probe.p99Ms, 6, 2)} ms   max ${num(r.probe.maxMs, 6, 1)} ms   ` +
    `traffic ${num(r.load.answered / r.load.seconds, 5)} req/s (p99 ${num(r.load.p99Ms, 6, 1)} ms)   ${r.checksPerSecond ? `${num(r.checksPerSecond, 4, 1)} checks/s   ` : ""}` +
    `CPU ${num(r.cpuPercent, 3)} %` +
    (r.probe.non2xx + r.probe.errors + r.load.non2xx + r.load.errors > 0 ? `   non-2xx ${r.probe.non2xx + r.load.non2xx}, errors ${r.probe.errors + r.load.errors}` : "");
  console.log(`certkeeper serve (own process, default log level, logs to a file) vs bare Elysia (own process)`);
  console.log(
    `${CERTIFICATES} certificates re-checked every ${CHECK_INTERVAL_S} s; traffic ${rate} req/s from 32 connections; probe ${PROBE_RATE} GET/s; ${seconds} s each, ${runs} run(s)`,
  );
  console.log(`goal: certkeeper's probe p99 <= 10 ms, max <= 50 ms\n`);
  for (let run = 0; run < runs; run++) {
    const floor = await measure(bareBase, bare.child.pid, false);
    const measured = await measure(base, server.pid, true);
    console.log(`run ${run + 1}`);
    console.log(row("bare Elysia", floor));
    console.log(row("certkeeper", measured));
  }
} finally {
  cleanup();
}
process.exit(0);
