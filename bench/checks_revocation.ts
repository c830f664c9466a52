/**
 * Benchmark (a), second part (`npm run bench:checks` runs it after bench/checks.ts): revocation's cost.
 * Certificate checks per second against a local TLS server (in a process of its own),
 * at concurrency 1, 16 and 64, beside a bare node:tls connect-and-read loop in the same process and
 * run (the floor). A certkeeper check here is a scheduled re-check of an unchanged certificate: resolve
 * (through CERTKEEPER_RESOLVE), vet the address, handshake, read the chain, recognise its fingerprint,
 * apply the result and save it to the embedded libSQL database. It runs with revocation off and on: on,
 * the leaf names an OCSP responder whose answer is cached after the first check, so a re-check asks
 * nobody (the benchmark counts the responder's requests during the measured runs to prove it).
 *
 *   bun bench/checks_revocation.ts [--seconds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import tls from "node:tls";
import { parseArgs } from "node:util";
import { DEFAULT_CONFIG } from "../core/config/config.ts";
import { createCore } from "../core/app/create_core.ts";
import { silentLogger } from "../core/base/log.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { sampleCertificate } from "./support/sample.ts";
import { CheckThreads } from "../adapters/check_threads/mod.ts";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "5" } } });
const seconds = Number(values.seconds);
const DOMAIN = "bench.certkeeper.test";
const domainOf = (n: number) => `c${n}.${DOMAIN}`;

const child = Bun.spawn([process.execPath, resolve(import.meta.dir, "support/tls_server.ts")], { stdout: "pipe", stderr: "pipe" });
const reader = child.stdout.getReader();
const { value } = await reader.read();
const { port, rootPem } = JSON.parse(new TextDecoder().decode(value).split("\n")[0]!);
let ocspRequests = 0;
void (async () => {
  for await (const chunk of child.stderr) ocspRequests += new TextDecoder().decode(chunk).split("ocsp\n").length - 1;
})();

/** Runs `work` with `concurrency` workers for `seconds`; returns completions per second. */
async function rate(concurrency: number, work: (worker: number) => Promise<void>): Promise<number> {
  let done = 0;
  const cpuStart = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < until) {
        await work(worker);
        done++;
      }
    }),
  );
  lastCpuMicros = cpuOf(process.cpuUsage(cpuStart)) / Math.max(done, 1);
  return done / ((performance.now() - started) / 1000);
}

/** This process's CPU time per completion in the last {@link rate} run, µs: steadier than rates on a busy machine. */
let lastCpuMicros = 0;
const cpuOf = (usage: NodeJS.CpuUsage) => usage.user + usage.system;

/** The floor: connect, handshake, read the peer chain, close. Nothing else. */
function bareCheck(): Promise<void> {
  return new Promise((resolveCheck, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername: domainOf(0), rejectUnauthorized: false });
    socket.once("secureConnect", () => {
      let cert = socket.getPeerCertificate(true);
      const seen = new Set();
      while (cert?.raw && !seen.has(cert)) {
        seen.add(cert);
        cert = (cert as { issuerCertificate?: typeof cert }).issuerCertificate!;
      }
      socket.destroy();
      resolveCheck();
    });
    socket.once("error", reject);
  });
}

const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-"));
const store = await openLibsqlStore({ url: `file:${join(dir, "bench.db")}` });
const config = { ...DEFAULT_CONFIG, allowPrivateTargets: true, resolve: [{ pattern: `*.${DOMAIN}`, address: "127.0.0.1" }], logLevel: "error" as const };
const trust = new TrustStore([rootPem]);
// As the wiring gives a server: handshakes on the event loop and CERTKEEPER_CHECK_THREADS threads.
const threads = new CheckThreads(DEFAULT_CONFIG.checkThreads);
const transports = createTransports(config, trust, { outboxDir: join(dir, "outbox") });

/** A core with revocation on or off, and one certificate per worker (so workers never race for one record), checked once. */
async function setUp(revocation: boolean) {
  const core = createCore({ config: { ...config, revocation }, store, logger: silentLogger, trust, transports, connector: threads });
  const org = await core.services.admin.createOrganization({ name: `Bench ${revocation ? "on" : "off"}`, plan: "enterprise" });
  const scope = { organizationId: org.id, mode: "live" as const };
  const records: CertificateRecord[] = [];
  for (let i = 0; i < 64; i++) {
    const record = { ...sampleCertificate(scope, i), id: `${sampleCertificate(scope, i).id}${revocation ? "on" : "off"}`, domain: domainOf(i), port };
    await store.certificates.insert(record, { limit: 1000, events: [] });
    records.push((await core.services.monitor.check(record, { manual: false }))!.record);
  }
  const expected = revocation ? "good" : "not_checked";
  if (records.some((r) => r.details.revocation?.status !== expected)) throw new Error(`revocation is not ${expected} after the first check`);
  return async (worker: number) => {
    const checked = await core.services.monitor.check(records[worker]!, { manual: false });
    if (!checked || checked.record.failure) throw new Error("a benchmark check failed");
    records[worker] = checked.record;
  };
}
const recheckOff = await setUp(false);
const recheckOn = await setUp(true);

await rate(16, () => bareCheck()); // warm-up
await rate(16, recheckOff);
await rate(16, recheckOn);
const requestsBefore = ocspRequests;
console.log(`Checks per second against one local TLS server (${seconds} s each; revocation off and on: medians of 3 alternating runs)`);
console.log("concurrency   bare node:tls loop   re-check, revocation off   ratio   re-check, revocation on (cached OCSP)   on/off");
for (const concurrency of [1, 16, 64]) {
  const floor = await rate(concurrency, () => bareCheck());
  // Off and on alternate, three runs each, and the medians are compared: a machine shared with other
  // work drifts more between two runs than revocation's cached path costs.
  const offs: number[] = [];
  const ons: number[] = [];
  const offCpu: number[] = [];
  const onCpu: number[] = [];
  for (let round = 0; round < 3; round++) {
    // Which goes first alternates too, so neither always runs in the other's wake.
    const runOff = async () => {
      offs.push(await rate(concurrency, recheckOff));
      offCpu.push(lastCpuMicros);
    };
    const runOn = async () => {
      ons.push(await rate(concurrency, recheckOn));
      onCpu.push(lastCpuMicros);
    };
    if (round % 2 === 0) {
      await runOff();
      await runOn();
    } else {
      await runOn();
      await runOff();
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
  const off = median(offs);
  const on = median(ons);
  console.log(
    `${String(concurrency).padStart(11)}   ${floor.toFixed(0).padStart(18)}   ${off.toFixed(0).padStart(24)}   ${(off / floor).toFixed(2).padStart(4)}x   ${on.toFixed(0).padStart(37)}   ${(on / off).toFixed(2).padStart(5)}x` +
      `   (CPU per re-check: off ${median(offCpu).toFixed(0)} µs, on ${median(onCpu).toFixed(0)} µs)`,
  );
}
console.log(`OCSP requests during the measured re-checks: ${ocspRequests - requestsBefore} (every answer came from the cache)`);
console.log("(targets: a re-check of an unchanged certificate at >= 0.8x the bare loop; revocation on at >= 0.9x off)");

child.kill();
await threads.close();
await transports.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
