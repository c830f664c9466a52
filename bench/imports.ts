/**
 * Benchmark (d): importing 10,000 names served by a local TLS server (in a process of its own) with
 * POST /v1/imports, from the 202 to `finished`, beside the first-check loop at the same concurrency
 * (the floor): certkeeper's retrieval, parsing and judging of a name it has never seen, which is the
 * work an add does before storing. The import adds validation, duplicate checks, plan limits and the
 * writes (certificate, item outcome, counters) of every item to the embedded libSQL database.
 *
 *   bun bench/imports.ts [--items 10000] [--concurrency 16]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_CONFIG } from "../core/config/config.ts";
import { createCore } from "../core/app/create_core.ts";
import { silentLogger } from "../core/base/log.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createHttpApp } from "../adapters/elysia/mod.ts";
import { CheckThreads } from "../adapters/check_threads/mod.ts";
import { cpuShares, threadCpu, threadCpuSince } from "./support/thread_cpu.ts";

const { values } = parseArgs({ options: { items: { type: "string", default: "10000" }, concurrency: { type: "string", default: "16" } } });
const items = Number(values.items);
const concurrency = Number(values.concurrency);
const DOMAIN = "bench.certkeeper.test";

const child = Bun.spawn([process.execPath, resolve(import.meta.dir, "support/tls_server.ts")], { stdout: "pipe", stderr: "inherit" });
const { value } = await child.stdout.getReader().read();
const { port, rootPem } = JSON.parse(new TextDecoder().decode(value).split("\n")[0]!);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-"));
const store = await openLibsqlStore({ url: `file:${join(dir, "bench.db")}` });
// As the wiring gives a server: handshakes on the event loop and CERTKEEPER_CHECK_THREADS threads.
const threads = new CheckThreads(DEFAULT_CONFIG.checkThreads);
const core = createCore({
  config: {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${DOMAIN}`, address: "127.0.0.1" }],
    logLevel: "error",
    checkConcurrency: concurrency,
  },
  store,
  logger: silentLogger,
  trust: new TrustStore([rootPem]),
  connector: threads,
});
const app = createHttpApp(core);
const admin = core.services.admin;
const org = await admin.createOrganization({ name: "Bench", plan: "enterprise" });
const user = await admin.createUser({ organizationId: org.id, email: "bench@bench.test", role: "owner" });
const { key } = await admin.createApiKey({ userId: user.id, name: "bench", mode: "live" });

/** The floor: first checks of `count` distinct names, `concurrency` at once; per second. */
async function firstChecks(count: number, prefix: string): Promise<number> {
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
}

let settleMs = 0; let settleCalls = 0; let inspectMs = 0;
if (process.env.BENCH_PROFILE) {
  const settle = store.imports.settle.bind(store.imports);
  store.imports.settle = async (...args) => { const t = performance.now(); try { return await settle(...args); } finally { settleMs += performance.now() - t; settleCalls++; } };
}
async function importRate(count: number, prefix: string): Promise<{ rate: number; created: number }> {
  const body = { certificates: Array.from({ length: count }, (_, n) => ({ domain: `${prefix}${n}.${DOMAIN}`, port, tags: [`team:${n % 20}`] })) };
  const started = performance.now();
  const response = await app.handle(
    new Request("http://localhost/v1/imports", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  const { data } = (await response.json()) as { data: { id: string } };
  if (response.status !== 202) throw new Error(`POST /v1/imports answered ${response.status}`);
  await core.services.imports!.loop.runDue();
  const seconds = (performance.now() - started) / 1000;
  const record = await store.imports.get({ organizationId: org.id, mode: "live" }, data.id);
  if (record?.status !== "finished") throw new Error("the import did not finish");
  return { rate: count / seconds, created: record.created };
}

await firstChecks(500, "warm"); // warm-up: JIT, connections, the TLS server
// The floor before and after, averaged: on a shared machine the load drifts during a run.
let cpu = threadCpu();
const floorBefore = await firstChecks(items, "before");
const floorCpu = cpuShares(threadCpuSince(cpu), items);
cpu = threadCpu();
const measured = await importRate(items, "site");
const importCpu = cpuShares(threadCpuSince(cpu), items);
const floorAfter = await firstChecks(items, "after");
const floor = (floorBefore + floorAfter) / 2;
console.log(`Importing ${items.toLocaleString("en")} names from one local TLS server, concurrency ${concurrency}`);
console.log(`  first-check loop (floor)   ${floor.toFixed(0).padStart(6)} names/s   (${floorBefore.toFixed(0)} before, ${floorAfter.toFixed(0)} after)`);
console.log(`  POST /v1/imports           ${measured.rate.toFixed(0).padStart(6)} names/s   (${measured.created.toLocaleString("en")} created)`);
if (process.env.BENCH_PROFILE) console.log({ settleMs, settleCalls });
console.log(`  ratio ${(measured.rate / floor).toFixed(2)}x   (target: >= 0.7x)`);
console.log(`  CPU per name by thread (µs): import ${importCpu}; floor (before) ${floorCpu}`);

child.kill();
await core.stop();
await threads.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
