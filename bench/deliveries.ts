/**
 * Benchmark (d): fair deliveries, as users run certkeeper: started as `npm start` starts it
 * (`certkeeper serve`, a process of its own, the embedded libSQL database file, the default log level,
 * its output in a file), the webhook receivers in a second process (bench/support/webhook_receivers.ts:
 * HTTP servers that answer 200 at once and note when each request arrived, and black holes that accept
 * connections and never answer), and the bench observing from a third.
 *
 * 1. One organization has `--dead` (200) deliveries queued to black holes (10 events, each to 20
 *    webhook channels pointing at them; each attempt waits the full 10 s timeout). They are written to
 *    the database file before `serve` starts, through the real store (`openLibsqlStore` on that file,
 *    then closed): a server restarting onto a full outbox. Once `serve` answers /readyz and holds
 *    connections open to the black holes, another organization (an owner key made with the CLI, its
 *    webhook channel created with POST /v1/channels) adds a certificate with POST /v1/certificates
 *    (`alertPolicy: "days"`) whose TLS server (bench/support/tls_server.ts `--days-left 5`, another
 *    process) presents a leaf 5 days from expiry: the add's first check raises
 *    `certificate.expiring` (threshold 7) in its own write, as any user's add would. Prints that
 *    alert's delay from when it was raised (the event's createdAt, GET /v1/events) to its arrival at the
 *    receiver, beside the receiver's bare round trip from this process (target: at most 2 s beyond it).
 * 2. `--certificates` (10,000) certificates' `certificate.expiring` events of `--organizations` (100)
 *    organizations (one webhook channel each) are written to a fresh database file as in 1 (organizations
 *    as `org create` makes them, channels and events through the store), then `serve` starts on it.
 *    Prints how long from the serve process's start (spawn) until all are delivered (and the rate), the
 *    copies received (must be 0), the p99 delay per organization (best/median/worst) and the latest of
 *    the organizations' first deliveries, all from the spawn; the startup (spawn to /readyz answering)
 *    is printed beside them. After `serve` stops, the outbox is read again: no delivery may be pending.
 *    The floors, in this process, 32 in flight (as many as certkeeper's deliverer keeps): POSTs of as
 *    many bodies of the same size to the same receivers, each recorded by one UPDATE of an outbox row
 *    in a database file kept as certkeeper keeps it (the least a delivery that is written down needs),
 *    and the same POSTs bare; the ratios are certkeeper's rate from /readyz against each.
 *
 * Timestamps are wall clock (Date.now()) in each process of the one machine. Figures on a shared
 * machine are noisy. certkeeper's logs are left in the workspace (removed at the end) as
 * certkeeper-1.log and certkeeper.log.
 *
 *   npm run bench:deliveries
 *   bun bench/deliveries.ts [--dead 200] [--certificates 10000] [--organizations 100]
 */
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { parseArgs } from "node:util";
import { newId } from "../core/base/ids.ts";
import { systemClock } from "../core/base/time.ts";
import { presentCertificate } from "../core/certificates/present.ts";
import { Admin } from "../core/accounts/admin.ts";
import type { DeliveryRecord, EventRecord, Scope } from "../core/base/records.ts";
import type { Store } from "../core/store/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { sampleCertificate } from "./support/sample.ts";
import { benchWorkspace, ROOT, serverPort } from "./support/workspace.ts";
import { cpuShares, machineCpu, processThreadCpu } from "./support/thread_cpu.ts";

const { values } = parseArgs({
  options: { dead: { type: "string", default: "200" }, certificates: { type: "string", default: "10000" }, organizations: { type: "string", default: "100" } },
});
const DEAD = Number(values.dead);
const CERTIFICATES = Number(values.certificates);
const ORGANIZATIONS = Number(values.organizations);
const HEALTHY_SERVERS = 10;
const DEAD_PER_EVENT = 20;
/** Attempts certkeeper's deliverer keeps in flight (core/app/create_core.ts): the floor keeps as many. */
const DELIVERY_CONCURRENCY = 32;
const DOMAIN = "bench.certkeeper.test";

interface Received {
  path: string;
  webhookId: string;
  at: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const median = (list: number[]) => percentile([...list].sort((a, b) => a - b), 50);

const workspace = benchWorkspace("certkeeper-bench-deliveries-");
const { dir } = workspace;
const benchStarted = performance.now();
try {
  const receivers = await workspace.spawnReporting([
    process.execPath,
    join(ROOT, "bench/support/webhook_receivers.ts"),
    "--healthy",
    String(HEALTHY_SERVERS),
    "--holes",
    "4",
  ]);
  const ports = receivers.info as { healthy: number[]; holes: number[] };
  const received = async (): Promise<Received[]> =>
    (await Promise.all(ports.healthy.map(async (port) => (await fetch(`http://127.0.0.1:${port}/received`)).json() as Promise<Received[]>))).flat();
  const holding = async (): Promise<number> => (await fetch(`http://127.0.0.1:${ports.healthy[0]}/holes`)).json() as Promise<number>;

  // A TLS server whose leaf expires in 5 days: a certificate added for it is within the 7-day threshold.
  const tls = await workspace.spawnReporting([process.execPath, join(ROOT, "bench/support/tls_server.ts"), "--days-left", "5"]);
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, tls.info.rootPem);
  // serverEnv sets CERTKEEPER_ALLOW_PRIVATE_TARGETS=true: the receivers are on loopback.
  const env = workspace.serverEnv({ domain: DOMAIN, caFile });

  /** The database file `serve` runs on, opened by this process through the real store while no server runs on it, then closed; seconds taken. */
  async function withStore(databaseUrl: string, write: (store: Store, admin: Admin) => Promise<void>): Promise<number> {
    const started = performance.now();
    const store = await openLibsqlStore({ url: databaseUrl });
    try {
      await write(store, new Admin(store, systemClock));
    } finally {
      await store.close();
    }
    return (performance.now() - started) / 1000;
  }

  /** An organization as `org create --plan enterprise` makes it, with a webhook channel to each of `urls`. */
  async function organizationWithWebhooks(store: Store, admin: Admin, urls: string[]): Promise<{ scope: Scope; channelIds: string[] }> {
    const org = await admin.createOrganization({ name: `Bench ${newId("org")}`, plan: "enterprise" });
    const scope: Scope = { organizationId: org.id, mode: "live" };
    const channelIds: string[] = [];
    for (const [i, url] of urls.entries()) {
      const id = newId("ch");
      const now = Date.now();
      const inserted = await store.channels.insert(
        { ...scope, id, type: "webhook", name: `Hook ${i}`, enabled: true, filter: null, config: { url, headers: {} }, signingSecret: `whsec_${Buffer.from(id).toString("base64")}`, createdAt: now, updatedAt: now },
        { limit: org.limits.channels },
      );
      if (!inserted) throw new Error(`channel ${i} of ${org.id} refused: the plan's channel limit is ${org.limits.channels}`);
      channelIds.push(id);
    }
    return { scope, channelIds };
  }

  /** One certificate.expiring event with a pending delivery to each channel, as a check writes it. */
  async function raise(store: Store, scope: Scope, channelIds: string[], n: number): Promise<void> {
    const now = Date.now();
    const certificate = sampleCertificate(scope, n, now);
    const event: EventRecord = { ...scope, id: newId("evt"), type: "certificate.expiring", certificateId: certificate.id, data: { certificate: presentCertificate(certificate, now), threshold: 30 }, createdAt: now };
    const deliveries: DeliveryRecord[] = channelIds.map((channelId) => ({ eventId: event.id, channelId, status: "pending", attempts: 0, nextAttemptAt: now, lastError: null, updatedAt: now }));
    await store.events.insert(event, deliveries);
  }

  /** SIGTERM, as Ctrl-C or a service manager stops it; SIGKILL if it takes longer than 20 s. */
  async function stop(child: ReturnType<typeof Bun.spawn>): Promise<void> {
    child.kill("SIGTERM");
    const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(20_000).then(() => false)]);
    if (!exited) {
      child.kill("SIGKILL");
      await child.exited;
    }
  }

  // 1. Dead ends of one organization, one healthy alert of another.
  {
    // The healthy organization: its owner's key, made with the CLI before serve starts.
    const key = await workspace.benchKey(env);
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const holes = ports.holes.map((port) => `http://127.0.0.1:${port}/dead`);
    await withStore(env.CERTKEEPER_DATABASE_URL!, async (store, admin) => {
      const x = await organizationWithWebhooks(store, admin, Array.from({ length: DEAD_PER_EVENT }, (_, i) => `${holes[i % holes.length]}/${i}`));
      for (let i = 0; i < DEAD / DEAD_PER_EVENT; i++) await raise(store, x.scope, x.channelIds, i);
    });
    const { child: server, base } = await workspace.serve(env);
    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = (await response.json()) as { data: any };
      if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
      return json.data;
    };
    await api("POST", "/v1/channels", { type: "webhook", name: "Healthy", config: { url: `http://127.0.0.1:${ports.healthy[0]}/y` } });
    // The dead organization's attempts hanging in the black holes (at most its fair share of slots).
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await holding()) === 0; ) await Bun.sleep(50);
    await Bun.sleep(1500);
    const hanging = await holding();
    if (hanging === 0) throw new Error("no attempt of the dead organization reached a black hole");

    const floor: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await fetch(`http://127.0.0.1:${ports.healthy[0]}/floor`, { method: "POST", body: "{}" });
      floor.push(performance.now() - started);
    }

    // The alert, raised as a user's add raises it.
    const posted = Date.now();
    const certificate = await api("POST", "/v1/certificates", { domain: `y.${DOMAIN}`, port: tls.info.port, alertPolicy: "days" });
    const answered = Date.now();
    let arrival: Received | undefined;
    while (!arrival) {
      await Bun.sleep(5);
      arrival = (await received()).find((r) => r.path === "/y");
      if (Date.now() - posted > 120_000) throw new Error("the healthy delivery never arrived");
    }
    const events = (await api("GET", "/v1/events?limit=10")) as Array<{ id: string; type: string; certificateId: string | null; createdAt: string }>;
    const event = events.find((e) => e.certificateId === certificate.id);
    if (!event) throw new Error(`adding the certificate raised no event (status ${certificate.status})`);
    const raisedAt = Date.parse(event.createdAt);
    const delay = arrival.at - raisedAt;
    const stillHanging = await holding();
    console.log(`1. ${DEAD} dead-end deliveries of one organization queued (10 s timeout each), then one alert of another; certkeeper serve in its own process`);
    console.log(
      `   the alert: ${event.type} raised by POST /v1/certificates (${answered - posted} ms to its 201); ` +
        `${hanging} attempts hanging in the black holes then, ${stillHanging} at its arrival`,
    );
    console.log(`   healthy delivery arrived ${delay} ms after the event was raised (${arrival.at - answered} ms after the 201); its bare round trip: ${median(floor).toFixed(1)} ms (median of 20)`);
    console.log(`   beyond its round trip: ${(delay - median(floor)).toFixed(0)} ms (target <= 2000 ms)`);
    await stop(server);
    renameSync(join(dir, "certkeeper.log"), join(dir, "certkeeper-1.log"));
  }

  // 2. Many certificates of many organizations crossing a threshold at once, in the outbox when serve starts.
  {
    const env2 = { ...env, CERTKEEPER_PORT: String(serverPort()), CERTKEEPER_DATABASE_URL: `file:${join(dir, "data2/certkeeper.db")}` };
    const perOrganization = CERTIFICATES / ORGANIZATIONS;
    const writeSeconds = await withStore(env2.CERTKEEPER_DATABASE_URL, async (store, admin) => {
      for (let o = 0; o < ORGANIZATIONS; o++) {
        const { scope, channelIds } = await organizationWithWebhooks(store, admin, [`http://127.0.0.1:${ports.healthy[o % HEALTHY_SERVERS]}/org/${o}`]);
        for (let i = 0; i < perOrganization; i++) await raise(store, scope, channelIds, o * perOrganization + i);
      }
    });
    const spawned = Date.now();
    const { child: server } = await workspace.serve(env2);
    const ready = Date.now();
    const cpuAtReady = processThreadCpu(server.pid);
    const machineAtReady = machineCpu();
    let cpuAtEnd = cpuAtReady;
    let machineAtEnd = machineAtReady;
    let all: Received[] = [];
    for (;;) {
      await Bun.sleep(250);
      all = (await received()).filter((r) => r.path.startsWith("/org/"));
      if (all.length >= CERTIFICATES) {
        cpuAtEnd = processThreadCpu(server.pid);
        machineAtEnd = machineCpu();
        break;
      }
      if (Date.now() - spawned > 600_000) throw new Error(`only ${all.length} of ${CERTIFICATES} delivered in 10 minutes`);
    }
    // A copy would come after the last first delivery: give it time to arrive, then stop the server.
    await Bun.sleep(3000);
    all = (await received()).filter((r) => r.path.startsWith("/org/"));
    await stop(server);
    let pending = -1;
    await withStore(env2.CERTKEEPER_DATABASE_URL, async (store) => {
      pending = await store.events.countPending();
    });

    const finished = Math.max(...all.map((r) => r.at));
    const firstOfEach = new Map<string, Received>();
    for (const r of all) if (!firstOfEach.has(r.webhookId)) firstOfEach.set(r.webhookId, r);
    const delivered = [...firstOfEach.values()];
    const copies = all.length - delivered.length;
    const byOrganization = new Map<string, number[]>();
    for (const r of delivered) byOrganization.set(r.path, [...(byOrganization.get(r.path) ?? []), r.at - spawned]);
    const p99s = [...byOrganization.values()].map((delays) => percentile(delays.sort((a, b) => a - b), 99)).sort((a, b) => a - b);
    const firsts = [...byOrganization.values()].map((delays) => delays[0]!).sort((a, b) => a - b);
    const seconds = (finished - spawned) / 1000;
    console.log(
      `2. ${CERTIFICATES} certificates of ${ORGANIZATIONS} organizations crossing a threshold at once, in the outbox when serve starts ` +
        `(written in ${writeSeconds.toFixed(1)} s); times from the serve process's start, /readyz answering after ${((ready - spawned) / 1000).toFixed(2)} s`,
    );
    console.log(`   all ${delivered.length} delivered in ${seconds.toFixed(2)} s (${(delivered.length / seconds).toFixed(0)}/s; ${(delivered.length / ((finished - ready) / 1000)).toFixed(0)}/s from /readyz), ${copies} copies, ${pending} pending after stop`);
    const serverCpu = new Map([...cpuAtEnd].map(([name, seconds]) => [name, seconds - (cpuAtReady.get(name) ?? 0)]));
    const serverSeconds = [...serverCpu.values()].reduce((a, b) => a + b, 0);
    const busy = (machineAtEnd.busy - machineAtReady.busy) / (machineAtEnd.busy - machineAtReady.busy + machineAtEnd.idle - machineAtReady.idle);
    console.log(`   certkeeper's CPU per delivery: ${((serverSeconds * 1e6) / delivered.length).toFixed(0)} µs (${cpuShares(serverCpu, delivered.length)}); the machine ${(busy * 100).toFixed(0)} % busy`);
    console.log(
      `   p99 delay per organization: best ${(p99s[0]! / 1000).toFixed(2)} s, median ${(median(p99s) / 1000).toFixed(2)} s, worst ${(p99s.at(-1)! / 1000).toFixed(2)} s`,
    );
    console.log(`   first delivery per organization: all ${byOrganization.size} within ${(firsts.at(-1)! / 1000).toFixed(2)} s of the start (earliest ${(firsts[0]! / 1000).toFixed(2)} s)`);

    // The floors, in this process, as many in flight as certkeeper's deliverer keeps (32): the same
    // number of POSTs of a body of the same size to the same receivers, bare; and each followed by
    // the least that records it (one UPDATE of an outbox row in its own transaction, on a database
    // file as certkeeper keeps it: WAL, synchronous NORMAL, the same driver).
    const body = JSON.stringify({ type: "certificate.expiring", data: { certificate: presentCertificate(sampleCertificate({ organizationId: "org_floor", mode: "live" }, 0, Date.now()), Date.now()), threshold: 30 } });
    const floor = async (record?: (n: number) => void): Promise<number> => {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: DELIVERY_CONCURRENCY }, async () => {
          for (let n = next++; n < CERTIFICATES; n = next++) {
            const response = await fetch(`http://127.0.0.1:${ports.healthy[n % HEALTHY_SERVERS]}/floor/${n % ORGANIZATIONS}`, {
              method: "POST",
              headers: { "content-type": "application/json", "webhook-id": `msg_floor_${n}` },
              body,
            });
            await response.arrayBuffer();
            record?.(n);
          }
        }),
      );
      return CERTIFICATES / ((performance.now() - started) / 1000);
    };
    const bareRate = await floor();
    const outbox = new Database(join(dir, "floor.db"));
    outbox.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE outbox (id INTEGER PRIMARY KEY, status TEXT NOT NULL)");
    const insert = outbox.prepare("INSERT INTO outbox (id, status) VALUES (?, 'pending')");
    outbox.transaction(() => {
      for (let n = 0; n < CERTIFICATES; n++) insert.run(n);
    })();
    const settle = outbox.prepare("UPDATE outbox SET status = 'delivered' WHERE id = ?");
    const recordedRate = await floor((n) => settle.run(n));
    outbox.close();
    const rateFromReady = delivered.length / ((finished - ready) / 1000);
    console.log(
      `   floors (${DELIVERY_CONCURRENCY} POSTs in flight of a ${body.length}-byte body to the same receivers, from this process): ` +
        `each recorded by one UPDATE ${recordedRate.toFixed(0)}/s, bare ${bareRate.toFixed(0)}/s; ` +
        `certkeeper from /readyz ${(rateFromReady / recordedRate).toFixed(2)}x the first, ${(rateFromReady / bareRate).toFixed(2)}x the bare one`,
    );
  }
  console.log(`(the whole bench: ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)`);
} finally {
  workspace.cleanup();
}
process.exit(0);
