/**
 * A CRL answers for a leaf only when it is complete for the leaf's issuer and for the distribution
 * point it was fetched from (RFC 5280 §5.2, §6.3.3): a delta CRL, a CRL limited to CA certificates,
 * to some reasons, to another partition, or carrying a critical extension certkeeper cannot read,
 * answers nothing (`unavailable` when there is no other source). An entry with reason removeFromCRL
 * (§5.3.1) does not mean revoked.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { DistributionPointName, GeneralName, IssuingDistributionPoint, BaseCRLNumber, CRLNumber } from "@peculiar/asn1-x509";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";

let root: Issued;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa();
  ca = await createIntermediateCa(root);
  responder = await startResponder();
});
afterAll(() => responder.close());

async function signedCrl(options: { extensions?: x509.Extension[]; entries?: Array<{ serial: string; reason?: number }>; by?: Issued }): Promise<Uint8Array> {
  const by = options.by ?? ca;
  const ec = by.keys.privateKey.algorithm.name === "ECDSA";
  const generated = await x509.X509CrlGenerator.create({
    issuer: by.cert.subject,
    thisUpdate: new Date(Date.now() - 60_000),
    nextUpdate: new Date(Date.now() + 86_400_000),
    entries: (options.entries ?? []).map((e) => ({ serialNumber: e.serial, revocationDate: new Date(Date.now() - 3_600_000), reason: e.reason })),
    extensions: options.extensions,
    signingKey: by.keys.privateKey,
    signingAlgorithm: ec ? { name: "ECDSA", hash: "SHA-256" } : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
  });
  return new Uint8Array(generated.rawData);
}

const crlNumber = (n: number) => new x509.Extension("2.5.29.20", false, AsnConvert.serialize(new CRLNumber(n)));
const deltaIndicator = (base: number) => new x509.Extension("2.5.29.27", true, AsnConvert.serialize(new BaseCRLNumber(base)));
const idp = (params: Partial<IssuingDistributionPoint>) => new x509.Extension("2.5.29.28", true, AsnConvert.serialize(new IssuingDistributionPoint(params)));

async function ask(path: string, body: Uint8Array, issuer: Issued = ca) {
  const leaf = await createLeaf({ issuer, dnsNames: ["crl-scope.test"], crlUrls: [`${responder.url}${path}`] });
  responder.answer = (request) => (request.path === path ? { body } : { status: 404 });
  const { ask, close } = checkerFor();
  try {
    return { leaf, state: await ask(leaf, issuer) };
  } finally {
    await close();
  }
}

describe("CRL scope", () => {
  test("an entry with reason removeFromCRL (8) in a complete CRL does not mean revoked; another reason does", async () => {
    const removed = "7a1b2c3d4e5f60718293a4b5c6d7e8f9";
    const held = "6a1b2c3d4e5f60718293a4b5c6d7e8f9";
    const body = await signedCrl({ extensions: [crlNumber(11)], entries: [{ serial: removed, reason: 8 }, { serial: held, reason: 6 }] });
    responder.answer = (request) => (request.path === "/removed.crl" ? { body } : { status: 404 });
    const { ask, close } = checkerFor();
    try {
      const leaf = await createLeaf({ issuer: ca, dnsNames: ["removed.test"], serial: removed, crlUrls: [`${responder.url}/removed.crl`] });
      expect((await ask(leaf, ca)).status).toBe("good");
      const other = await createLeaf({ issuer: ca, dnsNames: ["held.test"], serial: held, crlUrls: [`${responder.url}/removed.crl`] });
      expect(await ask(other, ca)).toMatchObject({ status: "revoked", reason: "certificateHold" });
    } finally {
      await close();
    }
  });

  test("a delta CRL (critical deltaCRLIndicator) at the distribution point answers nothing", async () => {
    const { state } = await ask("/delta.crl", await signedCrl({ extensions: [crlNumber(11), deltaIndicator(10)] }));
    expect(state.status).toBe("unavailable");
  });

  test("a CRL that only covers CA certificates (IDP onlyContainsCACerts) answers nothing about a leaf", async () => {
    const { state } = await ask("/ca-only.crl", await signedCrl({ extensions: [crlNumber(1), idp({ onlyContainsCACerts: true })] }));
    expect(state.status).toBe("unavailable");
  });

  test("a CRL naming another distribution point (a partition) answers nothing; one naming its own URL answers", async () => {
    const named = (path: string) => new DistributionPointName({ fullName: [new GeneralName({ uniformResourceIdentifier: `${responder.url}${path}` })] });
    const other = await ask("/shard-3.crl", await signedCrl({ extensions: [crlNumber(1), idp({ distributionPoint: named("/shard-7.crl"), onlyContainsUserCerts: true })] }));
    expect(other.state.status).toBe("unavailable");
    const own = await ask("/shard-4.crl", await signedCrl({ extensions: [crlNumber(1), idp({ distributionPoint: named("/shard-4.crl"), onlyContainsUserCerts: true })] }));
    expect(own.state.status).toBe("good");
  });

  test("a critical CRL extension certkeeper cannot read makes the CRL answer nothing", async () => {
    const unknown = new x509.Extension("1.3.6.1.4.1.99999.1", true, new Uint8Array([0x05, 0x00]));
    const { state } = await ask("/critical.crl", await signedCrl({ extensions: [crlNumber(1), unknown] }));
    expect(state.status).toBe("unavailable");
  });

  test("a CRL signed by an issuer whose key usage leaves out cRLSign answers nothing (RFC 5280 §6.3.3 (f))", async () => {
    const noCrlSign = await createIntermediateCa(root, { name: "CN=No CRL signing CA", keyUsages: x509.KeyUsageFlags.keyCertSign });
    const { state } = await ask("/no-crlsign.crl", await signedCrl({ extensions: [crlNumber(1)], by: noCrlSign }), noCrlSign);
    expect(state.status).toBe("unavailable");
  });

  test("a plain complete CRL not listing the leaf is good", async () => {
    const { state } = await ask("/plain.crl", await signedCrl({ extensions: [crlNumber(1)] }));
    expect(state.status).toBe("good");
  });
});
