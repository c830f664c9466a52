/**
 * Checks saved late, by two `serve` processes on one real sqld (CONTRACT §9, §18, §20):
 *
 * - A "check now" through one process connects one second before a renewal deadline and sees the
 *   old leaf; the new one is deployed half a second before the deadline; the deadline's own check sees
 *   it. The early check, saved after the deadline, is judged at the moment the endpoints answered, so
 *   only certificate.renewed comes (judged at its save, it once raised certificate.renewal_overdue for
 *   a leaf already replaced).
 * - A "check now" through the slow process connects while the old leaf is served; the renewal is
 *   deployed; a "check now" through a fast one announces certificate.renewed. The slow check, saved
 *   last, answered before the check already saved, so it is dropped and the certificate keeps the new
 *   leaf (it once put back a leaf no longer served anywhere, until the next check).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Admin } from "../core/accounts/admin.ts";
import { DAY, systemClock } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startSqld } from "./support/sqld.ts";
import { callServe, startServe } from "./support/cli.ts";
import { startFixtureDns } from "./support/dns_servers.ts";

setDefaultTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-check-saves-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A real sqld with one organization's key, and the environment of `serve` processes on it whose
 * resolvers never answer: each check's CAA lookup waits out the time limit (a DNS failure, which
 * changes nothing), so every check is saved two seconds after its handshake.
 */
async function twoProcessWorld(): Promise<{ key: string; env: Record<string, string> }> {
  const { root } = await testPki();
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, root.certPem);
  const sqld = await startSqld();
  cleanups.push(() => sqld.close());
  const dns = await startFixtureDns(() => ({ silent: true }));
  cleanups.push(() => dns.close());
  const setup = await openLibsqlStore({ url: sqld.url });
  const admin = new Admin(setup, systemClock);
  const org = await admin.createOrganization({ name: `Saves ${crypto.randomUUID().slice(0, 8)}`, plan: "pro" });
  const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
  const key = (await admin.createApiKey({ userId: user.id, name: "saves", mode: "live" })).key;
  await setup.close();
  const env = {
    CERTKEEPER_DATABASE_URL: sqld.url,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_TLS_TIMEOUT: "2s",
    CERTKEEPER_REVOCATION: "off",
    CERTKEEPER_ARI: "off",
    CERTKEEPER_DNS_SERVERS: `127.0.0.1:${dns.port}`,
  };
  return { key, env };
}

describe("checks saved late", () => {
  test("a leaf replaced before its deadline raises no renewal_overdue, only certificate.renewed", async () => {
    const { rsaIntermediate } = await testPki();
    const { key, env } = await twoProcessWorld();
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));

    // A 6-day certificate whose deadline (two thirds: 4 days in) comes 8 s from now.
    const domain = `straddle.${TEST_DOMAIN}`;
    // (X.509 times are whole seconds: so is the deadline.)
    const notBefore = Math.floor((Date.now() + 8_000 - 4 * DAY) / 1000) * 1000;
    const deadline = notBefore + 4 * DAY;
    const old = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notBefore + 6 * DAY) });
    const server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem });
    cleanups.push(() => server.close());
    const added = await callServe(a, key, "POST", "/v1/certificates", { domain, port: server.port, alertPolicy: "renewal" });
    expect(added.status).toBe(201);
    expect(added.body.data.status).toBe("valid");
    const id = added.body.data.id;
    const renewed = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now()), notAfter: new Date(Date.now() + 6 * DAY) });

    // One second before the deadline: "check now" through the other process (it connects at once).
    await Bun.sleep(deadline - 1_000 - Date.now());
    const manual = callServe(b, key, "POST", `/v1/certificates/${id}/check`);
    // Half a second before the deadline, the renewal is deployed.
    await Bun.sleep(deadline - 500 - Date.now());
    server.setCertificate(chainPem(renewed, rsaIntermediate), renewed.keyPem);
    expect((await manual).status).toBe(200);
    // The deadline's own check sees the new leaf.
    const serial = (hex: string) => hex.replace(/:/g, "").toLowerCase().replace(/^0+/, "");
    const until = Date.now() + 15_000;
    for (;;) {
      const got = (await callServe(a, key, "GET", `/v1/certificates/${id}`)).body.data;
      if (serial(got.serialNumber) === serial(renewed.cert.serialNumber)) break;
      if (Date.now() > until) throw new Error("the new leaf was never seen");
      await Bun.sleep(100);
    }
    const events = (await callServe(a, key, "GET", "/v1/events?limit=100")).body.data.map((e: any) => e.type).reverse();
    expect(events).toEqual(["certificate.renewed"]);
  });

  test("does not put back the leaf the later check found replaced", async () => {
    const { rsaIntermediate } = await testPki();
    const { key, env } = await twoProcessWorld();
    // The fast process has no resolvers: its checks are saved as soon as they are made.
    const a = await startServe({ env: { ...env, CERTKEEPER_DNS_SERVERS: "off" } });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));

    const domain = `stale.${TEST_DOMAIN}`;
    const old = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() + 80 * DAY) });
    const server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem });
    cleanups.push(() => server.close());
    const added = await callServe(a, key, "POST", "/v1/certificates", { domain, port: server.port });
    expect(added.status).toBe(201);
    const id = added.body.data.id;
    const renewed = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 90 * DAY) });
    const serial = (hex: string) => hex.replace(/:/g, "").toLowerCase().replace(/^0+/, "");

    // Through the slow process: connects now (old leaf), saved two seconds later.
    const slow = callServe(b, key, "POST", `/v1/certificates/${id}/check`);
    await Bun.sleep(400);
    server.setCertificate(chainPem(renewed, rsaIntermediate), renewed.keyPem);
    // Through the fast one: the renewal, announced.
    const fast = await callServe(a, key, "POST", `/v1/certificates/${id}/check`);
    expect(serial(fast.body.data.serialNumber)).toBe(serial(renewed.cert.serialNumber));
    expect((await slow).status).toBe(200);
    const events = (await callServe(a, key, "GET", "/v1/events?limit=100")).body.data.map((e: any) => e.type);
    expect(events).toEqual(["certificate.renewed"]);
    // Only the new leaf is served: the certificate shows it.
    const got = (await callServe(a, key, "GET", `/v1/certificates/${id}`)).body.data;
    expect(serial(got.serialNumber)).toBe(serial(renewed.cert.serialNumber));
  });
});
