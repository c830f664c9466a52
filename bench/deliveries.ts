/**
 * Benchmark (d): fair deliveries, with real webhook receivers in a process of their own.
 *
 * 1. One organization has `--dead` (200) deliveries queued to black holes (servers that accept the
 *    connection and never answer; each attempt waits the full 10 s timeout); then another
 *    organization's alert is raised for a receiver that answers at once. Prints that alert's delay
 *    beside the receiver's bare round trip (target: at most 2 s beyond it).
 * 2. `--certificates` (10,000) certificates of `--organizations` (100) organizations cross a threshold
 *    at once: their events are in the outbox together (as the checks that raised them write them) when
 *    the deliverer starts. Prints how long until all are delivered, and the p99 delay per organization.
 *
 * The outbox is the embedded libSQL database; the HTTP transport is the real one (undici, guarded
 * connect). Figures on a shared machine are noisy.
 *
 *   bun bench/deliveries.ts [--dead 200] [--certificates 10000] [--organizations 100]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_CONFIG, type Config } from "../core/config/config.ts";
import { createCore, type Core } from "../core/app/create_core.ts";
import { silentLogger } from "../core/base/log.ts";
import { newId } from "../core/base/ids.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { presentCertificate } from "../core/certificates/present.ts";
import type { DeliveryRecord, EventRecord, Scope } from "../core/base/records.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { sampleCertificate } from "./support/sample.ts";

const { values } = parseArgs({
  options: { dead: { type: "string", default: "200" }, certificates: { type: "string", default: "10000" }, organizations: { type: "string", default: "100" } },
});
const DEAD = Number(values.dead);
const CERTIFICATES = Number(values.certificates);
const ORGANIZATIONS = Number(values.organizations);
const HEALTHY_SERVERS = 10;

const child = Bun.spawn([process.execPath, resolve(import.meta.dir, "support/webhook_receivers.ts"), "--healthy", String(HEALTHY_SERVERS), "--holes", "4"], {
  stdout: "pipe",
  stderr: "inherit",
});
const { value } = await child.stdout.getReader().read();
const ports: { healthy: number[]; holes: number[] } = JSON.parse(new TextDecoder().decode(value).split("\n")[0]!);

interface Received {
  path: string;
  webhookId: string;
  at: number;
}
async function received(): Promise<Received[]> {
  const lists = await Promise.all(ports.healthy.map(async (port) => (await fetch(`http://127.0.0.1:${port}/received`)).json() as Promise<Received[]>));
  return lists.flat();
}

/** A core on a fresh database file, with the real transports; its deliverer not started yet. */
async function world() {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-deliveries-"));
  const store = await openLibsqlStore({ url: `file:${join(dir, "bench.db")}` });
  const config: Config = { ...DEFAULT_CONFIG, allowPrivateTargets: true, logLevel: "error" };
  const transports = createTransports(config, TrustStore.system());
  const core = createCore({ config, store, logger: silentLogger, transports });
  return {
    core,
    async close() {
      await core.stop();
      await transports.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function organizationWithWebhooks(core: Core, urls: string[]): Promise<{ scope: Scope; channelIds: string[] }> {
  const org = await core.services.admin.createOrganization({ name: `Bench ${newId("org")}`, plan: "enterprise" });
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channelIds: string[] = [];
  for (const [i, url] of urls.entries()) {
    const id = newId("ch");
    const now = Date.now();
    await core.services.store.channels.insert(
      { ...scope, id, type: "webhook", name: `Hook ${i}`, enabled: true, filter: null, config: { url, headers: {} }, signingSecret: `whsec_${Buffer.from(id).toString("base64")}`, createdAt: now, updatedAt: now },
      { limit: 1000 },
    );
    channelIds.push(id);
  }
  return { scope, channelIds };
}

/** One certificate.expiring event with a pending delivery to each channel, as a check writes it. */
async function raise(core: Core, scope: Scope, channelIds: string[], n: number): Promise<void> {
  const now = Date.now();
  const certificate = sampleCertificate(scope, n, now);
  const event: EventRecord = { ...scope, id: newId("evt"), type: "certificate.expiring", certificateId: certificate.id, data: { certificate: presentCertificate(certificate, now), threshold: 30 }, createdAt: now };
  const deliveries: DeliveryRecord[] = channelIds.map((channelId) => ({ eventId: event.id, channelId, status: "pending", attempts: 0, nextAttemptAt: now, lastError: null, updatedAt: now }));
  await core.services.store.events.insert(event, deliveries);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const median = (list: number[]) => percentile([...list].sort((a, b) => a - b), 50);

// 1. Dead ends of one organization, one healthy alert of another.
{
  const { core, close } = await world();
  const holes = ports.holes.map((port) => `http://127.0.0.1:${port}/dead`);
  const perEvent = 20;
  const x = await organizationWithWebhooks(core, Array.from({ length: perEvent }, (_, i) => `${holes[i % holes.length]}/${i}`));
  for (let i = 0; i < DEAD / perEvent; i++) await raise(core, x.scope, x.channelIds, i);
  core.services.deliveries!.loop.start();
  await Bun.sleep(1500); // X's attempts are hanging now

  const floor: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    await fetch(`http://127.0.0.1:${ports.healthy[0]}/floor`, { method: "POST", body: "{}" });
    floor.push(performance.now() - started);
  }
  const y = await organizationWithWebhooks(core, [`http://127.0.0.1:${ports.healthy[0]}/y`]);
  const raisedAt = Date.now();
  await raise(core, y.scope, y.channelIds, 0);
  core.services.deliveries!.poke(); // as the check that raises an event does
  let arrival: Received | undefined;
  while (!arrival) {
    await Bun.sleep(5);
    arrival = (await received()).find((r) => r.path === "/y");
    if (Date.now() - raisedAt > 120_000) throw new Error("the healthy delivery never arrived");
  }
  const delay = arrival.at - raisedAt;
  console.log(`1. ${DEAD} dead-end deliveries of one organization queued (10 s timeout each), then one alert of another`);
  console.log(`   healthy delivery arrived after ${delay} ms; its bare round trip: ${median(floor).toFixed(1)} ms (median of 20)`);
  console.log(`   beyond its round trip: ${(delay - median(floor)).toFixed(0)} ms (target <= 2000 ms)`);
  await close();
}

// 2. Many certificates of many organizations crossing a threshold at once.
{
  const { core, close } = await world();
  const perOrganization = CERTIFICATES / ORGANIZATIONS;
  const before = (await received()).length;
  const organizations: string[] = [];
  const insertStarted = performance.now();
  for (let o = 0; o < ORGANIZATIONS; o++) {
    const url = `http://127.0.0.1:${ports.healthy[o % HEALTHY_SERVERS]}/org/${o}`;
    const { scope, channelIds } = await organizationWithWebhooks(core, [url]);
    organizations.push(scope.organizationId);
    for (let i = 0; i < perOrganization; i++) await raise(core, scope, channelIds, o * perOrganization + i);
  }
  const insertSeconds = (performance.now() - insertStarted) / 1000;
  const started = Date.now();
  core.services.deliveries!.loop.start();
  let all: Received[] = [];
  for (;;) {
    await Bun.sleep(250);
    all = (await received()).filter((r) => r.path.startsWith("/org/"));
    if (all.length - 0 >= CERTIFICATES && (await core.services.store.events.countPending()) === 0) break;
    if (Date.now() - started > 600_000) throw new Error(`only ${all.length} of ${CERTIFICATES} delivered in 10 minutes`);
  }
  void before;
  const finished = Math.max(...all.map((r) => r.at));
  const byOrganization = new Map<string, number[]>();
  for (const r of all) byOrganization.set(r.path, [...(byOrganization.get(r.path) ?? []), r.at - started]);
  const p99s = [...byOrganization.values()].map((delays) => percentile(delays.sort((a, b) => a - b), 99)).sort((a, b) => a - b);
  const firsts = [...byOrganization.values()].map((delays) => delays[0]!).sort((a, b) => a - b);
  const copies = all.length - new Set(all.map((r) => r.webhookId)).size;
  console.log(`2. ${CERTIFICATES} certificates of ${ORGANIZATIONS} organizations crossing a threshold at once (outbox written in ${insertSeconds.toFixed(1)} s)`);
  console.log(`   all ${all.length} delivered in ${((finished - started) / 1000).toFixed(2)} s (${((all.length / (finished - started)) * 1000).toFixed(0)}/s), ${copies} copies`);
  console.log(
    `   p99 delay per organization: best ${(p99s[0]! / 1000).toFixed(2)} s, median ${(median(p99s) / 1000).toFixed(2)} s, worst ${(p99s.at(-1)! / 1000).toFixed(2)} s`,
  );
  console.log(`   first delivery per organization: all ${ORGANIZATIONS} within ${(firsts.at(-1)! / 1000).toFixed(2)} s of the start`);
  await close();
}

child.kill();
process.exit(0);
