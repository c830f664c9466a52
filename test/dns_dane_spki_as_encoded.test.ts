/**
 * DANE selector 1 is "the DER-encoded SubjectPublicKeyInfo as in the certificate" (RFC 6698
 * §2.1.2, §1.3: "Selector ... 1: SubjectPublicKeyInfo"). A P-256 leaf whose key is published in the
 * compressed point form (allowed by RFC 5480 §2.2) has a 59-byte SPKI; a TLSA "3 1 1" computed over
 * it (openssl, ldns-dane, Postfix, Exim all hash the certificate's own SPKI bytes) must match the
 * served leaf. certkeeper re-exports the key (uncompressed, 91 bytes) and hashes that instead.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import type { TlsaRecord } from "../core/base/records.ts";
import { daneVerdict } from "../core/dns/mod.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { dnsDaemonsMissing, startKnot, type KnotServer } from "./support/dns_servers.ts";
import { addAndGet, dnsWorld, opensslTlsa, type DnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(60_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`dns_dane_spki_as_encoded.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN;
const HOST = `mx.compressed.${D}`;
const closers: Array<() => Promise<unknown>> = [];
let leafPem = "";
let leafKeyPem = "";
let intermediatePem = "";

/** A leaf for HOST whose P-256 key is encoded with a compressed point, issued by the test RSA intermediate. */
async function compressedLeaf() {
  const { rsaIntermediate } = await testPki();
  const dir = mkdtempSync(join(tmpdir(), "dane-spki-"));
  try {
    const file = (name: string) => join(dir, name);
    writeFileSync(file("ca.pem"), rsaIntermediate.certPem);
    writeFileSync(file("ca.key"), rsaIntermediate.keyPem);
    execFileSync("openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("k.pem")]);
    execFileSync("openssl", ["ec", "-in", file("k.pem"), "-conv_form", "compressed", "-out", file("kc.pem")], { stdio: "ignore" });
    execFileSync("openssl", ["req", "-new", "-key", file("kc.pem"), "-subj", `/CN=${HOST}`, "-out", file("r.csr")]);
    writeFileSync(file("ext.cnf"), `subjectAltName=DNS:${HOST}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`);
    execFileSync("openssl", ["x509", "-req", "-in", file("r.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial", "-days", "60", "-extfile", file("ext.cnf"), "-out", file("c.pem")], { stdio: "ignore" });
    return { certPem: readFileSync(file("c.pem"), "utf8"), keyPem: readFileSync(file("kc.pem"), "utf8"), intermediatePem: rsaIntermediate.certPem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const der = (pem: string) => new Uint8Array(execFileSync("openssl", ["x509", "-outform", "DER"], { input: pem }));

beforeAll(async () => {
  const issued = await compressedLeaf();
  leafPem = issued.certPem;
  leafKeyPem = issued.keyPem;
  intermediatePem = issued.intermediatePem;
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe("DANE selector 1 hashes the certificate's own SubjectPublicKeyInfo (RFC 6698 §2.1.2)", () => {
  test("the fixture really is a compressed-point key (59-byte SPKI)", () => {
    const spki = execFileSync("openssl", ["pkey", "-pubin", "-outform", "DER"], { input: execFileSync("openssl", ["x509", "-pubkey", "-noout"], { input: leafPem }) });
    expect(spki.length).toBe(59);
  });

  test("3 1 1 and 3 1 0 over the leaf's SPKI as published match the served leaf (judgement alone)", () => {
    const record = (matchingType: number, data: string): TlsaRecord => ({ usage: 3, selector: 1, matchingType, data });
    const spkiHex = execFileSync("openssl", ["pkey", "-pubin", "-outform", "DER"], { input: execFileSync("openssl", ["x509", "-pubkey", "-noout"], { input: leafPem }) }).toString("hex");
    const served = { ders: [der(leafPem), der(intermediatePem)], leafNames: [HOST], referenceNames: [HOST] };
    const finding = (r: TlsaRecord) => ({ name: `_25._tcp.${HOST}`, validated: false, records: [r] });
    expect(daneVerdict(finding(record(1, opensslTlsa(leafPem, 1, "sha256"))), served).status).toBe("match");
    expect(daneVerdict(finding(record(2, opensslTlsa(leafPem, 1, "sha512"))), served).status).toBe("match");
    expect(daneVerdict(finding(record(0, spkiHex)), served).status).toBe("match");
  });

  withDaemons("through a check against Knot DNS and an SMTP server", () => {
    let knot: KnotServer;
    let w: DnsWorld;
    let port: number;
    beforeAll(async () => {
      const smtp = new SMTPServer({ secure: false, key: leafKeyPem, cert: leafPem + intermediatePem, authOptional: true, logger: false });
      await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
      closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
      port = (smtp.server.address() as { port: number }).port;
      knot = await startKnot(`_${port}._tcp.mx.compressed.certkeeper TLSA 3 1 1 ${opensslTlsa(leafPem, 1, "sha256")}\n`);
      closers.push(() => knot.close());
      w = await dnsWorld(knot.port);
      closers.push(() => w.close());
    });

    test("a TLSA 3 1 1 record of the served key, as openssl computes it: match, no dane_mismatch", async () => {
      const cert = await addAndGet(w.h, { domain: HOST, port, protocol: "smtp" });
      expect([cert.endpoints.map((e: any) => e.dane), cert.warnings]).toEqual([[{ status: "match", validated: false }], []]);
    });
  });
});
