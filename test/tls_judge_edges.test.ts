/**
 * judgeChain at edges no other test held (CONTRACT §5; RFC 5280 §4.2.1.10): an untrusted chain whose
 * only root is not yet valid is judged again at that root's notBefore; an honest chain whose server
 * also sends a few stale CAs of the issuer's name (old keys) is still trusted, the signature budget
 * being for meshes, not for a handful of decoys; a `.allowed.example` dNSName constraint covers names
 * below allowed.example, not allowed.example itself.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints } from "@peculiar/asn1-x509";
import { createIntermediateCa, createLeaf, createRootCa, generateKeys, type Issued } from "./support/pki.ts";
import { judgeChain } from "../core/tls/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate } from "../core/tls/x509.ts";

const DAY = 86_400_000;
let root: Issued;
let trust: TrustStore;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=Judge Root, O=certkeeper tests" });
  trust = new TrustStore([root.certPem]);
});

const parsed = (...issued: Issued[]) => issued.map((i) => new Certificate(i.cert.rawData));

/** An intermediate under the root with `extensions` added (keys only: its PEM is not needed here). */
async function constrainedCa(name: string, extensions: x509.Extension[]): Promise<Issued> {
  const keys = await generateKeys("ec");
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "1a2b3c",
    subject: name,
    issuer: root.cert.subject,
    notBefore: new Date(Date.now() - 10 * DAY),
    notAfter: new Date(Date.now() + 1000 * DAY),
    publicKey: keys.publicKey,
    signingKey: root.keys.privateKey,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ...extensions,
    ],
  });
  return { cert, keys, certPem: cert.toString("pem") + "\n", keyPem: "" };
}

describe("when an untrusted chain is judged again", () => {
  test("a chain whose only root is not yet valid is untrusted until that root's notBefore, and is judged again then", async () => {
    const notBefore = new Date(Date.now() + 3 * DAY);
    const future = await createRootCa({ name: "CN=Future Root, O=certkeeper tests", notBefore });
    const store = new TrustStore([future.certPem]);
    const leaf = await createLeaf({ issuer: future, dnsNames: ["future.example"], freshKey: true });
    const judged = await judgeChain(parsed(leaf), "future.example", store, Date.now());
    expect(judged.problem).toBe("untrusted_issuer");
    expect(judged.pathValidUntil).toBe(future.cert.notBefore.getTime());
  });
});

describe("the signature budget spares honest chains", () => {
  test("a server that also sends six stale CAs of the issuer's name (other keys) before the right one is trusted", async () => {
    const name = "CN=Rolled CA, O=certkeeper tests";
    const stale: Issued[] = [];
    for (let i = 0; i < 6; i++) stale.push(await createIntermediateCa(root, { name }));
    const current = await createIntermediateCa(root, { name });
    const leaf = await createLeaf({ issuer: current, dnsNames: ["rolled.example"], freshKey: true });
    expect((await judgeChain(parsed(leaf, ...stale, current), "rolled.example", trust, Date.now())).problem).toBeNull();
  });
});

describe("a leading-dot dNSName constraint (RFC 5280 §4.2.1.10, as Go and OpenSSL read it)", () => {
  test("permitted .allowed.example covers www.allowed.example, not allowed.example itself", async () => {
    const constraint = new x509.Extension(
      "2.5.29.30",
      true,
      AsnConvert.serialize(new NameConstraints({ permittedSubtrees: new GeneralSubtrees([new GeneralSubtree({ base: new GeneralName({ dNSName: ".allowed.example" }) })]) })),
    );
    const constrained = await constrainedCa("CN=Leading Dot CA, O=certkeeper tests", [constraint]);
    const below = await createLeaf({ issuer: constrained, dnsNames: ["www.allowed.example"], freshKey: true });
    expect((await judgeChain(parsed(below, constrained), "www.allowed.example", trust, Date.now())).problem).toBeNull();
    const apex = await createLeaf({ issuer: constrained, dnsNames: ["allowed.example"], freshKey: true });
    expect((await judgeChain(parsed(apex, constrained), "allowed.example", trust, Date.now())).problem).toBe("untrusted_issuer");
  });
});
