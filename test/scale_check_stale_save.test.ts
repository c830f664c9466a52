/**
 * Review (scale-out, CONTRACT §9, §18, §20): two processes on one sqld; one of them has slow resolvers
 * (its CAA lookups wait out the time limit, so its checks are saved two seconds after their
 * handshakes), the other has none configured. A "check now" through the slow one connects while the
 * old leaf is served; the renewal is deployed; a "check now" through the fast one sees it and
 * announces certificate.renewed. Then the slow check is saved: it answered before the check already
 * saved, so it is dropped, and the certificate keeps the new leaf (it once re-applied its older
 * outcome to the fresher record, putting back a leaf no longer served anywhere until the next check).
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
import { startServe, type ServeProcess } from "./support/cli.ts";
import { startFixtureDns } from "./support/dns_servers.ts";

setDefaultTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-review-stale-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

async function call(server: ServeProcess, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe("a check saved after a later one", () => {
  test("does not put back the leaf the later check found replaced", async () => {
    const { root, rsaIntermediate } = await testPki();
    const caFile = join(dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    // Resolvers that never answer: each check's CAA lookup waits out the time limit (a DNS failure,
    // which changes nothing), so every check is saved two seconds after its handshake.
    const dns = await startFixtureDns(() => ({ silent: true }));
    cleanups.push(() => dns.close());

    const setup = await openLibsqlStore({ url: sqld.url });
    const admin = new Admin(setup, systemClock);
    const org = await admin.createOrganization({ name: "Straddle", plan: "pro" });
    const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
    const key = (await admin.createApiKey({ userId: user.id, name: "straddle", mode: "live" })).key;
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
    const a = await startServe({ env: { ...env, CERTKEEPER_DNS_SERVERS: "off" } });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));

    const domain = `stale.${TEST_DOMAIN}`;
    const old = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() + 80 * DAY) });
    const server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem });
    cleanups.push(() => server.close());
    const added = await call(a, key, "POST", "/v1/certificates", { domain, port: server.port });
    expect(added.status).toBe(201);
    const id = added.body.data.id;
    const renewed = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 90 * DAY) });
    const serial = (hex: string) => hex.replace(/:/g, "").toLowerCase().replace(/^0+/, "");

    // Through the slow process: connects now (old leaf), saved two seconds later.
    const slow = call(b, key, "POST", `/v1/certificates/${id}/check`);
    await Bun.sleep(400);
    server.setCertificate(chainPem(renewed, rsaIntermediate), renewed.keyPem);
    // Through the fast one: the renewal, announced.
    const fast = await call(a, key, "POST", `/v1/certificates/${id}/check`);
    expect(serial(fast.body.data.serialNumber)).toBe(serial(renewed.cert.serialNumber));
    expect((await slow).status).toBe(200);
    const events = (await call(a, key, "GET", "/v1/events?limit=100")).body.data.map((e: any) => e.type);
    expect(events).toEqual(["certificate.renewed"]);
    // Only the new leaf is served: the certificate shows it.
    const got = (await call(a, key, "GET", `/v1/certificates/${id}`)).body.data;
    expect(serial(got.serialNumber)).toBe(serial(renewed.cert.serialNumber));
  });
});
