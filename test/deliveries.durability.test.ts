/**
 * A delivery's outcome is written within moments of its answer, whatever else is being written: a
 * real `certkeeper serve` works a backlog of alerts to a real webhook receiver while 200 certificates
 * are added at once (and, in the second test, an import of many names runs beside them).
 *
 * 1. The deliverer keeps going: alerts per second during the burst are at least a fifth of what they
 *    are with nothing else written, just before and just after it (all measured in this run), and
 *    never wait a third of the burst (or a second, when it is short) between two alerts.
 * 2. Killed (SIGKILL) mid-burst and restarted, the server sends no alert again whose receiver had
 *    answered 2xx more than 50 ms before the kill: that answer was already written down.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { Admin } from "../core/accounts/admin.ts";
import { DAY, systemClock } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startServe, type ServeProcess } from "./support/cli.ts";
import { channelRecord, deliveryRecord, eventRecord } from "./support/store_conformance/mod.ts";
import { temporaryDirectory } from "./support/temp.ts";

// Server processes on a loaded machine: tens of seconds, not Bun's 5 s.
setDefaultTimeout(180_000);

const dir = temporaryDirectory("certkeeper-deliveries-");
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

/** Alerts waiting in the outbox when the server starts: more than it can send before the burst ends. */
const BACKLOG = 3000;
const BURST = 200;
const IMPORT_ITEMS = 2000;
/** The receiver answers each alert this long after it arrives (the deliverer keeps 8 in flight per organization). */
const ANSWER_AFTER_MS = 25;
/** How long before the kill an answer must have been written down. */
const RECORDED_WITHIN_MS = 50;

interface Arrival {
  webhookId: string;
  arrivedAt: number;
  answeredAt: number | null;
}

/** A webhook receiver on 127.0.0.1 that answers 204 after ANSWER_AFTER_MS and notes when each alert came and was answered. */
async function startReceiver() {
  const arrivals: Arrival[] = [];
  const server = http.createServer((req, res) => {
    const arrival: Arrival = { webhookId: String(req.headers["webhook-id"]), arrivedAt: Date.now(), answeredAt: null };
    arrivals.push(arrival);
    req.resume();
    req.on("end", () =>
      setTimeout(() => {
        arrival.answeredAt = Date.now();
        res.writeHead(204).end();
      }, ANSWER_AFTER_MS),
    );
    res.on("error", () => {});
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrivals };
}

/** A TLS server for every name under burst. and import.certkeeper.test, its certificate 10 days from expiry (each add raises an alert). */
async function expiringTarget() {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({
    issuer: rsaIntermediate,
    dnsNames: [`*.burst.${TEST_DOMAIN}`, `*.import.${TEST_DOMAIN}`],
    notAfter: new Date(Date.now() + 10 * DAY),
  });
  const tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cleanups.push(() => tls.close());
  return tls;
}

/**
 * A database with an organization, its owner's key, a webhook channel to `hookUrl`, and BACKLOG
 * alerts pending for it (as checks would have raised them while the receiver was away).
 */
async function world(name: string, hookUrl: string) {
  const databaseUrl = `file:${join(dir, `${name}.db`)}`;
  const { root } = await testPki();
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, root.certPem);
  const env = {
    CERTKEEPER_DATABASE_URL: databaseUrl,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_DELIVERY_TIMEOUT: "30s",
  };
  const store = await openLibsqlStore({ url: databaseUrl });
  let key: string;
  let backlog: Array<{ event: ReturnType<typeof eventRecord>; delivery: ReturnType<typeof deliveryRecord> }>;
  try {
    const admin = new Admin(store, systemClock);
    const org = await admin.createOrganization({ name: `Deliveries ${name}`, plan: "enterprise" });
    const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
    key = (await admin.createApiKey({ userId: user.id, name: "burst", mode: "live" })).key;
    const scope = { organizationId: org.id, mode: "live" as const };
    const now = Date.now();
    const channel = channelRecord(scope, { config: { url: hookUrl, headers: {} }, createdAt: now, updatedAt: now });
    await store.channels.insert(channel, { limit: 10 });
    backlog = Array.from({ length: BACKLOG }, (_, i) => {
      const event = eventRecord(scope, { createdAt: now });
      return { event, delivery: deliveryRecord(event.id, channel.id, { nextAttemptAt: now + i, updatedAt: now }) };
    });
  } finally {
    await store.close();
  }
  // The backlog's rows, as the store's events.insert writes them, in one transaction: one per alert
  // (3,000 commits) cost the test process about two seconds of CPU per world; and 250 rows a statement,
  // as a statement a row (6,000) cost it half a second more.
  const client = createClient({ url: databaseUrl });
  const chunks = Array.from({ length: Math.ceil(backlog.length / 250) }, (_, i) => backlog.slice(i * 250, (i + 1) * 250));
  const rows = (count: number, columns: number) => Array(count).fill(`(${Array(columns).fill("?").join(", ")})`).join(", ");
  try {
    await client.batch(
      chunks.flatMap((chunk) => [
        {
          sql: `INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES ${rows(chunk.length, 7)}`,
          args: chunk.flatMap(({ event }) => [event.id, event.organizationId, event.mode, event.type, event.certificateId, JSON.stringify(event.data), event.createdAt]),
        },
        {
          sql: `INSERT INTO deliveries (event_id, channel_id, status, attempts, next_attempt_at, last_error, updated_at, organization_id) VALUES ${rows(chunk.length, 8)}`,
          args: chunk.flatMap(({ event, delivery: d }) => [d.eventId, d.channelId, d.status, d.attempts, d.nextAttemptAt, d.lastError, d.updatedAt, event.organizationId]),
        },
      ]),
      "write",
    );
  } finally {
    client.close();
  }
  return { env, key, databaseUrl };
}

async function post(server: ServeProcess, key: string, path: string, body: unknown): Promise<number> {
  try {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0; // the server was killed
  }
}

async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

function burst(server: ServeProcess, key: string, port: number): Array<Promise<number>> {
  return Array.from({ length: BURST }, (_, i) => post(server, key, "/v1/certificates", { domain: `site-${i}.burst.${TEST_DOMAIN}`, port }));
}

/** Alerts that arrived in [from, to), per second. */
function rate(arrivals: Arrival[], from: number, to: number): number {
  return (arrivals.filter((a) => a.arrivedAt >= from && a.arrivedAt < to).length * 1000) / (to - from);
}

describe("delivery outcomes do not queue behind bulk writes", () => {
  test("during a burst of 200 adds, alerts never stop and go out at least a fifth as fast as just before it", async () => {
    const receiver = await startReceiver();
    const target = await expiringTarget();
    const { env, key } = await world("pace", receiver.url);
    const server = await startServe({ env });
    cleanups.push(() => server.stop("SIGKILL"));

    // Before: the backlog alone, once the server has warmed up.
    await until("the first alerts", () => receiver.arrivals.length >= 50);
    const idleFrom = Date.now();
    await Bun.sleep(1500);
    const idleTo = Date.now();

    const burstFrom = Date.now();
    const statuses = await Promise.all(burst(server, key, target.port));
    const burstTo = Date.now();
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    // After: the backlog alone again. The machine's other load moves between the two; the slower of
    // them is the idle pace the burst is held to.
    await Bun.sleep(1500);
    const afterTo = Date.now();
    // The backlog outlasted it all: the deliverer had work all along, so its pace is measured.
    expect(receiver.arrivals.length).toBeLessThan(BACKLOG);

    const before = rate(receiver.arrivals, idleFrom, idleTo);
    const after = rate(receiver.arrivals, burstTo, afterTo);
    const during = rate(receiver.arrivals, burstFrom, burstTo);
    console.log(
      `alerts/s: ${before.toFixed(0)} before the burst, ${during.toFixed(0)} during it (${((burstTo - burstFrom) / 1000).toFixed(2)} s), ${after.toFixed(0)} after it`,
    );
    // The longest wait between two alerts while the adds were under way: a deliverer whose outcomes
    // queued behind the adds' writes would stop for the whole burst.
    const inBurst = receiver.arrivals.filter((a) => a.arrivedAt >= burstFrom && a.arrivedAt < burstTo).map((a) => a.arrivedAt);
    const longestGap = Math.max(...[burstFrom, ...inBurst, burstTo].map((at, i, all) => (i === 0 ? 0 : at - all[i - 1]!)));
    console.log(`longest wait between two alerts during the burst: ${longestGap} ms`);
    expect(Math.min(before, after)).toBeGreaterThan(0);
    // On two cores the 200 adds' TLS handshakes (both ends: the test serves them) take most of the
    // machine, so the deliverer's share shrinks with it; what is asserted is that it never stops.
    expect(during).toBeGreaterThanOrEqual(Math.min(before, after) / 5);
    // Never a wait of a third of the burst (alone on the machine it is 2 s and the longest wait 0.3 s;
    // beside the rest of the suite 9 s and 2 s): stopped for the burst, it would be the whole of it.
    expect(longestGap).toBeLessThan(Math.max(1000, (burstTo - burstFrom) / 3));
    expect(await server.stop()).toBe(0);
  });

  test("killed mid-burst (200 adds and an import), the restarted server sends no alert again that was answered 50 ms before the kill", async () => {
    const receiver = await startReceiver();
    const target = await expiringTarget();
    const { env, key, databaseUrl } = await world("kill", receiver.url);
    const first = await startServe({ env });
    cleanups.push(() => first.stop("SIGKILL"));
    await until("the first alerts", () => receiver.arrivals.length >= 50);

    const burstFrom = Date.now();
    const items = Array.from({ length: IMPORT_ITEMS }, (_, i) => ({ domain: `site-${i}.import.${TEST_DOMAIN}`, port: target.port }));
    expect(await post(first, key, "/v1/imports", { certificates: items })).toBe(202);
    let added = 0;
    const adds = burst(first, key, target.port).map((answer) => answer.then((status) => (status === 201 && added++, status)));
    // Mid-burst: some adds answered, most still under way, the import running.
    // ... and an alert's attempt under way (leased in the database, its answer not yet come).
    await until("a quarter of the adds, an attempt under way", () => added >= BURST / 4 && receiver.arrivals.some((a) => a.answeredAt === null));
    const killedAt = Date.now();
    expect(await first.stop("SIGKILL")).not.toBe(0);
    await Promise.all(adds);
    expect(added).toBeLessThan(BURST);
    // Attempts under way at the kill are answered (into a closed connection) or abandoned by now.
    await Bun.sleep(ANSWER_AFTER_MS * 4);
    // Alerts went out during the burst, and were answered well before the kill: each must stay delivered.
    const answeredBefore = receiver.arrivals.filter((a) => a.answeredAt !== null && a.answeredAt < killedAt - RECORDED_WITHIN_MS);
    const answeredInBurst = answeredBefore.filter((a) => a.arrivedAt >= burstFrom);
    expect(answeredInBurst.length).toBeGreaterThan(0);

    // What the dead process held (attempts under way, answered or not, and not written down) is sent
    // again once its leases run out, in 2 minutes: the test lets that time pass at once, and puts
    // them first in the outbox, ahead of the backlog never sent.
    const db = createClient({ url: databaseUrl });
    cleanups.push(async () => db.close());
    const { rows } = await db.execute("SELECT event_id FROM deliveries WHERE status = 'pending' AND lease_owner IS NOT NULL");
    const heldAtKill = new Set(rows.map((row) => String(row.event_id)));
    expect(heldAtKill.size).toBeGreaterThan(0);
    await db.execute("UPDATE deliveries SET next_attempt_at = 0 WHERE status = 'pending' AND lease_owner IS NOT NULL");

    const second = await startServe({ env });
    cleanups.push(() => second.stop("SIGKILL"));
    await until(
      "every alert held at the kill to be delivered",
      async () => {
        const delivered = new Set(receiver.arrivals.filter((a) => a.answeredAt !== null && a.answeredAt > killedAt).map((a) => a.webhookId));
        return [...heldAtKill].every((id) => delivered.has(id));
      },
      120_000,
    );
    expect(await second.stop()).toBe(0);

    // Nothing lost; copies only of alerts whose answer came too late to be written down before the kill.
    const byId = new Map<string, Arrival[]>();
    for (const arrival of receiver.arrivals) byId.set(arrival.webhookId, [...(byId.get(arrival.webhookId) ?? []), arrival]);
    const copies = [...byId.values()].filter((list) => list.length > 1);
    const late = copies.map((list) => killedAt - list[0]!.answeredAt!).filter((before) => before > RECORDED_WITHIN_MS);
    console.log(
      `killed ${killedAt - burstFrom} ms into the burst; answered before the kill: ${answeredBefore.length} (${answeredInBurst.length} during the burst); sent again after the restart: ${copies.length}, of which answered more than ${RECORDED_WITHIN_MS} ms before the kill: ${late.length} (${late.map((ms) => `${ms} ms`).join(", ")})`,
    );
    expect(late).toEqual([]);
  });
});
