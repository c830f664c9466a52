/**
 * A CA whose name constraints exclude `secret.example.com` does not vouch for that host through a
 * wildcard it issues: `*.example.com` stands for secret.example.com too, so the chain is refused as a
 * browser refuses it (Chromium matches a wildcard against excluded subtrees partially); RFC 5280
 * §4.2.1.10 leaves wildcards unsaid. A wildcard the exclusion cannot reach is trusted.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints } from "@peculiar/asn1-x509";
import { createLeaf, createRootCa, generateKeys, type Issued } from "./support/pki.ts";
import { judgeChain } from "../core/tls/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate } from "../core/tls/x509.ts";

const DAY = 86_400_000;
let root: Issued;
let excluding: Issued;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=Wildcard Test Root, O=certkeeper tests" });
  const keys = await generateKeys("ec");
  const constraint = new x509.Extension(
    "2.5.29.30",
    true,
    AsnConvert.serialize(new NameConstraints({ excludedSubtrees: new GeneralSubtrees([new GeneralSubtree({ base: new GeneralName({ dNSName: "secret.example.com" }) })]) })),
  );
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "1f01",
    subject: "CN=Excluding Test CA, O=certkeeper tests",
    issuer: root.cert.subject,
    notBefore: new Date(Date.now() - 10 * DAY),
    notAfter: new Date(Date.now() + 1000 * DAY),
    publicKey: keys.publicKey,
    signingKey: root.keys.privateKey,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true), constraint],
  });
  excluding = { cert, keys, certPem: cert.toString("pem"), keyPem: "" };
});

async function problemOf(domain: string, leaf: Issued) {
  return (await judgeChain([leaf, excluding].map((i) => new Certificate(i.cert.rawData)), domain, new TrustStore([root.certPem]), Date.now())).problem;
}

describe("a wildcard under an excluded subtree", () => {
  test("the control: a leaf naming secret.example.com itself is refused, one naming www.example.com is trusted", async () => {
    expect(await problemOf("secret.example.com", await createLeaf({ issuer: excluding, dnsNames: ["secret.example.com"], freshKey: true }))).toBe("untrusted_issuer");
    expect(await problemOf("www.example.com", await createLeaf({ issuer: excluding, dnsNames: ["www.example.com"], freshKey: true }))).toBeNull();
  });

  test("*.example.com from a CA excluded from secret.example.com does not make secret.example.com trusted", async () => {
    const wildcard = await createLeaf({ issuer: excluding, dnsNames: ["*.example.com"], freshKey: true });
    expect(await problemOf("secret.example.com", wildcard)).toBe("untrusted_issuer");
  });

  test("a wildcard the exclusion cannot reach stays trusted: *.other.example.com, *.deep.secret.example.com is refused (below it)", async () => {
    expect(await problemOf("a.other.example.com", await createLeaf({ issuer: excluding, dnsNames: ["*.other.example.com"], freshKey: true }))).toBeNull();
    expect(await problemOf("a.deep.secret.example.com", await createLeaf({ issuer: excluding, dnsNames: ["*.deep.secret.example.com"], freshKey: true }))).toBe("untrusted_issuer");
  });
});
