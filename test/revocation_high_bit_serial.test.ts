/**
 * The OCSP request for a leaf whose serial has its top bit set (DER INTEGER 00 8F …, a positive serial,
 * as many CAs issue: about half of random 16-byte serials) names that serial, not the negative number
 * 8F … (RFC 6960 §4.1.1, RFC 5280 §4.1.2.2), and an answer about that other number is not taken for it. Checked against OpenSSL's own responder
 * (`openssl ocsp -index`), as test/revocation.openssl.test.ts does.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chainPem, createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";
import { startTlsServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { DEFAULT_CONFIG } from "../core/config/config.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate } from "../core/tls/x509.ts";
import { verifyCrl } from "../core/revocation/crl.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { bunPasswords } from "../adapters/bun/passwords.ts";

const OPENSSL = "/usr/bin/openssl";
let dir: string;
let ca: Issued;
let responder: Responder;
let revoked: Issued;
let good: Issued;
const stamp = (date: Date) => date.toISOString().replace(/[-:T]/g, "").slice(2, 14) + "Z";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "certkeeper-ocsp-serial-"));
  const root = await createRootCa();
  ca = await createIntermediateCa(root, { keyType: "rsa", name: "CN=High Serial CA, O=certkeeper tests" });
  responder = await startResponder();
  // Positive serials whose first byte has the top bit set: DER 00 8F …, 00 C4 ….
  revoked = await createLeaf({ issuer: ca, serial: "008f0102030405060708090a0b0c0d0e", dnsNames: ["revoked.high.test"], ocspUrls: [`${responder.url}/ocsp`] });
  good = await createLeaf({ issuer: ca, serial: "00c40102030405060708090a0b0c0d0e", dnsNames: ["good.high.test"], ocspUrls: [`${responder.url}/ocsp`] });
  writeFileSync(join(dir, "ca.pem"), ca.certPem);
  writeFileSync(join(dir, "ca.key"), ca.keyPem);
  const expiry = stamp(new Date(Date.now() + 90 * 86_400_000));
  writeFileSync(
    join(dir, "index.txt"),
    `R\t${expiry}\t${stamp(new Date("2026-11-02T03:04:05Z"))},keyCompromise\t8F0102030405060708090A0B0C0D0E\tunknown\t/CN=revoked.high.test\n` +
      `V\t${expiry}\t\tC40102030405060708090A0B0C0D0E\tunknown\t/CN=good.high.test\n`,
  );
  responder.answer = (request) => {
    if (request.path !== "/ocsp") return { status: 404 };
    writeFileSync(join(dir, "req.der"), request.body);
    execFileSync(OPENSSL, ["ocsp", "-index", join(dir, "index.txt"), "-CA", join(dir, "ca.pem"), "-rsigner", join(dir, "ca.pem"),
      "-rkey", join(dir, "ca.key"), "-reqin", join(dir, "req.der"), "-respout", join(dir, "resp.der"), "-ndays", "1"], { stdio: "ignore" });
    return { body: readFileSync(join(dir, "resp.der")), headers: { "content-type": "application/ocsp-response" } };
  };
});

afterAll(async () => {
  await responder.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the certificate's serial is positive (00 8F …), as OpenSSL reads it", () => {
  writeFileSync(join(dir, "leaf.pem"), revoked.certPem);
  expect(execFileSync(OPENSSL, ["x509", "-in", join(dir, "leaf.pem"), "-noout", "-serial"]).toString().trim()).toBe("serial=8F0102030405060708090A0B0C0D0E");
});

test("OpenSSL's responder: a revoked leaf with a top-bit serial is revoked, a good one good (not unknown)", async () => {
  const { ask, close } = checkerFor();
  try {
    // The request must carry the positive serial the certificate has, not a negative INTEGER.
    const seen: string[] = [];
    const previous = responder.answer;
    responder.answer = (request) => {
      writeFileSync(join(dir, "asked.der"), request.body);
      seen.push(execFileSync(OPENSSL, ["ocsp", "-reqin", join(dir, "asked.der"), "-req_text"]).toString().match(/Serial Number: (\S+)/)![1]!);
      return previous(request);
    };
    const answer = await ask(revoked, ca);
    responder.answer = previous;
    expect({ status: answer.status, asked: seen }).toEqual({ status: "revoked", asked: ["8F0102030405060708090A0B0C0D0E"] });
    expect(answer).toMatchObject({ status: "revoked", source: "ocsp", reason: "keyCompromise" });
    expect(await ask(good, ca)).toMatchObject({ status: "good", source: "ocsp" });
  } finally {
    await close();
  }
});

// Through the API: a server presenting such a revoked leaf, its CA answering with OpenSSL's responder.

test("API: a revoked leaf whose serial has its top bit set shows revoked, with one certificate.revoked", async () => {
  const { root, rsaIntermediate } = await testPki();
  const domain = `high-serial.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", serial: "00b30102030405060708090a0b0c0d0e", dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-api`] });
  const apiDir = mkdtempSync(join(tmpdir(), "certkeeper-ocsp-serial-api-"));
  writeFileSync(join(apiDir, "ca.pem"), rsaIntermediate.certPem);
  writeFileSync(join(apiDir, "ca.key"), rsaIntermediate.keyPem);
  writeFileSync(join(apiDir, "index.txt"), `R\t${stamp(new Date(Date.now() + 90 * 86_400_000))}\t${stamp(new Date("2026-11-02T03:04:05Z"))},keyCompromise\tB30102030405060708090A0B0C0D0E\tunknown\t/CN=${domain}\n`);
  const previous = responder.answer;
  responder.answer = (request) => {
    if (request.path !== "/ocsp-api") return previous(request);
    writeFileSync(join(apiDir, "req.der"), request.body);
    execFileSync(OPENSSL, ["ocsp", "-index", join(apiDir, "index.txt"), "-CA", join(apiDir, "ca.pem"), "-rsigner", join(apiDir, "ca.pem"),
      "-rkey", join(apiDir, "ca.key"), "-reqin", join(apiDir, "req.der"), "-respout", join(apiDir, "resp.der"), "-ndays", "1"], { stdio: "ignore" });
    return { body: readFileSync(join(apiDir, "resp.der")) };
  };
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  const full = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }], tlsTimeoutMs: 2000 };
  const transports = createTransports(full, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-test-outbox" });
  const h = await createHarness({ transports, passwords: bunPasswords });
  try {
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    const revokedEvents = expectData(await h.request("GET", "/v1/events?limit=100"), 200).filter((e: any) => e.certificateId === created.id && e.type === "certificate.revoked");
    expect({ status: shown.status, statusReason: shown.statusReason, revocation: shown.revocation.status, events: revokedEvents.length }).toEqual({
      status: "revoked",
      statusReason: "revoked",
      revocation: "revoked",
      events: 1,
    });
  } finally {
    responder.answer = previous;
    await h.close();
    await transports.close();
    await server.close();
    rmSync(apiDir, { recursive: true, force: true });
  }
});

test("a CRL listing a serial with its top bit set revokes that leaf, and only that one", async () => {
  const der = await crl({ issuer: ca, revoked: [{ serial: "008f0102030405060708090a0b0c0d0e", reason: 1 }] });
  const issuer = new Certificate(ca.certPem);
  expect(await verifyCrl(der, { leaf: new Certificate(revoked.certPem), issuer, now: Date.now() })).toMatchObject({ status: "revoked", source: "crl", reason: "keyCompromise" });
  expect(await verifyCrl(der, { leaf: new Certificate(good.certPem), issuer, now: Date.now() })).toMatchObject({ status: "good", source: "crl" });
});
