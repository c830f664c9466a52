/**
 * Several processes on one database (CONTRACT §9): two `serve` processes on one real libSQL server
 * check each certificate once per interval between them, deliver each alert once, share rate limits
 * and see revocations at once; and a process killed outright loses no notification and, restarted,
 * sends none twice.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Admin } from "../core/accounts/admin.ts";
import { systemClock, DAY } from "../core/base/time.ts";
import type { Store } from "../core/store/ports.ts";
import { hashApiKey } from "../core/auth/api_key.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, refusedPort, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startSqld, type SqldServer } from "./support/sqld.ts";
import { callServe, startServe, type ServeProcess } from "./support/cli.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";

// Server processes, a libSQL server and seconds of real scheduling: more than Bun's 5 s default.
setDefaultTimeout(30_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-scale-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

async function environment(databaseUrl: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const { root } = await testPki();
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, root.certPem);
  return {
    CERTKEEPER_DATABASE_URL: databaseUrl,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    // Fixed-day thresholds (Part I): a 5-day certificate raises one certificate.expiring.
    CERTKEEPER_ALERT_POLICY: "days",
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_TLS_TIMEOUT: "2s",
    ...extra,
  };
}

async function tlsServer(domain: string, daysLeft: number): Promise<TlsTestServer> {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + daysLeft * DAY + 3_600_000) });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cleanups.push(() => server.close());
  return server;
}

async function owner(store: Store, limits: { requestsPerMinute?: number } = {}) {
  const admin = new Admin(store, systemClock);
  const org = await admin.createOrganization({ name: `Scale ${crypto.randomUUID()}`, plan: "pro", limits });
  const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
  const newKey = async () => (await admin.createApiKey({ userId: user.id, name: "scale", mode: "live" })).key;
  return { admin, org, newKey };
}


describe("two server processes on one libSQL server", () => {
  let sqld: SqldServer;
  let store: Store;
  let a: ServeProcess;
  let b: ServeProcess;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    sqld = await startSqld();
    cleanups.push(() => sqld.close());
    store = await openLibsqlStore({ url: sqld.url });
    cleanups.push(() => store.close());
    const env = await environment(sqld.url, { CERTKEEPER_CHECK_INTERVAL: "1s", CERTKEEPER_DELIVERY_RETRY: "300ms,1s" });
    [a, b] = await Promise.all([startServe({ env }), startServe({ env })]);
    cleanups.push(() => a.stop(), () => b.stop());
    receiver = await startHttpReceiver();
    cleanups.push(() => receiver.close());
  });

  test("each certificate is checked once per interval between them, and each alert delivered once", async () => {
    const { newKey } = await owner(store);
    const key = await newKey();
    expect((await callServe(a, key, "POST", "/v1/channels", { type: "webhook", name: "hook", config: { url: `${receiver.url}/hook` } })).status).toBe(201);
    const servers: TlsTestServer[] = [];
    for (let i = 0; i < 4; i++) {
      const domain = `scale${i}.${TEST_DOMAIN}`;
      const server = await tlsServer(domain, i === 0 ? 5 : 90);
      servers.push(server);
      const added = await callServe(i % 2 === 0 ? a : b, key, "POST", "/v1/certificates", { domain, port: server.port });
      expect(added.status).toBe(201);
    }
    const startConnections = servers.map((s) => s.connections());
    const started = Date.now();
    await Bun.sleep(6_000);
    const seconds = (Date.now() - started) / 1000;
    const checks = servers.map((s, i) => s.connections() - startConnections[i]!);
    // One check per second of interval between them; both processes checking would double it. (The
    // lower bound only shows checks happen: a loaded machine may delay some.)
    for (const count of checks) {
      expect(count).toBeGreaterThanOrEqual(Math.floor(seconds / 3));
      expect(count).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    }
    // The 5-day certificate raised one certificate.expiring, delivered once, by one of the two.
    const hooks = receiver.requests.filter((r) => r.path === "/hook");
    expect(hooks.map((r) => [r.json.type, r.json.data.threshold])).toEqual([["certificate.expiring", 7]]);
    const events = await callServe(b, key, "GET", "/v1/events");
    expect(events.body.data.map((e: any) => [e.type, e.deliveries.map((d: any) => [d.status, d.attempts])])).toEqual([
      ["certificate.expiring", [["delivered", 1]]],
    ]);
  });

  test("the rate limit holds across both processes together", async () => {
    const { newKey } = await owner(store, { requestsPerMinute: 6 });
    const key = await newKey();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await callServe(i % 2 === 0 ? a : b, key, "GET", "/v1/certificates")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  });

  test("a key revoked through one process is refused by the other on its very next request", async () => {
    const { admin, newKey } = await owner(store);
    const key = await newKey();
    expect((await callServe(a, key, "GET", "/v1/certificates")).status).toBe(200);
    expect((await callServe(b, key, "GET", "/v1/certificates")).status).toBe(200);
    const grant = await store.apiKeys.findByHash(hashApiKey(key));
    await admin.revokeApiKey(grant!.key.id);
    expect((await callServe(b, key, "GET", "/v1/certificates")).body.error.code).toBe("expired_api_key");
    expect((await callServe(a, key, "GET", "/v1/certificates")).body.error.code).toBe("expired_api_key");
  });

  test("a process killed holding sqld's write lock: keyed requests wait it out and succeed, health answers at once, readiness says 503", async () => {
    const { newKey } = await owner(store);
    const key = await newKey();
    // Another client of the same sqld takes the write lock (BEGIN IMMEDIATE) and dies without a word.
    const holder = Bun.spawn(
      [
        process.execPath,
        "-e",
        `import { createClient } from "@libsql/client";
         const tx = await createClient({ url: process.env.SQLD_URL }).transaction("write");
         await tx.execute("SELECT 1");
         console.log("held");
         await new Promise(() => {});`,
      ],
      { cwd: join(import.meta.dir, ".."), env: { ...process.env, SQLD_URL: sqld.url }, stdout: "pipe", stderr: "pipe" },
    );
    cleanups.push(async () => holder.kill("SIGKILL"));
    const reader = holder.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("held");
    holder.kill("SIGKILL");
    await holder.exited;

    const timed = async <T>(work: () => Promise<T>) => {
      const started = performance.now();
      const value = await work();
      return { value, ms: performance.now() - started };
    };
    const [health, ready, keyed] = await Promise.all([
      timed(async () => (await fetch(`${a.url}/healthz`)).status),
      timed(async () => (await fetch(`${a.url}/readyz`)).status),
      timed(async () => (await callServe(a, key, "GET", "/v1/certificates")).status),
    ]);
    expect(health).toMatchObject({ value: 200 });
    expect(health.ms).toBeLessThan(1_000);
    // The database does not take a write within 2 s: not ready for traffic meanwhile.
    expect(ready.value).toBe(503);
    // The request with a key waits for sqld to take the lock back (5 s), then is served as ever.
    expect(keyed.value).toBe(200);
    expect(keyed.ms).toBeGreaterThan(2_000);
    expect(keyed.ms).toBeLessThan(9_000);
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
    expect((await callServe(b, key, "GET", "/v1/certificates")).status).toBe(200);
  });

  test("both stop on SIGTERM with exit code 0", async () => {
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
  });
});

describe("a process killed outright", () => {
  test("loses no pending notification, and its successor sends each exactly once", async () => {
    const databaseUrl = `file:${join(dir, "crash.db")}`;
    const env = await environment(databaseUrl, { CERTKEEPER_DELIVERY_RETRY: "3s,3s,3s,3s,3s,3s" });
    const setup = await openLibsqlStore({ url: databaseUrl });
    const apiKey = await (await owner(setup)).newKey();
    await setup.close();

    // The receiver's port is known but nothing listens yet: every delivery attempt is refused.
    const port = await refusedPort();
    const first = await startServe({ env });
    expect((await callServe(first, apiKey, "POST", "/v1/channels", { type: "webhook", name: "hook", config: { url: `http://127.0.0.1:${port}/hook` } })).status).toBe(201);
    const soon = await tlsServer(`crash1.${TEST_DOMAIN}`, 5);
    const later = await tlsServer(`crash2.${TEST_DOMAIN}`, 2);
    expect((await callServe(first, apiKey, "POST", "/v1/certificates", { domain: `crash1.${TEST_DOMAIN}`, port: soon.port })).status).toBe(201);
    expect((await callServe(first, apiKey, "POST", "/v1/certificates", { domain: `crash2.${TEST_DOMAIN}`, port: later.port })).status).toBe(201);
    // Killed once both first attempts were refused and recorded: each delivery waits for its retry,
    // leased to no one (a delivery leased to a dead process waits out its lease, minutes).
    const refusedOnce = Date.now() + 15_000;
    for (;;) {
      const events = (await callServe(first, apiKey, "GET", "/v1/events")).body.data as any[];
      if (events.length === 2 && events.every((e) => e.deliveries[0]?.attempts >= 1 && e.deliveries[0]?.status === "pending")) break;
      if (Date.now() > refusedOnce) throw new Error(`the first attempts were not recorded: ${JSON.stringify(events.map((e) => e.deliveries))}`);
      await Bun.sleep(50);
    }
    expect(await first.stop("SIGKILL")).not.toBe(0);

    // The receiver comes up; a new process on the same database delivers what the dead one left.
    const receiver = await startHttpReceiver({ port });
    cleanups.push(() => receiver.close());
    const second = await startServe({ env });
    await receiver.waitFor(2, 10_000);
    await Bun.sleep(1_500);
    expect(await second.stop("SIGKILL")).not.toBe(0);
    const third = await startServe({ env });
    await Bun.sleep(1_500);
    const ids = receiver.requests.map((r) => r.json.id);
    expect(receiver.requests.map((r) => r.json.data.threshold).sort()).toEqual([3, 7]);
    expect(new Set(ids).size).toBe(ids.length);
    const events = await callServe(third, apiKey, "GET", "/v1/events");
    expect(events.body.data.map((e: any) => e.deliveries[0].status)).toEqual(["delivered", "delivered"]);
    expect(await third.stop()).toBe(0);
  });
});
