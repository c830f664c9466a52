/**
 * CRLs in forms RFC 5280 §5.1 allows that a one-line change of core/revocation/crl.ts would misread
 * unnoticed: a version 1 CRL (no version field) without nextUpdate, whose revoked certificates come
 * right after thisUpdate; and an entry extension that says `critical FALSE` explicitly (BER, as some
 * CA software writes it), which is not critical.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import { createPrivateKey, sign } from "node:crypto";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier, Certificate as AsnCertificate, CertificateList, Extension, RevokedCertificate, TBSCertList, Time } from "@peculiar/asn1-x509";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";

const DAY = 86_400_000;
const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
let root: Issued;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=CRL Forms Root, O=certkeeper tests" });
  ca = await createIntermediateCa(root, { name: "CN=CRL Forms CA, O=certkeeper tests" });
  responder = await startResponder();
});
afterAll(() => responder.close());

/** A CRL of `issuer` (an EC CA) built field by field; `patch` may change the TBSCertList's bytes before it is signed. */
function signedCrl(issuer: Issued, tbs: TBSCertList, patch: (der: Buffer) => Buffer = (der) => der): Uint8Array {
  const tbsDer = patch(Buffer.from(AsnConvert.serialize(tbs)));
  const signature = sign("sha256", tbsDer, createPrivateKey(issuer.keyPem));
  const shell = new CertificateList({ tbsCertList: tbs, signatureAlgorithm: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }), signature: new Uint8Array(signature).buffer });
  const whole = Buffer.from(AsnConvert.serialize(shell));
  // The CertificateList with the (possibly patched) TBSCertList as signed: SEQUENCE { tbs, algorithm, signature }.
  const original = Buffer.from(AsnConvert.serialize(tbs));
  const at = whole.indexOf(original);
  const content = Buffer.concat([tbsDer, whole.subarray(at + original.length)]);
  return new Uint8Array(Buffer.concat([derLength(0x30, content.length), content]));
}

function derLength(tag: number, length: number): Buffer {
  if (length < 0x80) return Buffer.of(tag, length);
  const bytes: number[] = [];
  for (let n = length; n > 0; n >>= 8) bytes.unshift(n & 0xff);
  return Buffer.of(tag, 0x80 | bytes.length, ...bytes);
}

const issuerName = (issued: Issued) => AsnConvert.parse(issued.cert.rawData, AsnCertificate).tbsCertificate.subject;

async function ask(leaf: Issued, body: Uint8Array) {
  responder.answer = () => ({ body });
  const tools = checkerFor();
  try {
    return { state: await tools.ask(leaf, ca), failures: tools.failures.join("\n") };
  } finally {
    await tools.close();
  }
}

describe("CRL forms", () => {
  test("a version 1 CRL without nextUpdate, made an hour ago, that lists the serial: revoked", async () => {
    const serial = "7a0102030405060708";
    const leaf = await createLeaf({ issuer: ca, serial, dnsNames: ["v1-crl.test"], crlUrls: [`${responder.url}/v1.crl`] });
    const tbs = new TBSCertList({
      signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
      issuer: issuerName(ca),
      thisUpdate: new Time(new Date(Date.now() - 3_600_000)),
      revokedCertificates: [
        new RevokedCertificate({ userCertificate: new Uint8Array(Buffer.from("7a0000000000000001", "hex")).buffer, revocationDate: new Time(new Date(Date.now() - DAY)) }),
        new RevokedCertificate({ userCertificate: new Uint8Array(Buffer.from(serial, "hex")).buffer, revocationDate: new Time(new Date(Date.now() - DAY)) }),
      ],
    });
    const { state, failures } = await ask(leaf, signedCrl(ca, tbs));
    expect(failures).toBe("");
    expect(state).toMatchObject({ status: "revoked", source: "crl" });
  });

  test("an entry extension certkeeper does not read, marked critical FALSE explicitly, is not critical: the entry counts", async () => {
    const serial = "7b0102030405060708";
    const leaf = await createLeaf({ issuer: ca, serial, dnsNames: ["explicit-false.test"], crlUrls: [`${responder.url}/explicit-false.crl`] });
    // 1.3.6.1.4.1.99999.1, marked critical TRUE when built, patched to an explicit FALSE before signing.
    const unknown = new Extension({ extnID: "1.3.6.1.4.1.99999.1", critical: true, extnValue: new OctetString(Buffer.of(0x05, 0x00)) });
    const tbs = new TBSCertList({
      version: 1,
      signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
      issuer: issuerName(ca),
      thisUpdate: new Time(new Date(Date.now() - 3_600_000)),
      nextUpdate: new Time(new Date(Date.now() + DAY)),
      revokedCertificates: [
        new RevokedCertificate({ userCertificate: new Uint8Array(Buffer.from(serial, "hex")).buffer, revocationDate: new Time(new Date(Date.now() - DAY)), crlEntryExtensions: [unknown] }),
      ],
    });
    const patch = (der: Buffer) => {
      const marker = Buffer.of(0x01, 0x01, 0xff);
      const at = der.indexOf(marker);
      expect(at).toBeGreaterThan(0);
      const patched = Buffer.from(der);
      patched[at + 2] = 0x00;
      return patched;
    };
    const { state, failures } = await ask(leaf, signedCrl(ca, tbs, patch));
    expect(failures).toBe("");
    expect(state).toMatchObject({ status: "revoked", source: "crl", reason: null });
  });

  test("an entry whose reasonCode and invalidityDate are marked critical (extensions certkeeper reads) counts, with its reason", async () => {
    const serial = "7c0102030405060708";
    const leaf = await createLeaf({ issuer: ca, serial, dnsNames: ["critical-reason.test"], crlUrls: [`${responder.url}/critical-reason.crl`] });
    const reason = new Extension({ extnID: "2.5.29.21", critical: true, extnValue: new OctetString(Buffer.of(0x0a, 0x01, 0x01)) });
    const invalidity = new Extension({ extnID: "2.5.29.24", critical: true, extnValue: new OctetString(Buffer.concat([Buffer.of(0x18, 0x0f), Buffer.from("20260101000000Z", "latin1")])) });
    const tbs = new TBSCertList({
      version: 1,
      signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
      issuer: issuerName(ca),
      thisUpdate: new Time(new Date(Date.now() - 3_600_000)),
      nextUpdate: new Time(new Date(Date.now() + DAY)),
      revokedCertificates: [
        new RevokedCertificate({ userCertificate: new Uint8Array(Buffer.from(serial, "hex")).buffer, revocationDate: new Time(new Date(Date.now() - DAY)), crlEntryExtensions: [reason, invalidity] }),
      ],
    });
    const { state, failures } = await ask(leaf, signedCrl(ca, tbs));
    expect(failures).toBe("");
    expect(state).toMatchObject({ status: "revoked", source: "crl", reason: "keyCompromise" });
  });

  test("a CRL followed by bytes that are not part of it is not a DER CRL: no answer", async () => {
    const serial = "7d0102030405060708";
    const leaf = await createLeaf({ issuer: ca, serial, dnsNames: ["trailing.test"], crlUrls: [`${responder.url}/trailing.crl`] });
    const tbs = new TBSCertList({
      version: 1,
      signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
      issuer: issuerName(ca),
      thisUpdate: new Time(new Date(Date.now() - 3_600_000)),
      nextUpdate: new Time(new Date(Date.now() + DAY)),
    });
    const body = Buffer.concat([signedCrl(ca, tbs), Buffer.from("<html>trailing</html>")]);
    const { state, failures } = await ask(leaf, body);
    expect(state.status).toBe("unavailable");
    expect(failures).toMatch(/not a DER certificate revocation list/);
  });
});
