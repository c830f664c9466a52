/**
 * Benchmark: following the CT logs directly (CONTRACT §21). A local RFC 6962 log and a local tile log
 * (bench/support/ct_logs.ts, a process of their own) serve `--entries` real-shaped entries each
 * (precertificates and certificates of the test PKI, 1 to 100 names, RSA and ECDSA); certkeeper runs as
 * `npm start` runs it (embedded libSQL) with CERTKEEPER_CT_SOURCE=logs and 10,000 watches across 100
 * organizations; one entry in `--match-every` names a watched domain.
 *
 *   floor      a bare loop in a process of its own (bench/support/ct_floor.ts) that fetches and decodes
 *              the same entries with the same readers and requests in flight, and does nothing else
 *   follower   certkeeper reading the first half of the entries: fetch, decode, verify against the signed
 *              heads, match every entry against every watch, write positions, issuances and events
 *
 * Prints entries per second for both and their ratio (goal >= 0.7), the CPU time per entry, the
 * server's resident memory idle and while following, each at its most over the same API reads (goal:
 * flat, <= 50 MB above idle) beside the floor's before and while reading, and the p99 of
 * GET /v1/certificates/{id} under a light paced load (`--rate` requests a second, as a dashboard or a
 * monitoring script sends them) idle and while the follower reads the second half (goal: within 1.5x),
 * beside two floors of this machine's own: the same reads while the bare loop reads the logs, and while
 * two busy loops of the lowest priority (SCHED_IDLE) fill both cores,
 * the bytes per entry each kind of log sent, and how many entries a day that rate covers.
 *
 *   bun bench/ct.ts [--entries 20000] [--match-every 10000] [--rate 200] [--seconds 3] [--profile DIR]
 *
 * With `--profile DIR` the server runs under Bun's CPU profiler and writes its profile (Markdown) to DIR.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { benchWorkspace, ROOT, serverPort } from "./support/workspace.ts";
import { Admin } from "../core/accounts/admin.ts";
import { systemClock } from "../core/base/time.ts";
import { newId } from "../core/base/ids.ts";
import type { WatchRecord } from "../core/base/records.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { sampleCertificate } from "./support/sample.ts";
import { cpuSeconds } from "./support/wrk.ts";
import { pacedLoad, type PacedResult } from "./support/paced.ts";
import { cpuShares, processThreadCpu, threadCpuSince } from "./support/thread_cpu.ts";

const { values } = parseArgs({
  options: {
    entries: { type: "string", default: "20000" },
    "match-every": { type: "string", default: "10000" },
    rate: { type: "string", default: "200" },
    seconds: { type: "string", default: "3" },
    profile: { type: "string" },
  },
});
const ENTRIES = Number(values.entries);
const HALF = Math.floor(ENTRIES / 2);
const ORGANIZATIONS = 100;
const WATCHES_PER_ORGANIZATION = 100;
const CERTIFICATES = 200;

const workspace = benchWorkspace("certkeeper-bench-ct-");
const { dir, cleanup } = workspace;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const num = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

try {
  console.log(`bench:ct — ${num(ENTRIES)} entries per log (RFC 6962 + tile log), ${num(ORGANIZATIONS * WATCHES_PER_ORGANIZATION)} watches across ${ORGANIZATIONS} organizations`);
  const logProcess = Bun.spawn([process.execPath, join(ROOT, "bench/support/ct_logs.ts"), "--entries", String(ENTRIES), "--match-every", values["match-every"]!], {
    stdout: "pipe",
    stderr: "inherit",
  });
  workspace.track(logProcess);
  const reader = logProcess.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  const logs = JSON.parse(new TextDecoder().decode(value).split("\n")[0]!) as { port: number; list: { follow: string; floor: string }; matching: number };
  const control = `http://127.0.0.1:${logs.port}/control`;
  const publish = (prefix: string, size: number) => fetch(`${control}/publish?prefix=${prefix}&size=${size}`, { method: "POST" });
  writeFileSync(join(dir, "follow.json"), logs.list.follow);
  writeFileSync(join(dir, "floor.json"), logs.list.floor);

  // The database: organizations, their watches, and certificates to read while the follower runs.
  const databaseUrl = `file:${join(dir, "data/certkeeper.db")}`;
  const store = await openLibsqlStore({ url: databaseUrl });
  const admin = new Admin(store, systemClock);
  let key = "";
  let certificateIds: string[] = [];
  // The watches were created an hour ago; the logs' entries are from half an hour ago.
  const now = Date.now() - 3_600_000;
  for (let o = 0; o < ORGANIZATIONS; o++) {
    const org = await admin.createOrganization({ name: `Bench ${o}`, plan: "enterprise", limits: { requestsPerMinute: 1_000_000_000 } });
    const scope = { organizationId: org.id, mode: "live" as const };
    for (let w = 0; w < WATCHES_PER_ORGANIZATION; w++) {
      const watch: WatchRecord = {
        ...scope,
        id: newId("wch"),
        domain: `w${o * WATCHES_PER_ORGANIZATION + w}.bench.example`,
        includeSubdomains: true,
        autoMonitor: false,
        allowedIssuers: [],
        lastPolledAt: null,
        lastError: null,
        issuancesSeen: 0,
        cursor: null,
        baselineDone: false,
        pendingNames: [],
        // Polled just now, as a running installation's watches are: their polls do not crowd the run.
        nextPollAt: now + 2 * 3_600_000,
        createdAt: now,
        updatedAt: now,
      };
      await store.watches.insert(watch, { limit: 1000 });
    }
    if (o === 0) {
      const user = await admin.createUser({ organizationId: org.id, email: "owner@bench.test", role: "owner" });
      key = (await admin.createApiKey({ userId: user.id, name: "bench", mode: "live" })).key;
      for (let n = 0; n < CERTIFICATES; n++) {
        const record = { ...sampleCertificate(scope, n, Date.now()), nextCheckAt: Date.now() + 365 * 86_400_000 };
        await store.certificates.insert(record, { limit: 100_000, events: [] });
        certificateIds.push(record.id);
      }
    }
  }
  await store.close();

  const env: Record<string, string> = {
    CERTKEEPER_HOST: "127.0.0.1",
    CERTKEEPER_PORT: String(serverPort()),
    CERTKEEPER_DATABASE_URL: databaseUrl,
    CERTKEEPER_CT_SOURCE: "logs",
    CERTKEEPER_CT_LOG_LIST: join(dir, "follow.json"),
  };
  for (const name of Object.keys(process.env)) if (name.startsWith("CERTKEEPER_")) delete process.env[name];
  const profiler = values.profile ? ["--cpu-prof-md", `--cpu-prof-dir=${resolve(values.profile)}`] : [];
  const { child: server, base } = await workspace.serve(env, { profiler });
  const headers = { authorization: `Bearer ${key}` };
  const ctLogs = async () => ((await (await fetch(`${base}/v1/ct/logs`, { headers })).json()) as { data: Array<{ position: number | null; treeSize: number | null; lastError: string | null }> }).data;
  for (let tries = 0; ; tries++) {
    const shown = await ctLogs().catch(() => []);
    if (shown.length === 2 && shown.every((log) => log.position === 0)) break;
    if (tries > 600) throw new Error("certkeeper did not start following the logs");
    await Bun.sleep(100);
  }

  // Idle: memory, and the p99 of reads.
  await Bun.sleep(2000);
  const load = (seconds: number) => pacedLoad({ base, paths: certificateIds.map((id) => `/v1/certificates/${id}`), headers, rate: Number(values.rate), seconds });
  // With --profile the API is left alone: the profile is the follower's.
  const measureLoad = !values.profile;
  if (measureLoad) await load(1); // warm up
  // Idle memory is sampled as following's is, over the same reads of the API: the most either reaches.
  const idleSamples = [rssMb(server.pid)];
  const sampling = setInterval(() => idleSamples.push(rssMb(server.pid)), 50);
  let idleLoad: Awaited<ReturnType<typeof load>> | null;
  try {
    idleLoad = measureLoad ? await load(Number(values.seconds)) : null;
  } finally {
    clearInterval(sampling);
  }
  const idleRss = Math.max(...idleSamples);

  // The same reads while two busy loops of the lowest priority there is (SCHED_IDLE) fill both cores:
  // what any work that keeps this machine's cores busy costs the API however little it asks for them.
  let spinning: PacedResult | null = null;
  if (measureLoad) {
    const lowest = Bun.which("chrt") ? ["chrt", "-i", "0"] : ["nice", "-n", "19"];
    const spinners = [0, 1].map(() => workspace.track(Bun.spawn([...lowest, "sh", "-c", "while :; do :; done"])));
    try {
      spinning = await load(Number(values.seconds));
    } finally {
      for (const spinner of spinners) spinner.kill();
    }
  }

  // The floor over the first half.
  await publish("floor", HALF);
  const floorProcess = Bun.spawn([process.execPath, join(ROOT, "bench/support/ct_floor.ts"), join(dir, "floor.json"), String(HALF), String(ORGANIZATIONS * WATCHES_PER_ORGANIZATION)], { stdout: "pipe", stderr: "inherit" });
  // The same reads while the floor runs: what the logs' traffic on this machine costs the API, certkeeper aside.
  const beside = measureLoad ? load(Number(values.seconds)) : null;
  const floor = JSON.parse(await new Response(floorProcess.stdout).text()) as { entries: number; seconds: number; cpuSeconds: number; idleRssMb: number; maxRssMb: number };
  await floorProcess.exited;
  const besideFloor = await beside;

  const stats = async () => (await (await fetch(`${control}/stats`)).json()) as Record<string, { sent: Record<string, number>; firstEntriesAt: Record<string, number> }>;
  /**
   * Publishes `size` to the follower and waits until both logs are read to it, sampling memory. Timed
   * from the first request for entries (a caught-up log's head is read every 30 s: the wait for the
   * new head is not the follower's speed), CPU from the publication.
   */
  const follow = async (size: number, during?: (started: Promise<void>) => Promise<PacedResult>) => {
    const rss: number[] = [];
    const logsBefore = cpuSeconds(logProcess.pid);
    const benchBefore = process.cpuUsage();
    const cpuBefore = cpuSeconds(server.pid);
    const threadsBefore = processThreadCpu(server.pid);
    await publish("follow", size);
    let startedAt = 0;
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const loading = during?.(started);
    for (;;) {
      if (!startedAt) {
        const first = await stats();
        const asked = [first.tiled!.firstEntriesAt.follow, first.rfc6962!.firstEntriesAt.follow].filter((t): t is number => t !== undefined);
        if (asked.length > 0) {
          startedAt = Math.min(...asked);
          markStarted();
        }
      }
      if (startedAt) rss.push(rssMb(server.pid));
      const shown = await ctLogs();
      const errors = shown.map((log) => log.lastError).filter(Boolean);
      if (errors.length > 0) throw new Error(`the follower refused a log: ${errors.join("; ")}`);
      if (shown.every((log) => log.position === size)) break;
      await Bun.sleep(50);
    }
    const seconds = (Date.now() - startedAt) / 1000;
    const cpu = cpuSeconds(server.pid) - cpuBefore;
    const threads = threadCpuSince(threadsBefore, processThreadCpu(server.pid));
    const logsCpu = cpuSeconds(logProcess.pid) - logsBefore;
    const bench = process.cpuUsage(benchBefore);
    return { seconds, cpu, threads, rss, logsCpu, benchCpu: (bench.user + bench.system) / 1e6, load: await loading };
  };
  const first = await follow(HALF);
  const estimate = (first.seconds * (ENTRIES - HALF)) / HALF;
  const second = await follow(
    ENTRIES,
    measureLoad
      ? async (started) => {
          await started;
          return load(Math.max(1, Math.floor(estimate * 0.6)));
        }
      : undefined,
  );
  const served = await stats();

  server.kill("SIGTERM");
  await server.exited;
  const check = await openLibsqlStore({ url: databaseUrl });
  let events = 0;
  for (const org of await check.organizations.list()) {
    events += (await check.events.list({ organizationId: org.id, mode: "live" }, { limit: 100 })).filter((event) => event.type === "certificate.issued").length;
  }
  await check.close();

  const followerRate = (2 * HALF) / first.seconds;
  const floorRate = floor.entries / floor.seconds;
  const rss = [...first.rss, ...second.rss];
  const maxRss = Math.max(...rss);
  const bytesPerEntry = (kind: string) => (served[kind]?.sent.follow ?? 0) / ENTRIES;
  console.log(`  floor      ${num(floorRate).padStart(9)} entries/s   CPU ${num((floor.cpuSeconds * 1e6) / floor.entries, 1)} µs/entry`);
  console.log(
    `  follower   ${num(followerRate).padStart(9)} entries/s   CPU ${num((first.cpu * 1e6) / (2 * HALF), 1)} µs/entry   ` +
      `ratio ${(followerRate / floorRate).toFixed(2)}x (goal >= 0.7)`,
  );
  console.log(`             by thread (µs/entry): ${cpuShares(first.threads, 2 * HALF)}`);
  console.log(`             beside it (µs/entry): the logs' process ${num((first.logsCpu * 1e6) / (2 * HALF), 1)}, this benchmark ${num((first.benchCpu * 1e6) / (2 * HALF), 1)}`);
  console.log(`  memory     idle at most ${num(idleRss)} MB, max ${num(maxRss)} MB while following (+${num(maxRss - idleRss)} MB; goal <= 50)`);
  console.log(`             the floor: ${num(floor.idleRssMb)} MB before reading, at most ${num(floor.maxRssMb)} MB while reading (+${num(floor.maxRssMb - floor.idleRssMb)} MB)`);
  console.log(`             samples across the run (MB): ${[0.1, 0.25, 0.5, 0.75, 1].map((f) => num(rss[Math.min(rss.length - 1, Math.floor(f * (rss.length - 1)))]!)).join(", ")}`);
  const during = second.load;
  if (during && idleLoad) console.log(
    `  GET /v1/certificates/{id} p99 at ${values.rate} requests/s: idle ${idleLoad.p99Ms.toFixed(2)} ms, while following ${during.p99Ms.toFixed(2)} ms ` +
      `(${(during.p99Ms / idleLoad.p99Ms).toFixed(2)}x; goal <= 1.5)   [p50 ${idleLoad.p50Ms.toFixed(2)} vs ${during.p50Ms.toFixed(2)} ms; ${idleLoad.errors + during.errors} errors]`,
  );
  if (besideFloor) {
    console.log(
      `             while the floor reads the same logs (this machine's share, certkeeper idle): p99 ${besideFloor.p99Ms.toFixed(2)} ms, p50 ${besideFloor.p50Ms.toFixed(2)} ms`,
    );
  }
  if (spinning && idleLoad) {
    console.log(
      `             while two lowest-priority busy loops fill both cores (certkeeper idle): p99 ${spinning.p99Ms.toFixed(2)} ms ` +
        `(${(spinning.p99Ms / idleLoad.p99Ms).toFixed(2)}x idle), p50 ${spinning.p50Ms.toFixed(2)} ms`,
    );
  }
  console.log(
    `  bandwidth  tile log ${num(bytesPerEntry("tiled"))} bytes/entry (gzip), RFC 6962 log ${num(bytesPerEntry("rfc6962"))} bytes/entry: ` +
      `${num(bytesPerEntry("tiled"))} MB and ${num(bytesPerEntry("rfc6962"))} MB per million entries`,
  );
  // µs per entry is CPU seconds per million entries.
  console.log(`  per day    ${num((first.cpu * 1e6) / (2 * HALF), 1)} CPU seconds per million entries; at ${num(followerRate)} entries/s: ${num((followerRate * 86_400) / 1e6)} million entries a day`);
  console.log(`  events     ${events} certificate.issued raised, ${logs.matching} issuances named a watched domain (each in both logs)`);
  if (events !== logs.matching) throw new Error(`expected ${logs.matching} events, got ${events}`);
} finally {
  cleanup();
}
