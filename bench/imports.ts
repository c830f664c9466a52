/**
 * Benchmark (d): importing 10,000 names served by a local TLS server (in a process of its own) with
 * POST /v1/imports, as users run it: certkeeper started as `npm start` starts it (`serve`, embedded
 * libSQL, default log level, its output in a file) in a process of its own, the import sent and
 * followed over HTTP from this one, from the 202 to `finished`. Beside it the floor, in this process:
 * certkeeper's first-check loop at the same concurrency (retrieve, parse and judge a name never seen,
 * the work an add does before storing), measured before and after. The import adds validation,
 * duplicate checks, plan limits and the writes (certificate, tags, item outcome, counters) of every
 * item. Meanwhile a paced probe reads one certificate (GET /v1/certificates/{id}, 50 a second): the p99
 * of each second of the import (their median and the worst) beside its p99 with the server idle.
 *
 *   bun bench/imports.ts [--items 10000] [--concurrency 16]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_CONFIG } from "../core/config/config.ts";
import { createCore } from "../core/app/create_core.ts";
import { silentLogger } from "../core/base/log.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { CheckThreads } from "../adapters/check_threads/mod.ts";
import { benchWorkspace, ROOT } from "./support/workspace.ts";
import { cpuShares, processThreadCpu, threadCpu, threadCpuSince } from "./support/thread_cpu.ts";
import { pacedLoad } from "./support/paced.ts";

const { values } = parseArgs({ options: { items: { type: "string", default: "10000" }, concurrency: { type: "string", default: "16" } } });
const items = Number(values.items);
const concurrency = Number(values.concurrency);
const DOMAIN = "bench.certkeeper.test";
const PROBE_RATE = 50;

const workspace = benchWorkspace("certkeeper-bench-imports-");
const { dir } = workspace;
try {
  const tls = await workspace.spawnReporting([process.execPath, join(ROOT, "bench/support/tls_server.ts")]);
  const { port, rootPem } = tls.info as { port: number; rootPem: string };
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, rootPem);

  // The floor, in this process: core's own first checks, with nothing stored.
  const threads = new CheckThreads(DEFAULT_CONFIG.checkThreads);
  const core = createCore({
    config: { ...DEFAULT_CONFIG, allowPrivateTargets: true, resolve: [{ pattern: `*.${DOMAIN}`, address: "127.0.0.1" }], logLevel: "error", checkConcurrency: concurrency },
    store: createMemoryStore(),
    logger: silentLogger,
    trust: new TrustStore([rootPem]),
    connector: threads,
  });
  /** First checks of `count` distinct names, `concurrency` at once: names per second. */
  const firstChecks = async (count: number, prefix: string): Promise<number> => {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          const n = next++;
          const outcome = await core.services.monitor.inspect({ domain: `${prefix}${n}.${DOMAIN}`, port });
          if (!outcome.ok) throw new Error(`a first check failed: ${outcome.message}`);
        }
      }),
    );
    return count / ((performance.now() - started) / 1000);
  };

  // certkeeper as users run it.
  const env = workspace.serverEnv({ domain: DOMAIN, caFile }, { CERTKEEPER_CHECK_CONCURRENCY: String(concurrency) });
  const headers = { authorization: `Bearer ${await workspace.benchKey(env)}` };
  const { child: server, base } = await workspace.serve(env);
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await response.json()) as { data: any };
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json.data;
  };
  // One certificate for the probe to read.
  const probed = await api("POST", "/v1/certificates", { domain: `probe.${DOMAIN}`, port });
  const probe = (seconds: number) => pacedLoad({ base, paths: [`/v1/certificates/${probed.id}`], headers, rate: PROBE_RATE, seconds });
  await probe(1); // warm-up
  const idle = await probe(3);

  await firstChecks(500, "warm"); // warm-up: JIT, connections, the TLS server
  // The floor before and after, averaged: on a shared machine the load drifts during a run.
  let cpu = threadCpu();
  const floorBefore = await firstChecks(items, "before");
  const floorCpu = cpuShares(threadCpuSince(cpu), items);

  /** POSTs an import of `count` names under `prefix`; its id. */
  const startImport = async (count: number, prefix: string): Promise<string> =>
    (await api("POST", "/v1/imports", { certificates: Array.from({ length: count }, (_, n) => ({ domain: `${prefix}${n}.${DOMAIN}`, port, tags: [`team:${n % 20}`] })) })).id;
  const finished = async (id: string) => {
    for (;;) {
      const record = (await api("GET", `/v1/imports/${id}`)) as { status: string; created: number; failed: number };
      if (record.status === "finished") return record;
      await Bun.sleep(50);
    }
  };
  // A warm-up import, as the floor's: a server that has been running has compiled its hot code.
  await finished(await startImport(500, "warm"));

  // The import: from the POST to `finished`, the probe reading meanwhile.
  const serverCpu = processThreadCpu(server.pid);
  const started = performance.now();
  const id = await startImport(items, "site");
  let done = false;
  const during = (async () => {
    const results = [];
    while (!done) results.push(await probe(1));
    return results;
  })();
  const record = await finished(id);
  const rate = items / ((performance.now() - started) / 1000);
  done = true;
  const probes = await during;
  const importCpu = cpuShares(threadCpuSince(serverCpu, processThreadCpu(server.pid)), items);
  const floorAfter = await firstChecks(items, "after");
  const floor = (floorBefore + floorAfter) / 2;
  const perSecond = probes.map((p) => p.p99Ms).sort((a, b) => a - b);
  const [p99Median, p99Worst] = [perSecond[Math.floor(perSecond.length / 2)]!, perSecond.at(-1)!];
  const errors = probes.reduce((sum, p) => sum + p.errors, idle.errors);

  console.log(`Importing ${items.toLocaleString("en")} names from one local TLS server, concurrency ${concurrency}; certkeeper serve in its own process`);
  console.log(`  first-check loop (floor)   ${floor.toFixed(0).padStart(6)} names/s   (${floorBefore.toFixed(0)} before, ${floorAfter.toFixed(0)} after)`);
  console.log(`  POST /v1/imports           ${rate.toFixed(0).padStart(6)} names/s   (${record.created.toLocaleString("en")} created, ${record.failed} failed)`);
  console.log(`  ratio ${(rate / floor).toFixed(2)}x   (target: >= 0.7x)`);
  console.log(`  CPU per name by thread (µs): certkeeper ${importCpu}; floor (before) ${floorCpu}`);
  console.log(
    `  GET /v1/certificates/{id} at ${PROBE_RATE}/s: p99 ${idle.p99Ms.toFixed(2)} ms idle (p50 ${idle.p50Ms.toFixed(2)}), ` +
      `during the import, each second's p99: median ${p99Median.toFixed(2)} ms, worst ${p99Worst.toFixed(2)} ms (${probes.length} s)${errors ? `; ${errors} errors` : ""}`,
  );
  await core.stop();
  await threads.close();
} finally {
  workspace.cleanup();
}
process.exit(0);
