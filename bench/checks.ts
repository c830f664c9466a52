/**
 * Benchmark (a): scheduled re-checks at saturation, as users run them. 2,000 certificates on 4 local
 * TLS servers (each a process of its own), all due all the time (CERTKEEPER_CHECK_INTERVAL=1s),
 * re-checked by certkeeper started as `npm start` starts it (`certkeeper serve`, a process of its own,
 * the embedded database, the default log level, its output in a file): lease due certificates, resolve
 * (through CERTKEEPER_RESOLVE), vet the address, handshake (on the event loop and on
 * CERTKEEPER_CHECK_THREADS threads, 1 by default; `--threads 0` for the event loop alone), read the
 * chain, recognise its fingerprint, apply the result, save it (group commit), count it in the metrics.
 * Checks are counted from its own `/metrics` (`certkeeper_checks_total`); its CPU from /proc.
 *
 * The floor: in this process, a bare node:tls loop against the same servers and names with as many
 * connections in flight (connect, handshake, read the peer chain, close; nothing else).
 *
 * Each of `--runs` runs alternates the floor and certkeeper in `--slices` slices, 8 of 2.5 s a side by
 * default: the floor drifts by up to a third between runs on this machine. While the floor (or
 * blackbox_exporter) has its slice, certkeeper's process is stopped (SIGSTOP) and resumed after
 * (SIGCONT), so that each has the machine alone; its checks under way wait, well within their
 * CERTKEEPER_TLS_TIMEOUT, and its certificates stay due. Its slice starts after a warm-up of 0.5 s; the
 * first slice, after its first pass over the certificates and `--warm-up` seconds of re-checks (30 by
 * default: the JIT compiler keeps compiling for about that long, as at the start of any server).
 *
 * A second floor, when installed (Debian's `prometheus-blackbox-exporter`; `--blackbox off` skips it):
 * blackbox_exporter, as Prometheus users watch certificates, its TCP prober with TLS verifying the chain
 * against the servers' roots, probed over HTTP with as many probes in flight, as concurrent scrapes
 * would (this process stands in for Prometheus: the CPU counted is blackbox_exporter's own). It takes
 * its turn in each slice after the bare loop. Goal: >= 1.5x its rate.
 *
 * With `--addresses 4`, every name resolves to 127.0.0.1 to 127.0.0.4 (each server listens on all four):
 * a check connects to all four (CONTRACT §11), and the ratio is taken per connection. Both sides then
 * hold `--concurrency` connections in flight: the bare loop by its workers, certkeeper by its connection
 * budget (four checks of four connections at a time).
 *
 *   bun bench/checks.ts [--seconds 20] [--runs 2] [--slices 8] [--concurrency 16] [--certificates 2000] [--servers 4] [--addresses 1] [--threads 1] [--blackbox auto|off] [--warm-up 30] [--profile DIR]
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import tls from "node:tls";
import { parseArgs } from "node:util";
import { DEFAULT_CONFIG } from "../core/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { sampleCertificate } from "./support/sample.ts";
import { cpuShares, machineCpu, processesCpu, processThreadCpu, threadCpu, threadCpuSince } from "./support/thread_cpu.ts";
import { benchWorkspace, serverPort } from "./support/workspace.ts";

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
    "warm-up": { type: "string", default: "30" },
    profile: { type: "string" },
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
/** certkeeper re-checks this long after its first pass before the first slice. */
const WARM_UP_SECONDS = Number(values["warm-up"]);
const domainOf = (n: number) => `c${n}.${DOMAIN}`;

const workspace = benchWorkspace("certkeeper-bench-checks-");
const { dir } = workspace;
const children = await Promise.all(
  Array.from({ length: serverCount }, async () => {
    const { child, info } = await workspace.spawnReporting([process.execPath, resolve(import.meta.dir, "support/tls_server.ts")]);
    return { child, port: info.port as number, rootPem: info.rootPem as string };
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
 * and each thread's (this process's by default). `done()` is read outside the CPU time counted: for
 * certkeeper it is a scrape of its metrics.
 */
async function measure(
  secs: number,
  done: () => number | Promise<number>,
  into: Measured,
  cpu = cpuSeconds,
  threads: () => Map<string, number> = threadCpu,
): Promise<void> {
  const serverPids = children.map(({ child }) => child.pid);
  const checksBefore = await done();
  const [cpuBefore, started, threadsBefore] = [cpu(), performance.now(), threads()];
  const [serversBefore, machineBefore] = [processesCpu(serverPids), machineCpu()];
  await Bun.sleep(secs * 1000);
  for (const [name, seconds] of threadCpuSince(threadsBefore, threads())) into.threads.set(name, (into.threads.get(name) ?? 0) + seconds);
  const machine = machineCpu();
  into.servers += processesCpu(serverPids) - serversBefore;
  into.busy += machine.busy - machineBefore.busy;
  into.idle += machine.idle - machineBefore.idle;
  into.seconds += (performance.now() - started) / 1000;
  into.cpu += cpu() - cpuBefore;
  into.checks += (await done()) - checksBefore;
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

/** blackbox_exporter on 127.0.0.1, trusting the servers' roots; null when not installed or `--blackbox off`. */
async function startBlackbox(): Promise<{ child: ReturnType<typeof Bun.spawn>; base: string } | null> {
  const binary = values.blackbox === "off" ? null : (Bun.which("prometheus-blackbox-exporter") ?? Bun.which("blackbox_exporter"));
  if (!binary) {
    console.log("blackbox_exporter: skipped (not installed: apt-get install prometheus-blackbox-exporter)");
    return null;
  }
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
// The servers' roots, trusted by certkeeper and by blackbox_exporter.
writeFileSync(join(dir, "roots.pem"), children.map((c) => c.rootPem).join("\n"));
const blackbox = await startBlackbox();
if (blackbox) workspace.track(blackbox.child);

// certkeeper's database: one organization and its certificates, each due now with a fingerprint no
// server sends, so that the first pass parses and judges each chain once.
const METRICS_TOKEN = "bench-metrics-token-0123456789";
const env = workspace.serverEnv(
  { domain: DOMAIN, caFile: join(dir, "roots.pem") },
  {
    CERTKEEPER_CHECK_INTERVAL: "1s",
    CERTKEEPER_CHECK_CONCURRENCY: String(concurrency),
    CERTKEEPER_CHECK_THREADS: String(threadCount),
    CERTKEEPER_METRICS_TOKEN: METRICS_TOKEN,
    CERTKEEPER_RESOLVE: `*.${DOMAIN}=${Array.from({ length: addresses }, (_, i) => `127.0.0.${i + 1}`).join("|")}`,
  },
);
const org = await workspace.cli(env, "org", "create", "--name", "Bench", "--plan", "enterprise");
const store = await openLibsqlStore({ url: env.CERTKEEPER_DATABASE_URL! });
const scope = { organizationId: org.id as string, mode: "live" as const };
for (let i = 0; i < count; i++) {
  await store.certificates.insert({ ...sampleCertificate(scope, i), domain: domainOf(i), port: portOf(i), nextCheckAt: 0 }, { limit: count, events: [] });
}
await store.close();

// With --profile DIR, the server runs under Bun's CPU profiler and writes its profile (Markdown) to DIR
// when it stops: the event loop's share of a check, function by function.
const profiler = values.profile ? ["--cpu-prof-md", `--cpu-prof-dir=${resolve(values.profile)}`] : [];
const { child: server, base } = await workspace.serve(env, { profiler });
// Resumed before it is ended (a stopped process takes no SIGTERM), also on Ctrl-C.
workspace.track({ kill: () => server.kill("SIGCONT") });
const comm = (pid: number | "self") => Bun.file(`/proc/${pid}/comm`).text().then((name) => name.trim());
/** The event loop is the thread named as its process. */
const [serverLoop, benchLoop] = await Promise.all([comm(server.pid), comm("self")]);

/** Checks certkeeper has made so far, from its metrics; a failed one stops the benchmark. */
async function checksMade(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const counted = (result: string) => Number(new RegExp(`^certkeeper_checks_total\\{result="${result}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
  const [ok, failed] = [counted("ok"), counted("failed")];
  if (!Number.isFinite(ok) || failed !== 0) throw new Error(`certkeeper's checks: ${ok} made, ${failed} failed (its log: ${join(dir, "certkeeper.log")})`);
  return ok;
}
for (let tries = 0; (await checksMade()) < count; tries++) {
  // The first pass.
  if (tries > 1200) throw new Error("certkeeper did not check every certificate within two minutes");
  await Bun.sleep(100);
}
// Then as a server that has been running a while: what its JIT compiles at first is not counted.
await Bun.sleep(WARM_UP_SECONDS * 1000);
server.kill("SIGSTOP");

console.log(
  `Scheduled re-checks at saturation: ${count} certificates on ${serverCount} local TLS servers (own processes), ` +
    `${concurrency} in flight, certkeeper served as \`npm start\` serves it with ${threadCount > 0 ? `handshakes on the event loop and ${threadCount} thread(s)` : "handshakes on the event loop alone"}, ${seconds} s each per run (in ${SLICES} alternating slices), ${runs} run(s)` +
    (addresses > 1 ? `; every name behind ${addresses} addresses: ${addresses} connections per check, ratio per connection` : ""),
);
for (let run = 0; run < runs; run++) {
  // The two alternate in slices of a few seconds: on a machine shared with other work, the load drifts
  // more between two long measurements than the difference being measured.
  const floor = new Measured();
  const measured = new Measured();
  const probed = new Measured();
  for (let slice = 0; slice < SLICES; slice++) {
    await workLoop(seconds / SLICES, floor, bareCheck);
    if (blackbox) await workLoop(seconds / SLICES, probed, (n) => blackboxProbe(blackbox, n), () => processesCpu([blackbox.child.pid]));
    server.kill("SIGCONT");
    await Bun.sleep(WARM_UP_MS);
    await measure(seconds / SLICES, checksMade, measured, () => processesCpu([server.pid]), () => processThreadCpu(server.pid));
    server.kill("SIGSTOP");
  }
  const cell = (m: Measured) => `${m.perSecond.toFixed(0).padStart(6)}/s  ${m.cpuUsPerCheck.toFixed(0).padStart(5)} µs CPU/check`;
  const ratio = (measured.perSecond * addresses) / floor.perSecond;
  const connections = addresses > 1 ? `  (${(measured.perSecond * addresses).toFixed(0)} connections/s)` : "";
  console.log(
    `run ${run + 1}   bare node:tls loop ${cell(floor)}   certkeeper ${cell(measured)}${connections}   ratio ${ratio.toFixed(2)}x, CPU per check ${(measured.cpuUsPerCheck / (floor.cpuUsPerCheck * addresses)).toFixed(2)}x`,
  );
  if (blackbox) {
    const times = (measured.perSecond * addresses) / probed.perSecond;
    console.log(`        blackbox_exporter ${cell(probed)}   certkeeper ${times.toFixed(2)}x its rate, ${(measured.cpuUsPerCheck / (probed.cpuUsPerCheck * addresses)).toFixed(2)}x its CPU per connection`);
  }
  const shares = (m: Measured) => cpuShares(m.threads, m.checks);
  console.log(`        µs CPU per check by thread: bare ${shares(floor)}; certkeeper ${shares(measured)}`);
  // A share of the event loop near 100 % means it is what limits the rate.
  const whole = (m: Measured, loop: string) =>
    `event loop ${(((m.threads.get(loop) ?? 0) / m.seconds) * 100).toFixed(0)} % busy, the TLS servers ${m.serversUsPerCheck.toFixed(0)} µs a check, the machine ${(m.busyShare * 100).toFixed(0)} % busy`;
  console.log(`        beside it: bare ${whole(floor, benchLoop)}; certkeeper ${whole(measured, serverLoop)}`);
}
console.log(
  (addresses > 1 ? "(target: >= 0.8x the bare loop per connection" : "(target: >= 0.9x the bare loop, CPU per check <= 1.1x its") + (blackbox ? ", >= 1.5x blackbox_exporter)" : ")"),
);

// Stopped as a service manager stops it (a profile is written only then).
server.kill("SIGCONT");
server.kill("SIGTERM");
await server.exited;
workspace.cleanup();
process.exit(0);
