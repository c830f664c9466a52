/**
 * Tenancy: ARI answers are shared across organizations (CONTRACT §19), and what one organization
 * serves never decides what another's certificate says.
 *
 * CONTRACT §3: "Another organization's resource is answered exactly as a missing one" — organizations
 * are isolated from one another.
 * CONTRACT §19: "Answers are shared by every certificate and organization that serves the same leaf"
 * and "A window ending before the lifetime midpoint on the first answer for a serial […] means the CA
 * asks for early replacement […]: one `certificate.renewal_requested` per serial and window end".
 *
 * The installation trusts an internal root of organization A (CERTKEEPER_EXTRA_CA_FILE, "internal
 * PKI"). A's internal CA (named like the public CA) issues a leaf carrying the public CA's key
 * identifier (AKI) and organization B's serial, with another lifetime: the same certID as B's leaf, a
 * trusted chain, so it is asked about. The CA's answer is judged on each leaf's own dates and kept for
 * each leaf apart: B's certificate stays as the CA's answer for B's leaf says (no request, its ARI
 * deadline), whatever A's leaf made of the same answer. Untrusted, the forged leaf is not asked at all.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, createRootCa } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { certIdOf, startAriServer, type AriServer } from "./support/ari_server.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { dn, CN, ext, forge, sanExt, dnsName, tlv, seq, utcTime, serverAuthEku } from "./support/forged_certs.ts";

setDefaultTimeout(60_000);

let ari: AriServer;
const cleanups: Array<() => unknown> = [];
beforeAll(async () => {
  ari = await startAriServer({ tlsIssuer: (await testPki()).rsaIntermediate });
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await ari.close();
});

const whole = (ms: number) => Math.floor(ms / 1000) * 1000;
const utc = (ms: number) => {
  const d = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  return utcTime(`${d.slice(2, 4)}${d.slice(5, 7)}${d.slice(8, 10)}${d.slice(11, 13)}${d.slice(14, 16)}${d.slice(17, 19)}Z`);
};

async function world(extraRoots: string[]) {
  const { root } = await testPki();
  const trust = new TrustStore([root.certPem, ...extraRoots]);
  const clock = new FakeClock(Date.now());
  const config: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 1500,
    logLevel: "error",
    alertPolicy: "renewal",
    revocation: false,
    acmeDirectories: [{ issuer: "certkeeper Test RSA CA", url: ari.directoryUrl }],
  };
  const transports = createTransports(config, trust);
  const h = await createHarness({ config, clock, transports, trust });
  cleanups.push(() => transports.close(), () => h.core.stop());
  const orgB = await h.core.services.admin.createOrganization({ name: "Tenant B", plan: "enterprise" });
  const keyB = (await h.makeKey("owner", "live", orgB.id)).key;
  return { h, keyA: h.keys.owner.key, keyB };
}

async function scenario(trustA: boolean, serialHex: string, label: string, aLifetimeDays = 300, expectB: Record<string, unknown> | object = { state: "not_due", status: "valid", reason: null, requested: false, source: "ari" }) {
  const { rsaIntermediate } = await testPki();
  const now = Date.now();
  // B: an ordinary leaf of the (public) test CA, 10 days old, 80 days left: midpoint 35 days ahead.
  const domainB = `${label}-b.${TEST_DOMAIN}`;
  const leafB = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domainB], notBefore: new Date(now - 10 * DAY), notAfter: new Date(now + 80 * DAY), serial: serialHex });
  const serverB = await startTlsServer({ cert: chainPem(leafB, rsaIntermediate), key: leafB.keyPem });
  cleanups.push(() => serverB.close());
  const certId = certIdOf(leafB);
  // The CA's answer for B's leaf: an ordinary window, 50–55 days ahead (after B's midpoint): no request.
  const start = whole(now + 50 * DAY);
  ari.answer(certId, { kind: "window", start, end: start + 5 * DAY, retryAfter: "3600" });

  // A: its own internal root (trusted by the installation), named like the public CA.
  const aRoot = await createRootCa({ keyType: "rsa", name: "CN=certkeeper Test RSA CA, O=Tenant A internal PKI" });
  const keyId = Buffer.from(certId.split(".")[0]!, "base64url");
  const forged = await forge({
    issuer: aRoot,
    serial: Buffer.from(serialHex, "hex"),
    notBefore: utc(now - 10 * DAY),
    notAfter: utc(now + aLifetimeDays * DAY),
    subject: dn([CN, `${label}-a.${TEST_DOMAIN}`]),
    extensions: [
      ext("551d23", seq(tlv(0x80, keyId))), // authorityKeyIdentifier = the public CA's key id
      sanExt(dnsName(`${label}-a.${TEST_DOMAIN}`)),
      serverAuthEku(),
    ],
  });
  const serverA = await startTlsServer({ cert: forged.certPem, key: forged.keyPem });
  cleanups.push(() => serverA.close());

  const { h, keyA, keyB } = await world(trustA ? [aRoot.certPem] : []);

  // Organization A adds its own server first.
  await h.request("POST", "/v1/certificates", { key: keyA, body: { domain: `${label}-a.${TEST_DOMAIN}`, port: serverA.port } });
  // Then organization B adds its own, unrelated server.
  const b = expectData(await h.request("POST", "/v1/certificates", { key: keyB, body: { domain: domainB, port: serverB.port } }), 201);
  const gotB = expectData(await h.request("GET", `/v1/certificates/${b.id}`, { key: keyB }), 200);
  const eventsB = (expectData(await h.request("GET", "/v1/events?limit=100", { key: keyB }), 200) as any[]).map((e) => e.type);

  // What the CA says about B's leaf (a window after its midpoint) asks for nothing: B is not_due, valid,
  // and has no renewal_requested, whatever organization A serves.
  expect({
    state: gotB.renewal?.state,
    status: gotB.status,
    reason: gotB.statusReason,
    requested: eventsB.includes("certificate.renewal_requested"),
    source: gotB.renewal?.source,
    deadline: gotB.renewal?.deadline,
  } as Record<string, unknown>).toEqual({ ...(expectB as Record<string, unknown>), deadline: new Date(start + 5 * DAY).toISOString() });
}

test("organization A's leaf with B's certID (trusted through A's internal root) leaves B's certificate as the CA's answer for B's leaf says: no request", async () => {
  await scenario(true, "4b1d2c3e5f60718293a4b5c6d7e8f901", "trusted");
});

// What holds (passes): the same forged leaf without a trusted chain is not asked about.
test("the same forged leaf, untrusted, leaves B's certificate not_due", async () => {
  await scenario(false, "4b1d2c3e5f60718293a4b5c6d7e8f902", "untrusted");
});

// CONTRACT §18: "Renewal deadline of a served leaf: the end of its CA's suggested renewal window (§19)
// when one is known". A's leaf (same certID, trusted through A's internal root) expires before the CA's
// window ends: the shared answer is stored as an error for 6 hours, and B's certificate loses the CA's
// window: its deadline moves to the lifetime rule's.
test("organization A's short-lived leaf with B's certID leaves B's ARI deadline the CA's window end", async () => {
  await scenario(true, "4b1d2c3e5f60718293a4b5c6d7e8f903", "errored", 20);
});
