/**
 * The whole chain, the key and the connection (CONTRACT §13), from real TLS servers presenting
 * certificates of the test PKI: weak keys, SHA-1 signatures, Ed25519, P-384, an intermediate that
 * expires before its leaf, and servers that speak only TLS 1.0 or 1.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createIntermediateCa, createLeaf, DAY, type Issued, type LeafOptions } from "./support/pki.ts";
import { startTlsServer, type TlsServerOptions, type TlsTestServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
const servers: TlsTestServer[] = [];
let n = 0;

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(leaf: Issued, intermediates: Issued[] = [], options: Partial<TlsServerOptions> = {}): Promise<number> {
  const server = await startTlsServer({ cert: chainPem(leaf, ...intermediates), key: leaf.keyPem, ...options });
  servers.push(server);
  return server.port;
}

/** A leaf for a fresh domain, served with its intermediate; returns the certificate as GET shows it. */
async function watch(leafOptions: LeafOptions, serverOptions: Partial<TlsServerOptions> = {}, harness = h): Promise<any> {
  const { rsaIntermediate } = await testPki();
  const domain = `key${++n}.${TEST_DOMAIN}`;
  const issuer = leafOptions.issuer ?? rsaIntermediate;
  const leaf = await createLeaf({ ...leafOptions, issuer, dnsNames: [domain], freshKey: true });
  const port = await serve(leaf, [issuer], serverOptions);
  const created = expectData(await harness.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
  return expectData(await harness.request("GET", `/v1/certificates/${created.id}`), 200);
}

describe("the key", () => {
  test("an RSA-1024 leaf: publicKey RSA 1024, warning weak_key, status unchanged", async () => {
    const cert = await watch({ keyType: "rsa1024" });
    expect([cert.publicKey, cert.warnings, cert.status]).toEqual([{ algorithm: "RSA", size: 1024, curve: null }, ["weak_key"], "valid"]);
  });

  test("an RSA-2048 leaf has no warning", async () => {
    const cert = await watch({ keyType: "rsa" });
    expect([cert.publicKey, cert.warnings]).toEqual([{ algorithm: "RSA", size: 2048, curve: null }, []]);
  });

  test("a P-384 leaf: EC 384 on P-384", async () => {
    const cert = await watch({ keyType: "p384" });
    expect([cert.publicKey, cert.warnings]).toEqual([{ algorithm: "EC", size: 384, curve: "P-384" }, []]);
  });

  test("an Ed25519 leaf: Ed25519 256, no curve", async () => {
    const cert = await watch({ keyType: "ed25519" });
    expect([cert.publicKey, cert.warnings, cert.status]).toEqual([{ algorithm: "Ed25519", size: 256, curve: null }, [], "valid"]);
  });
});

describe("signatures", () => {
  test("a leaf signed with SHA-1: sha1WithRSAEncryption and weak_signature", async () => {
    const cert = await watch({ keyType: "rsa", signatureHash: "SHA-1" });
    expect([cert.signatureAlgorithm, cert.warnings]).toEqual(["sha1WithRSAEncryption", ["weak_signature"]]);
  });

  test("a root sent by the server, self-signed with SHA-1, is no weak_signature", async () => {
    const domain = `sha1root${++n}.${TEST_DOMAIN}`;
    const selfSigned = await createLeaf({ dnsNames: [domain], keyType: "rsa", signatureHash: "SHA-1", freshKey: true });
    const port = await serve(selfSigned);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
    const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([cert.signatureAlgorithm, cert.warnings, cert.statusReason]).toEqual(["sha1WithRSAEncryption", [], "self_signed"]);
  });
});

describe("the chain", () => {
  test("each chain entry carries its serial, fingerprint and days left; chainExpiresAt is the earliest above the leaf", async () => {
    const { rsaIntermediate, root } = await testPki();
    const cert = await watch({ daysLeft: 90 });
    expect(cert.chain[1]).toEqual({
      subject: "certkeeper Test RSA CA",
      issuer: "certkeeper Test Root CA",
      validFrom: rsaIntermediate.cert.notBefore.toISOString(),
      validTo: rsaIntermediate.cert.notAfter.toISOString(),
      serialNumber: rsaIntermediate.cert.serialNumber.toUpperCase().match(/../g)!.join(":"),
      fingerprintSha256: expect.stringMatching(/^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/),
      daysUntilExpiry: Math.floor((rsaIntermediate.cert.notAfter.getTime() - Date.now()) / DAY),
    });
    expect(cert.chain[0].fingerprintSha256).not.toBe(cert.chain[1].fingerprintSha256);
    const earliest = Math.min(rsaIntermediate.cert.notAfter.getTime(), root.cert.notAfter.getTime());
    expect(cert.chainExpiresAt).toBe(new Date(earliest).toISOString());
  });

  test("the root that anchors the path counts, even when the server does not send it", async () => {
    const { root } = await testPki();
    const longIntermediate = await createIntermediateCa(root, { name: "CN=Long CA", notAfter: new Date(root.cert.notAfter.getTime() + 1000 * DAY) });
    const cert = await watch({ issuer: longIntermediate });
    expect(cert.chainExpiresAt).toBe(root.cert.notAfter.toISOString());
  });

  test("no trusted path: chainExpiresAt is null", async () => {
    const { strangerRoot } = await testPki();
    const cert = await watch({ issuer: strangerRoot });
    expect([cert.statusReason, cert.chainExpiresAt]).toEqual(["untrusted_issuer", null]);
  });

  test("an intermediate expiring before the leaf: expiring (chain_expiring), one chain_expiring event for the lowest threshold crossed, once", async () => {
    const { root } = await testPki();
    const clock = new FakeClock(Date.now());
    const own = await createHarness({ clock });
    try {
      const shortCa = await createIntermediateCa(root, { name: "CN=Short CA, O=Short", notAfter: new Date(Date.now() + 5 * DAY + 3_600_000) });
      const cert = await watch({ issuer: shortCa, daysLeft: 90 }, {}, own);
      // 90 days from the leaf's making, a clock set just before it (its notAfter is whole seconds).
      const daysLeft = Math.floor((Date.parse(cert.expiresAt) - clock.now()) / DAY);
      expect(daysLeft === 89 || daysLeft === 90).toBe(true);
      expect([cert.status, cert.statusReason, cert.daysUntilExpiry, cert.chainExpiresAt]).toEqual([
        "expiring",
        "chain_expiring",
        daysLeft,
        shortCa.cert.notAfter.toISOString(),
      ]);
      const list = (expectData(await own.request("GET", "/v1/events"), 200) as any[]).filter((e) => e.certificateId === cert.id);
      expect(list.map((e) => [e.type, e.data.threshold, e.data.chainCertificate])).toEqual([
        [
          "certificate.chain_expiring",
          7,
          { subject: "Short CA", issuer: "certkeeper Test Root CA", serialNumber: shortCa.cert.serialNumber.toUpperCase().match(/../g)!.join(":"), expiresAt: shortCa.cert.notAfter.toISOString() },
        ],
      ]);
      // The next threshold (3) once crossed, and nothing twice.
      clock.advance(3 * DAY);
      expectData(await own.request("POST", `/v1/certificates/${cert.id}/check`), 200);
      expectData(await own.request("POST", `/v1/certificates/${cert.id}/check`), 200);
      const after = (expectData(await own.request("GET", "/v1/events"), 200) as any[]).filter((e) => e.certificateId === cert.id);
      expect(after.map((e) => [e.type, e.data.threshold]).reverse()).toEqual([
        ["certificate.chain_expiring", 7],
        ["certificate.chain_expiring", 3],
      ]);
    } finally {
      await own.close();
    }
  });

  test("chain_expiring is expiring for the list filter of the SQL store too, and the event's certificate carries the new fields", async () => {
    const { root } = await testPki();
    const own = await createHarness({ store: "libsql" });
    try {
      const shortCa = await createIntermediateCa(root, { name: "CN=Short SQL CA", notAfter: new Date(Date.now() + 20 * DAY) });
      const cert = await watch({ issuer: shortCa, daysLeft: 90 }, {}, own);
      expect([cert.status, cert.statusReason]).toEqual(["expiring", "chain_expiring"]);
      const ids = async (status: string) => (expectData(await own.request("GET", `/v1/certificates?status=${status}`), 200) as any[]).map((c) => c.id);
      expect(await ids("expiring")).toEqual([cert.id]);
      expect(await ids("valid")).toEqual([]);
      const [event] = (expectData(await own.request("GET", "/v1/events"), 200) as any[]).filter((e) => e.type === "certificate.chain_expiring");
      expect(event.data.certificate).toMatchObject({
        chainExpiresAt: shortCa.cert.notAfter.toISOString(),
        endpoints: [expect.objectContaining({ address: "127.0.0.1", status: "expiring", statusReason: "chain_expiring" })],
        publicKey: expect.objectContaining({ algorithm: expect.any(String) }),
        tls: expect.objectContaining({ protocol: "TLSv1.3" }),
        warnings: [],
      });
    } finally {
      await own.close();
    }
  });

  test("an intermediate expiring after the leaf raises nothing and leaves the status alone", async () => {
    const cert = await watch({ daysLeft: 90 });
    expect([cert.status, cert.statusReason]).toEqual(["valid", null]);
  });
});

describe("the connection", () => {
  test("a TLS 1.3 server: tls shows the protocol and OpenSSL's cipher name, no warning", async () => {
    const cert = await watch({});
    expect(cert.tls).toEqual({ protocol: "TLSv1.3", cipher: expect.stringMatching(/^TLS_/) });
  });

  test("a TLS 1.2 server: an OpenSSL cipher name such as ECDHE-ECDSA-AES128-GCM-SHA256", async () => {
    const cert = await watch({}, { minVersion: "TLSv1.2", maxVersion: "TLSv1.2" });
    expect([cert.tls.protocol, cert.tls.cipher, cert.warnings]).toEqual(["TLSv1.2", expect.stringMatching(/^ECDHE-(ECDSA|RSA)-/), []]);
  });

  test.each([
    ["TLSv1", "TLSv1"],
    ["TLSv1.1", "TLSv1.1"],
  ] as const)("a server that speaks only %s is watched, with the legacy_protocol warning", async (version, shown) => {
    const cert = await watch({}, { minVersion: version, maxVersion: version });
    expect([cert.status, cert.tls.protocol, cert.warnings]).toEqual(["valid", shown, ["legacy_protocol"]]);
  });
});
