/**
 * CRL scope (RFC 5280 §5.2.5, §5.3, §6.3.3), what test/revocation.crl_scope.test.ts left open: a CRL
 * partitioned by reason, an indirect CRL, one of attribute certificates only, one with an entry
 * carrying a critical extension certkeeper cannot read, and a delta CRL whose indicator is not marked
 * critical all answer nothing about a leaf (`unavailable` with no other source), never `good`; a
 * verified CRL answers for its issuer's certificates only, and one whose issuing distribution point
 * names no URL still answers. Each fails on a one-line change of
 * core/revocation/crl.ts the suite let pass.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { BaseCRLNumber, CRLNumber, IssuingDistributionPoint, Reason, ReasonFlags } from "@peculiar/asn1-x509";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";
import { crlAnswer, readCrl } from "../core/revocation/crl.ts";
import { RevocationFailure } from "../core/revocation/mod.ts";
import { Certificate } from "../core/tls/x509.ts";

let root: Issued;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=Test CRL Root, O=certkeeper tests" });
  ca = await createIntermediateCa(root, { name: "CN=Test CRL CA, O=certkeeper tests" });
  responder = await startResponder();
});
afterAll(() => responder.close());

async function signedCrl(options: { extensions?: x509.Extension[]; entries?: Array<{ serial: string; extensions?: x509.Extension[] }>; by?: Issued }): Promise<Uint8Array> {
  const by = options.by ?? ca;
  const generated = await x509.X509CrlGenerator.create({
    issuer: by.cert.subject,
    thisUpdate: new Date(Date.now() - 60_000),
    nextUpdate: new Date(Date.now() + 86_400_000),
    entries: (options.entries ?? []).map((e) => ({ serialNumber: e.serial, revocationDate: new Date(Date.now() - 3_600_000), extensions: e.extensions })),
    extensions: options.extensions,
    signingKey: by.keys.privateKey,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
  });
  return new Uint8Array(generated.rawData);
}

const crlNumber = (n: number) => new x509.Extension("2.5.29.20", false, AsnConvert.serialize(new CRLNumber(n)));
const idp = (params: Partial<IssuingDistributionPoint>) => new x509.Extension("2.5.29.28", true, AsnConvert.serialize(new IssuingDistributionPoint(params)));

async function stateFor(path: string, body: Uint8Array) {
  const leaf = await createLeaf({ issuer: ca, dnsNames: ["crl-scope.test"], crlUrls: [`${responder.url}${path}`] });
  responder.answer = (request) => (request.path === path ? { body } : { status: 404 });
  const { ask, close } = checkerFor();
  try {
    return (await ask(leaf, ca)).status;
  } finally {
    await close();
  }
}

describe("CRLs that cannot say a leaf is good", () => {
  test("the control: a plain complete CRL not listing the leaf is good", async () => {
    expect(await stateFor("/plain.crl", await signedCrl({ extensions: [crlNumber(1)] }))).toBe("good");
  });

  test("a CRL that covers only some reasons (IDP onlySomeReasons: keyCompromise) answers nothing", async () => {
    const body = await signedCrl({ extensions: [crlNumber(1), idp({ onlySomeReasons: new Reason(ReasonFlags.keyCompromise) })] });
    expect(await stateFor("/some-reasons.crl", body)).toBe("unavailable");
  });

  test("an indirect CRL (IDP indirectCRL) answers nothing", async () => {
    expect(await stateFor("/indirect.crl", await signedCrl({ extensions: [crlNumber(1), idp({ indirectCRL: true })] }))).toBe("unavailable");
  });

  test("a CRL of attribute certificates only (IDP onlyContainsAttributeCerts) answers nothing", async () => {
    expect(await stateFor("/attribute.crl", await signedCrl({ extensions: [crlNumber(1), idp({ onlyContainsAttributeCerts: true })] }))).toBe("unavailable");
  });

  test("a CRL with an entry carrying a critical extension certkeeper cannot read answers nothing (RFC 5280 §5.3)", async () => {
    const strange = new x509.Extension("1.3.6.1.4.1.99999.7", true, new Uint8Array([0x05, 0x00]));
    const body = await signedCrl({ extensions: [crlNumber(1)], entries: [{ serial: "3a0102030405", extensions: [strange] }] });
    expect(await stateFor("/entry-critical.crl", body)).toBe("unavailable");
  });

  test("a delta CRL answers nothing even when its deltaCRLIndicator is not marked critical", async () => {
    const delta = new x509.Extension("2.5.29.27", false, AsnConvert.serialize(new BaseCRLNumber(10)));
    expect(await stateFor("/lax-delta.crl", await signedCrl({ extensions: [crlNumber(11), delta] }))).toBe("unavailable");
  });
});

describe("CRLs that do answer", () => {
  test("a CRL whose issuing distribution point names no URL (onlyContainsUserCerts alone) answers for a leaf: revoked", async () => {
    const serial = "3b0102030405";
    const leaf = await createLeaf({ issuer: ca, serial, dnsNames: ["user-certs.test"], crlUrls: [`${responder.url}/user-certs.crl`] });
    const body = await signedCrl({ extensions: [crlNumber(2), idp({ onlyContainsUserCerts: true })], entries: [{ serial }] });
    responder.answer = (request) => (request.path === "/user-certs.crl" ? { body } : { status: 404 });
    const { ask, close } = checkerFor();
    try {
      expect((await ask(leaf, ca)).status).toBe("revoked");
    } finally {
      await close();
    }
  });
});

describe("a verified CRL answers for its own issuer's certificates", () => {
  test("asked about a leaf of another issuer, it throws rather than answer good", async () => {
    const otherCa = await createIntermediateCa(root, { name: "CN=Test Other CRL CA, O=certkeeper tests" });
    const verified = await readCrl(await signedCrl({ extensions: [crlNumber(1)] }), { issuer: new Certificate(ca.cert.rawData), now: Date.now() });
    const mine = await createLeaf({ issuer: ca, dnsNames: ["mine.test"] });
    const theirs = await createLeaf({ issuer: otherCa, dnsNames: ["theirs.test"] });
    expect(crlAnswer(verified, { leaf: new Certificate(mine.cert.rawData), now: Date.now() }).status).toBe("good");
    expect(() => crlAnswer(verified, { leaf: new Certificate(theirs.cert.rawData), now: Date.now() })).toThrow(RevocationFailure);
  });
});
