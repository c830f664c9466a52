/**
 * What a chain may be trusted for (CONTRACT §5, §13; RFC 5280 §4.2.1, §6.1; RFC 6125), judged by
 * judgeChain and matchesHostname: each test fails on a one-line change of core/tls/chain_verify.ts the
 * rest of the suite let pass. A root not yet valid anchors nothing; an intermediate whose key usage
 * leaves out keyCertSign, or that is no CA, issues nothing; a chain of three intermediates is a real
 * chain; a name constraint `example.com` does not cover `notexample.com`, and constraints compare
 * names without regard to case; host names match without regard to case; a wildcard stands for one
 * whole label, never a public suffix's.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints } from "@peculiar/asn1-x509";
import { createIntermediateCa, createLeaf, createRootCa, generateKeys, type Issued } from "./support/pki.ts";
import { judgeChain, matchesHostname } from "../core/tls/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate } from "../core/tls/x509.ts";

const DAY = 86_400_000;
let root: Issued;
let trust: TrustStore;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=Edges Test Root, O=certkeeper tests" });
  trust = new TrustStore([root.certPem]);
});

const parsed = (...issued: Issued[]) => issued.map((i) => new Certificate(i.cert.rawData));

async function problemOf(domain: string, chain: Issued[], store = trust, now = Date.now()) {
  return (await judgeChain(parsed(...chain), domain, store, now)).problem;
}

/** A CA signed by `parent`, with its own extensions (no pathLenConstraint unless given; cA false when `isCa` is). */
async function ca(parent: Issued, name: string, extensions: x509.Extension[] = [], pathLen: number | undefined = undefined, isCa = true): Promise<Issued> {
  const keys = await generateKeys("ec");
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex").replace(/^[89a-f]/, "1"),
    subject: name,
    issuer: parent.cert.subject,
    notBefore: new Date(Date.now() - 10 * DAY),
    notAfter: new Date(Date.now() + 1000 * DAY),
    publicKey: keys.publicKey,
    signingKey: parent.keys.privateKey,
    signingAlgorithm: parent.keys.privateKey.algorithm.name === "ECDSA" ? { name: "ECDSA", hash: "SHA-256" } : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(isCa, pathLen, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ...extensions,
    ],
  });
  return { cert, keys, certPem: cert.toString("pem") + "\n", keyPem: "" };
}

const dnsConstraint = (kind: "permittedSubtrees" | "excludedSubtrees", ...names: string[]) =>
  new x509.Extension("2.5.29.30", true, AsnConvert.serialize(new NameConstraints({ [kind]: new GeneralSubtrees(names.map((dNSName) => new GeneralSubtree({ base: new GeneralName({ dNSName }) }))) })));

describe("anchors and issuers", () => {
  test("a trusted root that is not yet valid anchors nothing; from its notBefore on it does", async () => {
    const notBefore = new Date(Date.now() + 2 * DAY);
    const future = await createRootCa({ name: "CN=Future Root, O=certkeeper tests", notBefore });
    const store = new TrustStore([future.certPem]);
    const leaf = await createLeaf({ issuer: future, dnsNames: ["future.example"], freshKey: true });
    expect(await problemOf("future.example", [leaf], store)).toBe("untrusted_issuer");
    expect(await problemOf("future.example", [leaf], store, notBefore.getTime() + DAY)).toBeNull();
  });

  test("an intermediate whose key usage leaves out keyCertSign issues nothing", async () => {
    const signingOnly = await createIntermediateCa(root, { name: "CN=Signing-only CA, O=certkeeper tests", keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.cRLSign });
    const leaf = await createLeaf({ issuer: signingOnly, dnsNames: ["ku.example"], freshKey: true });
    expect(await problemOf("ku.example", [leaf, signingOnly])).toBe("untrusted_issuer");
    const proper = await createIntermediateCa(root, { name: "CN=Proper CA, O=certkeeper tests" });
    const good = await createLeaf({ issuer: proper, dnsNames: ["ku.example"], freshKey: true });
    expect(await problemOf("ku.example", [good, proper])).toBeNull();
  });

  test("a certificate whose basicConstraints say it is no CA issues nothing, whatever its key usage says", async () => {
    const notCa = await ca(root, "CN=Not a CA, O=certkeeper tests", [], undefined, false);
    const leaf = await createLeaf({ issuer: notCa, dnsNames: ["victim.example"], freshKey: true });
    expect(await problemOf("victim.example", [leaf, notCa])).toBe("untrusted_issuer");
  });

  test("a self-signed leaf that is itself a trusted anchor (an internal root) is trusted with nothing above it", async () => {
    const internal = await createLeaf({ subject: "CN=anchor.internal", dnsNames: ["anchor.internal"], freshKey: true });
    const judged = await judgeChain(parsed(internal), "anchor.internal", new TrustStore([internal.certPem]), Date.now());
    expect(judged).toEqual({ problem: null, pathValidUntil: null, chainExpiry: null });
  });

  test("a path through three intermediates is trusted", async () => {
    const first = await ca(root, "CN=Test Tier 1, O=certkeeper tests");
    const second = await ca(first, "CN=Test Tier 2, O=certkeeper tests");
    const third = await ca(second, "CN=Test Tier 3, O=certkeeper tests");
    const leaf = await createLeaf({ issuer: third, dnsNames: ["deep.example"], freshKey: true });
    expect(await problemOf("deep.example", [leaf, third, second, first])).toBeNull();
  });
});

describe("DNS name constraints (RFC 5280 §4.2.1.10)", () => {
  test("a CA permitted example.com vouches for www.example.com, not for www.notexample.com", async () => {
    const constrained = await ca(root, "CN=Example-only CA, O=certkeeper tests", [dnsConstraint("permittedSubtrees", "example.com")], 0);
    const inside = await createLeaf({ issuer: constrained, dnsNames: ["www.example.com"], freshKey: true });
    expect(await problemOf("www.example.com", [inside, constrained])).toBeNull();
    const outside = await createLeaf({ issuer: constrained, dnsNames: ["www.notexample.com"], freshKey: true });
    expect(await problemOf("www.notexample.com", [outside, constrained])).toBe("untrusted_issuer");
  });

  test("an excluded subtree holds whatever the case of the leaf's name", async () => {
    const excluding = await ca(root, "CN=Excluding CA, O=certkeeper tests", [dnsConstraint("excludedSubtrees", "banned.example.com")], 0);
    const shouting = await createLeaf({ issuer: excluding, dnsNames: ["WWW.BANNED.EXAMPLE.COM"], freshKey: true });
    expect(await problemOf("www.banned.example.com", [shouting, excluding])).toBe("untrusted_issuer");
  });

  test("an excluded subtree written in capitals holds for a lower-case name", async () => {
    const excluding = await ca(root, "CN=Capital Excluding CA, O=certkeeper tests", [dnsConstraint("excludedSubtrees", "BANNED.EXAMPLE.COM")], 0);
    const leaf = await createLeaf({ issuer: excluding, dnsNames: ["www.banned.example.com"], freshKey: true });
    expect(await problemOf("www.banned.example.com", [leaf, excluding])).toBe("untrusted_issuer");
  });
});

describe("host names (RFC 6125)", () => {
  test("a DNS name in capitals in the certificate names the domain", async () => {
    const issuer = await createIntermediateCa(root, { name: "CN=Case CA, O=certkeeper tests" });
    const leaf = await createLeaf({ issuer, dnsNames: ["WWW.CASE.EXAMPLE"], freshKey: true });
    expect(await problemOf("www.case.example", [leaf, issuer])).toBeNull();
    expect(matchesHostname(["WWW.Case.Example"], "www.case.example")).toBe(true);
  });

  test("a wildcard covers exactly one label, and never a whole top-level domain", () => {
    expect(matchesHostname(["*.example.com"], "a.example.com")).toBe(true);
    expect(matchesHostname(["*.example.com"], "a.b.example.com")).toBe(false);
    expect(matchesHostname(["*.com"], "example.com")).toBe(false);
    expect(matchesHostname(["*.test"], "certkeeper.test")).toBe(false);
  });
});
