/**
 * CONTRACT §18 audit: "Short lifetimes: a certificate is re-checked at least every twelfth of its
 * leaf's lifetime (so a 24-hour certificate every 2 hours)". The product keeps the rule for leaves
 * whose chain leads to a trusted root (its own reading, core/renewal/deadline.ts): that includes a
 * 24-hour leaf of a trusted CA that names another host (a chain certkeeper asks the CA about), and a
 * healthy leaf whose name's other address serves an untrusted chain (the certificate's problem is
 * that address's, not its leaf's).
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { HOUR, MINUTE } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(120_000);

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("§18: a 24-hour leaf of a trusted CA that names another host is re-checked every 2 hours, not every CERTKEEPER_CHECK_INTERVAL (24 h)", async () => {
  const start = Date.now();
  const clock = new FakeClock(start);
  const { root, rsaIntermediate } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const config: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 2000,
    logLevel: "error",
    alertPolicy: "renewal",
    revocation: false,
    ari: false,
    checkIntervalMs: 24 * HOUR,
  };
  const transports = createTransports(config, trust);
  const h = await createHarness({ config, clock, transports, trust, random: () => 0.5 });
  cleanups.push(() => transports.close(), () => h.close());

  // A trusted chain, 24 hours, for other.certkeeper.test; watched as wrongname.certkeeper.test.
  const issued = await createLeaf({
    issuer: rsaIntermediate,
    dnsNames: [`other.${TEST_DOMAIN}`],
    notBefore: new Date(start - 30 * MINUTE),
    notAfter: new Date(start - 30 * MINUTE + 24 * HOUR),
  });
  const server = await startTlsServer({ cert: chainPem(issued, rsaIntermediate), key: issued.keyPem });
  cleanups.push(() => server.close());
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `wrongname.${TEST_DOMAIN}`, port: server.port } }), 201);
  expect([added.status]).toEqual(["invalid"]);
  const got = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
  expect(got.statusReason).toBe("hostname_mismatch");

  const afterAdd = server.connections();
  for (let at = start; at <= start + 9 * HOUR; at += 10 * MINUTE) {
    clock.set(at);
    await h.core.services.scheduler.runDue();
  }
  // Every twelfth of 24 hours: at least 4 checks in 9 hours (the interval alone would make none).
  expect(server.connections() - afterAdd).toBeGreaterThanOrEqual(4);
});

test("§18: a healthy 24-hour leaf is re-checked every 2 hours though another address of the name serves an untrusted chain", async () => {
  const start = Date.now();
  const clock = new FakeClock(start);
  const { root, rsaIntermediate } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const domain = `halfbroken.${TEST_DOMAIN}`;
  const config: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: domain, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }],
    tlsTimeoutMs: 2000,
    logLevel: "error",
    alertPolicy: "renewal",
    revocation: false,
    ari: false,
    checkIntervalMs: 24 * HOUR,
  };
  const transports = createTransports(config, trust);
  const h = await createHarness({ config, clock, transports, trust, random: () => 0.5 });
  cleanups.push(() => transports.close(), () => h.close());

  // Node .1: a trusted 24-hour leaf (the one that expires first). Node .2: a self-signed leaf of a year.
  const healthy = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(start - 30 * MINUTE), notAfter: new Date(start - 30 * MINUTE + 24 * HOUR) });
  const a = await startTlsServer({ cert: chainPem(healthy, rsaIntermediate), key: healthy.keyPem });
  const stray = await createLeaf({ dnsNames: [domain], notBefore: new Date(start - HOUR), notAfter: new Date(start + 365 * 24 * HOUR) });
  const b = await startTlsServer({ cert: stray.certPem, key: stray.keyPem, host: "127.0.0.2", port: a.port });
  cleanups.push(() => a.close(), () => b.close());
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);
  expect(added.status).toBe("invalid");
  expect(expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200).statusReason).toBe("self_signed");

  const afterAdd = a.connections();
  for (let at = start; at <= start + 9 * HOUR; at += 10 * MINUTE) {
    clock.set(at);
    await h.core.services.scheduler.runDue();
  }
  expect(a.connections() - afterAdd).toBeGreaterThanOrEqual(4);
});
