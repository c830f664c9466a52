/**
 * Benchmark (a): scheduled re-checks at saturation. 2,000 certificates on 4 local TLS servers (each a
 * process of its own), all due all the time (a 1-second interval), re-checked by certkeeper's own
 * scheduler as a running server does it: lease due certificates from the embedded libSQL database,
 * resolve (through CERTKEEPER_RESOLVE), vet the address, handshake, read the chain, recognise its
 * fingerprint, apply the result, save it (group commit), count it in the metrics. Beside it, in the
 * same process and against the same servers and names, the floor: a bare node:tls loop with as many
 * connections in flight (connect, handshake, read the peer chain, close; nothing else).
 *
 * Certkeeper opens the checks' connections as a server started by `npm start` does: on the event loop
 * and on CERTKEEPER_CHECK_THREADS threads beside it (1 by default; `--threads 0` for the event loop
 * alone). The bare loop has one thread, the event loop.
 *
 * Prints checks per second, the ratio to the floor, and the CPU time this process spent per check
 * (user + system, every thread) for both. Each of `--runs` runs alternates the two in `--slices`
 * slices, 8 of 2.5 s a side by default: the floor drifts by up to a third between runs on this
 * machine, and runs of 8 slices spread less than runs of 4 (the same evening: 0.85–0.96x over 16 runs
 * of 8, 0.83–1.02x over 12 runs of 4).
 *
 * A second floor, when installed (Debian's `prometheus-blackbox-exporter`; `--blackbox off` skips it):
 * blackbox_exporter, as Prometheus users watch certificates, its TCP prober with TLS verifying the chain
 * against the servers' roots, probed over HTTP with as many probes in flight, as concurrent scrapes
 * would (this process stands in for Prometheus: the CPU counted is blackbox_exporter's own). It takes
 * its turn in each slice after the other two. Goal: >= 1.5x its rate.
 *
 * With `--addresses 4`, every name resolves to 127.0.0.1 to 127.0.0.4 (each server listens on all four):
 * a check connects to all four (CONTRACT §11), and the ratio is taken per connection. Both sides then
 * hold `--concurrency` connections in flight: the bare loop by its workers, certkeeper by its connection
 * budget (four checks of four connections at a time).
 *
 *   bun bench/checks.ts [--seconds 20] [--runs 2] [--slices 8] [--concurrency 16] [--certificates 2000] [--servers 4] [--addresses 1] [--threads 1] [--blackbox auto|off]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import tls from "node:tls";
import { parseArgs } from "node:util";
import Database from "libsql";
import { createCore, DEFAULT_CONFIG, silentLogger, TrustStore } from "../core/mod.ts";
import { SECOND } from "../core/base/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { sampleCertificate } from "./support/sample.ts";
import { cpuShares, machineCpu, processesCpu, threadCpu, threadCpuSince } from "./support/thread_cpu.ts";
import { serverPort } from "./support/workspace.ts";
import { parseResolveRules } from "../core/config/mod.ts";
import { CheckThreads } from "../adapters/check_threads/mod.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "20" },
    runs: { type: "string", default: "2" },
    concurrency: { type: "string", default: String(DEFAULT_CONFIG.checkConcurrency) },
    certificates: { type: "string", default: "2000" },
    servers: { type: "string", default: "4" },
    addresses: { type: "string", default: "1" },
    slices: { type: "string", default: "8" },
    threads: { type: "string", default: String(DEFAULT_CONFIG.checkThreads) },
    blackbox: { type: "string", default: "auto" },
  },
});
const addresses = Number(values.addresses);
if (!Number.isInteger(addresses) || addresses < 1 || addresses > 4) throw new Error("--addresses is 1 to 4 (127.0.0.1 to 127.0.0.4)");
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);
const count = Number(values.certificates);
const serverCount = Number(values.servers);
const threadCount = Number(values.threads);
if (!Number.isInteger(threadCount) || threadCount < 0) throw new Error("--threads is a whole number (0: the event loop alone)");
const DOMAIN = "bench.certkeeper.test";
/** Each run alternates the floor and certkeeper this many times, `seconds / SLICES` each. */
const SLICES = Number(values.slices);
if (!Number.isInteger(SLICES) || SLICES < 1) throw new Error("--slices is a whole number of at least 1");
const WARM_UP_MS = 500;
const domainOf = (n: number) => `c${n}.${DOMAIN}`;

const children = await Promise.all(
  Array.from({ length: serverCount }, async () => {
    // stderr: the server's OCSP responder reports each request there (bench/checks_revocation.ts counts them).
    const child = Bun.spawn([process.execPath, resolve(import.meta.dir, "support/tls_server.ts")], { stdout: "pipe", stderr: "ignore" });
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    reader.releaseLock();
    const { port, rootPem } = JSON.parse(new TextDecoder().decode(value).split("\n")[0]!) as { port: number; rootPem: string };
    return { child, port, rootPem };
  }),
);
const portOf = (n: number) => children[n % serverCount]!.port;

/** CPU seconds this process has used so far (user + system, every thread). */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** Checks completed, seconds elapsed and CPU seconds used, summed over a run's slices. */
class Measured {
  checks = 0;
  seconds = 0;
  cpu = 0;
  /** CPU seconds the TLS servers' processes used meanwhile. */
  servers = 0;
  /** The machine's busy and idle CPU seconds meanwhile (all cores). */
  busy = 0;
  idle = 0;
  threads = new Map<string, number>();
  get perSecond(): number {
    return this.checks / this.seconds;
  }
  get cpuUsPerCheck(): number {
    return (this.cpu * 1e6) / Math.max(this.checks, 1);
  }
  get serversUsPerCheck(): number {
    return (this.servers * 1e6) / Math.max(this.checks, 1);
  }
  get busyShare(): number {
    return this.busy / Math.max(this.busy + this.idle, 1e-9);
  }
}

/**
 * Adds to `into` what `done()` reports for `secs` seconds, with the CPU time `cpu()` counts meanwhile
 * (this process's by default).
 */
async function measure(secs: number, done: () => number, into: Measured, cpu = cpuSeconds): Promise<void> {
  const serverPids = children.map(({ child }) => child.pid);
  const [checksBefore, cpuBefore, started, threadsBefore] = [done(), cpu(), performance.now(), threadCpu()];
  const [serversBefore, machineBefore] = [processesCpu(serverPids), machineCpu()];
  await Bun.sleep(secs * 1000);
  for (const [name, seconds] of threadCpuSince(threadsBefore)) into.threads.set(name, (into.threads.get(name) ?? 0) + seconds);
  const machine = machineCpu();
  into.servers += processesCpu(serverPids) - serversBefore;
  into.busy += machine.busy - machineBefore.busy;
  into.idle += machine.idle - machineBefore.idle;
  into.checks += done() - checksBefore;
  into.seconds += (performance.now() - started) / 1000;
  into.cpu += cpu() - cpuBefore;
}

/** The floor: connect, handshake, read the peer chain, close. Nothing else. */
function bareCheck(n: number): Promise<void> {
  return new Promise((resolveCheck, reject) => {
    // With several addresses, the bare loop spreads its connections over them as the checks do.
    const socket = tls.connect({ host: `127.0.0.${(n % addresses) + 1}`, port: portOf(n), servername: domainOf(n), rejectUnauthorized: false });
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

/**
 * `concurrency` workers running `check` over the same names and servers for `secs` seconds (after a
 * warm-up), into `into`, with the CPU time `cpu()` counts (this process's by default).
 */
async function workLoop(secs: number, into: Measured, check: (n: number) => Promise<void>, cpu?: () => number): Promise<void> {
  let done = 0;
  let next = 0;
  let running = true;
  const workers = Array.from({ length: concurrency }, async () => {
    while (running) {
      await check(next++ % count);
      done++;
    }
  });
  await Bun.sleep(WARM_UP_MS);
  await measure(secs, () => done, into, cpu);
  running = false;
  await Promise.all(workers);
}

const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-checks-"));

/** blackbox_exporter on 127.0.0.1, trusting the servers' roots; null when not installed or `--blackbox off`. */
async function startBlackbox(): Promise<{ child: ReturnType<typeof Bun.spawn>; base: string } | null> {
  const binary = values.blackbox === "off" ? null : (Bun.which("prometheus-blackbox-exporter") ?? Bun.which("blackbox_exporter"));
  if (!binary) {
    console.log("blackbox_exporter: skipped (not installed: apt-get install prometheus-blackbox-exporter)");
    return null;
  }
  writeFileSync(join(dir, "roots.pem"), children.map((c) => c.rootPem).join("\n"));
  writeFileSync(
    join(dir, "blackbox.yml"),
    [
      "modules:",
      "  tls:",
      "    prober: tcp",
      "    timeout: 5s",
      "    tcp:",
      "      tls: true",
      "      tls_config:",
      `        ca_file: ${join(dir, "roots.pem")}`,
      `        server_name: ${domainOf(0)}`,
      "",
    ].join("\n"),
  );
  const base = `http://127.0.0.1:${serverPort()}`;
  const child = Bun.spawn([binary, `--config.file=${join(dir, "blackbox.yml")}`, `--web.listen-address=${base.slice(7)}`, "--log.level=warn"], { stdout: "ignore", stderr: "ignore" });
  for (let tries = 0; ; tries++) {
    const healthy = await fetch(`${base}/-/healthy`).then((r) => r.ok, () => false);
    if (healthy) break;
    if (tries > 100 || child.exitCode !== null) throw new Error("blackbox_exporter did not start");
    await Bun.sleep(50);
  }
  return { child, base };
}

/** One probe of blackbox_exporter, as a scrape asks it; a failed probe stops the benchmark. */
async function blackboxProbe(blackbox: { base: string }, n: number): Promise<void> {
  const response = await fetch(`${blackbox.base}/probe?module=tls&target=127.0.0.${(n % addresses) + 1}:${portOf(n)}`);
  const body = await response.text();
  if (!/^probe_success 1$/m.test(body)) throw new Error(`blackbox_exporter's probe failed: ${body.slice(0, 300)}`);
}
const blackbox = await startBlackbox();
const store = await openLibsqlStore({ url: `file:${join(dir, "bench.db")}` });
// A second connection to the same file, for the bench's own bookkeeping between slices.
const side = new Database(join(dir, "bench.db"), { timeout: 5_000 });
/**
 * A scheduler that stops drops what it leased and had not started (work_loop.ts: their
 * leases run out, 12 minutes by default). A running server never stops, but this bench stops it at the
 * end of every slice: left leased, those certificates (up to 40 a stop) would sit out the rest of the
 * benchmark, until too few stayed due to keep certkeeper busy. Between slices they are due again.
 */
const releaseDropped = () => side.prepare("UPDATE certificates SET next_check_at = 0, lease_owner = NULL WHERE lease_owner IS NOT NULL").run();
let checks = 0;
let failures = 0;
// As the wiring gives a server (adapters/wiring): handshakes on the event loop and these threads.
const threads = threadCount > 0 ? new CheckThreads(threadCount) : undefined;
const core = createCore({
  config: {
    ...DEFAULT_CONFIG,
    // Shorter than a pass over all certificates takes: every certificate is due again by its turn.
    checkIntervalMs: SECOND,
    checkConcurrency: concurrency,
    allowPrivateTargets: true,
    resolve: parseResolveRules(`*.${DOMAIN}=${Array.from({ length: addresses }, (_, i) => `127.0.0.${i + 1}`).join("|")}`),
  },
  store,
  logger: silentLogger,
  connector: threads,
  trust: new TrustStore(children.map((c) => c.rootPem)),
  onCheck: ({ ok }) => {
    checks++;
    if (!ok) failures++;
  },
});
const org = await core.services.admin.createOrganization({ name: "Bench", plan: "enterprise" });
const scope = { organizationId: org.id, mode: "live" as const };
for (let i = 0; i < count; i++) {
  // Due now, with a fingerprint no server sends: the first pass parses and judges each chain once.
  await store.certificates.insert({ ...sampleCertificate(scope, i), domain: domainOf(i), port: portOf(i), nextCheckAt: 0 }, { limit: count, events: [] });
}
core.start();
while (checks < count) await Bun.sleep(100); // the first pass
await core.stop();
releaseDropped();
if (failures > 0) throw new Error(`${failures} of the first ${checks} checks failed`);

console.log(
  `Scheduled re-checks at saturation: ${count} certificates on ${serverCount} local TLS servers (own processes), ` +
    `${concurrency} in flight, ${threadCount > 0 ? `handshakes on the event loop and ${threadCount} thread(s)` : "handshakes on the event loop alone"}, ${seconds} s each per run (in ${SLICES} alternating slices), ${runs} run(s)` +
    (addresses > 1 ? `; every name behind ${addresses} addresses: ${addresses} connections per check, ratio per connection` : ""),
);
const rows: string[] = [];
for (let run = 0; run < runs; run++) {
  // The two alternate in slices of a few seconds: on a machine shared with other work, the load drifts
  // more between two long measurements than the difference being measured.
  const floor = new Measured();
  const measured = new Measured();
  const probed = new Measured();
  for (let slice = 0; slice < SLICES; slice++) {
    await workLoop(seconds / SLICES, floor, bareCheck);
    if (blackbox) await workLoop(seconds / SLICES, probed, (n) => blackboxProbe(blackbox, n), () => processesCpu([blackbox.child.pid]));
    core.start();
    await Bun.sleep(WARM_UP_MS);
    await measure(seconds / SLICES, () => checks, measured);
    await core.stop();
    releaseDropped();
  }
  if (failures > 0) throw new Error(`${failures} re-checks failed`);
  const cell = (m: Measured) => `${m.perSecond.toFixed(0).padStart(6)}/s  ${m.cpuUsPerCheck.toFixed(0).padStart(5)} µs CPU/check`;
  const ratio = (measured.perSecond * addresses) / floor.perSecond;
  const connections = addresses > 1 ? `  (${(measured.perSecond * addresses).toFixed(0)} connections/s)` : "";
  rows.push(`run ${run + 1}   bare node:tls loop ${cell(floor)}   certkeeper ${cell(measured)}${connections}   ratio ${ratio.toFixed(2)}x`);
  console.log(rows.at(-1));
  if (blackbox) {
    const times = (measured.perSecond * addresses) / probed.perSecond;
    console.log(`        blackbox_exporter ${cell(probed)}   certkeeper ${times.toFixed(2)}x its rate, ${(measured.cpuUsPerCheck / (probed.cpuUsPerCheck * addresses)).toFixed(2)}x its CPU per connection`);
  }
  const shares = (m: Measured) => cpuShares(m.threads, m.checks);
  console.log(`        µs CPU per check by thread: bare ${shares(floor)}; certkeeper ${shares(measured)}`);
  // The event loop is the thread named after the runtime (bun); a share near 100 % means it is what limits the rate.
  const whole = (m: Measured) =>
    `event loop ${(((m.threads.get("bun") ?? 0) / m.seconds) * 100).toFixed(0)} % busy, the TLS servers ${m.serversUsPerCheck.toFixed(0)} µs a check, the machine ${(m.busyShare * 100).toFixed(0)} % busy`;
  console.log(`        beside it: bare ${whole(floor)}; certkeeper ${whole(measured)}`);
}
console.log(
  (addresses > 1 ? "(target: >= 0.8x the bare loop per connection" : "(target: >= 0.9x the bare loop") + (blackbox ? ", >= 1.5x blackbox_exporter)" : ")"),
);

blackbox?.child.kill();
for (const { child } of children) child.kill();
await threads?.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
