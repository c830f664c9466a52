/**
 * The trust store finds anchors by subject without parsing every root with @peculiar/x509: the roots
 * are indexed by the subject as the platform's X.509 parser renders it, and a certificate is looked up
 * by its issuer rendered the same way. These tests hold it to what comparing @peculiar/x509's subject
 * strings over every parsed root gave, over the ~150 real system roots and over test CAs that share a
 * name, and check that what the platform cannot read still falls back to that comparison.
 */
import { describe, expect, test } from "bun:test";
import * as tls from "node:tls";
import { X509Certificate as PlatformCertificate } from "node:crypto";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate, x509 } from "../core/tls/x509.ts";
import { createIntermediateCa, createLeaf, createRootCa } from "./support/pki.ts";

const der = (cert: Certificate) => Buffer.from(cert.rawData).toString("base64");
const ders = (certs: Certificate[]) => certs.map(der).sort();
const EC = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const DAY = 86_400_000;

/**
 * A root named `rootName` and an intermediate it signs whose issuer is written as `issuerName` (names
 * as @peculiar/x509's JSON, where each value can choose its ASN.1 string type).
 */
async function signedPair(rootName: x509.JsonNameParams, issuerName: x509.JsonNameParams): Promise<{ root: Certificate; intermediate: Certificate }> {
  const rootKeys = (await crypto.subtle.generateKey(EC, true, ["sign", "verify"])) as CryptoKeyPair;
  const ownKeys = (await crypto.subtle.generateKey(EC, true, ["sign", "verify"])) as CryptoKeyPair;
  const validity = { notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 300 * DAY) };
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: new x509.Name(rootName),
    ...validity,
    keys: rootKeys,
    signingAlgorithm: EC,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  const intermediate = await x509.X509CertificateGenerator.create({
    serialNumber: "02",
    subject: "CN=Pair Intermediate",
    issuer: new x509.Name(issuerName),
    ...validity,
    publicKey: ownKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: EC,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  return { root: new Certificate(root.toString("pem")), intermediate: new Certificate(intermediate.toString("pem")) };
}

describe("TrustStore", () => {
  test("over every system root: each is its own anchor, found by its issuer, and the anchors are what comparing parsed subjects finds", async () => {
    const store = TrustStore.system();
    const roots = tls.rootCertificates.map((pem) => new Certificate(pem));
    expect(roots.length).toBeGreaterThan(50);
    for (const root of roots) {
      expect(await store.isAnchor(root)).toBe(true);
      // What the former index (every root parsed, matched by @peculiar/x509's subject string) gave.
      const bySubjectString = roots.filter((other) => other.subject === root.issuer);
      expect(ders(await store.anchorsFor(root))).toEqual(ders(bySubjectString));
    }
  });

  test("a chain's issuer finds the root that signed it; a stranger's finds nothing, and is no anchor", async () => {
    const root = await createRootCa({ name: "CN=Trust Store Test Root, O=certkeeper tests" });
    const intermediate = await createIntermediateCa(root, { name: "CN=Trust Store Test Intermediate, O=certkeeper tests" });
    const stranger = await createRootCa({ name: "CN=Stranger Root, O=elsewhere" });
    const leaf = await createLeaf({ issuer: stranger });
    const store = new TrustStore([root.certPem]);
    expect(ders(await store.anchorsFor(new Certificate(intermediate.certPem)))).toEqual([der(new Certificate(root.certPem))]);
    expect(await store.anchorsFor(new Certificate(leaf.certPem))).toEqual([]);
    expect(await store.isAnchor(new Certificate(stranger.certPem))).toBe(false);
    expect(await store.isAnchor(new Certificate(intermediate.certPem))).toBe(false);
  });

  test("two roots of one name are both candidates; only the very certificate is an anchor, not another of the same name", async () => {
    const name = "CN=Twin Root, O=certkeeper tests";
    const [first, second, outsider] = await Promise.all([createRootCa({ name }), createRootCa({ name }), createRootCa({ name })]);
    const intermediate = await createIntermediateCa(second, { name: "CN=Twin Intermediate, O=certkeeper tests" });
    const store = new TrustStore([first.certPem, second.certPem]);
    expect(ders(await store.anchorsFor(new Certificate(intermediate.certPem)))).toEqual(ders([new Certificate(first.certPem), new Certificate(second.certPem)]));
    expect(await store.isAnchor(new Certificate(second.certPem))).toBe(true);
    expect(await store.isAnchor(new Certificate(outsider.certPem))).toBe(false);
  });

  test("an unreadable root disables none of the others", async () => {
    const root = await createRootCa({ name: "CN=Readable Root, O=certkeeper tests" });
    const intermediate = await createIntermediateCa(root, { name: "CN=Readable Intermediate, O=certkeeper tests" });
    const garbage = "-----BEGIN CERTIFICATE-----\nTm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----";
    expect(() => new PlatformCertificate(garbage)).toThrow();
    const store = new TrustStore([garbage, root.certPem]);
    expect(ders(await store.anchorsFor(new Certificate(intermediate.certPem)))).toEqual([der(new Certificate(root.certPem))]);
    expect(await store.isAnchor(new Certificate(root.certPem))).toBe(true);
  });

  test("an issuer written as UTF8String finds its root named in PrintableString, as CAs write them", async () => {
    const { root, intermediate } = await signedPair(
      [{ CN: [{ printableString: "Example Root" }] }, { O: [{ printableString: "Example" }] }],
      [{ CN: [{ utf8String: "Example Root" }] }, { O: [{ utf8String: "Example" }] }],
    );
    const store = new TrustStore([root.toString("pem")]);
    expect(ders(await store.anchorsFor(intermediate))).toEqual([der(root)]);
  });

  test("a root the platform cannot read (a name outside the BMP in UniversalString) is still an anchor, found by its parsed subject", async () => {
    // The intermediate names it in UTF8String, which the platform reads: found among the unread roots.
    const { root, intermediate } = await signedPair([{ CN: [{ universalString: "Root \u{1F600}" }] }], [{ CN: [{ utf8String: "Root \u{1F600}" }] }]);
    expect(() => new PlatformCertificate(new Uint8Array(root.rawData))).toThrow();
    expect(new PlatformCertificate(new Uint8Array(intermediate.rawData)).issuer).toContain("Root");
    const other = await createRootCa({ name: "CN=Readable Neighbour, O=certkeeper tests" });
    const store = new TrustStore([other.certPem, root.toString("pem")]);
    expect(ders(await store.anchorsFor(intermediate))).toEqual([der(root)]);
    expect(await store.isAnchor(root)).toBe(true);
    expect(await store.isAnchor(intermediate)).toBe(false);
  });

  test("a certificate the platform cannot read is matched by its parsed issuer, as before", async () => {
    const root = await createRootCa({ name: "CN=Fallback Root, O=certkeeper tests" });
    const neighbour = await createRootCa({ name: "CN=Fallback Neighbour, O=certkeeper tests" });
    const unreadable = new Certificate((await createIntermediateCa(root, { name: "CN=Fallback Intermediate, O=certkeeper tests" })).certPem);
    const store = new TrustStore([neighbour.certPem, root.certPem]);
    // As the platform's parser would refuse it: its DER cut short (the parsed object keeps its names;
    // only the platform's view of it fails).
    Object.defineProperty(unreadable, "rawData", { value: unreadable.rawData.slice(0, 40) });
    expect(() => new PlatformCertificate(new Uint8Array(unreadable.rawData))).toThrow();
    expect(ders(await store.anchorsFor(unreadable))).toEqual([der(new Certificate(root.certPem))]);
  });
});
