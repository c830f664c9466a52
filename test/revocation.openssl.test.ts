/**
 * Revocation against OpenSSL's own OCSP responder (`openssl ocsp -index …`, fed each request that
 * reaches the test HTTP server) and a CRL made by `openssl ca -gencrl`, over the test PKI's CA.
 * OpenSSL 3.0's `ocsp -port` binds every interface, so the responder runs per request (-reqin/-respout)
 * behind a server bound to 127.0.0.1 only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";

const OPENSSL = "/usr/bin/openssl";
let dir: string;
let root: Issued;
let ca: Issued;
let responder: Responder;
let good: Issued;
let revoked: Issued;

const stamp = (date: Date) => date.toISOString().replace(/[-:T]/g, "").slice(2, 14) + "Z";
const serial = (issued: Issued) => issued.cert.serialNumber.toUpperCase();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "certkeeper-openssl-"));
  root = await createRootCa();
  ca = await createIntermediateCa(root, { keyType: "rsa", name: "CN=OpenSSL Test CA, O=certkeeper tests" });
  responder = await startResponder();
  good = await createLeaf({ issuer: ca, dnsNames: ["good.openssl.test"], ocspUrls: [`${responder.url}/ocsp`] });
  revoked = await createLeaf({ issuer: ca, dnsNames: ["revoked.openssl.test"], ocspUrls: [`${responder.url}/ocsp`] });
  writeFileSync(join(dir, "ca.pem"), ca.certPem);
  writeFileSync(join(dir, "ca.key"), ca.keyPem);
  const expiry = stamp(new Date(Date.now() + 90 * 86_400_000));
  const revokedAt = stamp(new Date("2026-11-02T03:04:05Z"));
  writeFileSync(
    join(dir, "index.txt"),
    `V\t${expiry}\t\t${serial(good)}\tunknown\t/CN=good.openssl.test\n` +
      `R\t${expiry}\t${revokedAt},keyCompromise\t${serial(revoked)}\tunknown\t/CN=revoked.openssl.test\n`,
  );
  writeFileSync(join(dir, "crlnumber"), "01\n");
  writeFileSync(join(dir, "index.txt.attr"), "unique_subject = no\n");
  writeFileSync(
    join(dir, "ca.cnf"),
    `[ ca ]\ndefault_ca = test\n[ test ]\ndatabase = ${dir}/index.txt\ncrlnumber = ${dir}/crlnumber\n` +
      `default_md = sha256\ndefault_crl_days = 1\ncrl_extensions = crl_ext\n[ crl_ext ]\nauthorityKeyIdentifier = keyid:always\n`,
  );
  responder.answer = (request) => {
    if (request.path === "/ocsp") {
      writeFileSync(join(dir, "req.der"), request.body);
      execFileSync(OPENSSL, [
        "ocsp", "-index", join(dir, "index.txt"), "-CA", join(dir, "ca.pem"), "-rsigner", join(dir, "ca.pem"),
        "-rkey", join(dir, "ca.key"), "-reqin", join(dir, "req.der"), "-respout", join(dir, "resp.der"), "-ndays", "1",
      ], { stdio: "ignore" });
      return { body: readFileSync(join(dir, "resp.der")), headers: { "content-type": "application/ocsp-response" } };
    }
    if (request.path === "/openssl.crl") {
      execFileSync(OPENSSL, ["ca", "-gencrl", "-config", join(dir, "ca.cnf"), "-keyfile", join(dir, "ca.key"), "-cert", join(dir, "ca.pem"), "-out", join(dir, "crl.pem")], { stdio: "ignore" });
      execFileSync(OPENSSL, ["crl", "-in", join(dir, "crl.pem"), "-outform", "DER", "-out", join(dir, "crl.der")]);
      return { body: readFileSync(join(dir, "crl.der")) };
    }
    return { status: 404 };
  };
});

afterAll(async () => {
  await responder.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("revocation against OpenSSL", () => {
  test("OpenSSL's responder: good for a valid serial, revoked with date and reason for a revoked one", async () => {
    const { ask, close, failures } = checkerFor();
    expect(await ask(good, ca)).toMatchObject({ status: "good", source: "ocsp", revokedAt: null, reason: null });
    expect(await ask(revoked, ca)).toMatchObject({
      status: "revoked",
      source: "ocsp",
      revokedAt: Date.parse("2026-11-02T03:04:05Z"),
      reason: "keyCompromise",
    });
    expect(failures).toEqual([]);
    await close();
  });

  test("OpenSSL's responder: a serial it does not know is unknown", async () => {
    const stranger = await createLeaf({ issuer: ca, dnsNames: ["stranger.openssl.test"], ocspUrls: [`${responder.url}/ocsp`] });
    const { ask, close } = checkerFor();
    expect(await ask(stranger, ca)).toMatchObject({ status: "unknown", source: "ocsp" });
    await close();
  });

  test("a CRL made by `openssl ca -gencrl`", async () => {
    const inCrl = await createLeaf({ issuer: ca, dnsNames: ["crl.openssl.test"], crlUrls: [`${responder.url}/openssl.crl`] });
    const revokedViaCrl = await createLeaf({ issuer: ca, serial: revoked.cert.serialNumber, dnsNames: ["crl2.openssl.test"], crlUrls: [`${responder.url}/openssl.crl`] });
    const { ask, close, failures } = checkerFor();
    expect(await ask(inCrl, ca)).toMatchObject({ status: "good", source: "crl" });
    expect(await ask(revokedViaCrl, ca)).toMatchObject({ status: "revoked", source: "crl", reason: "keyCompromise", revokedAt: Date.parse("2026-11-02T03:04:05Z") });
    expect(failures).toEqual([]);
    await close();
  });
});
