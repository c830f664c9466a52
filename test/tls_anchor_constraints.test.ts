/**
 * A trusted root's own constraints hold on the paths it anchors. An internal root
 * (CERTKEEPER_EXTRA_CA_FILE) constrained to `corp.example` does not vouch for a leaf it issues for
 * `www.bank.example` (untrusted_issuer), as OpenSSL (check_name_constraints walks the chain up to and
 * including the anchor), Go's crypto/x509 and Chromium hold it; and a root with pathLenConstraint 0
 * vouches for a leaf it signs itself, not for one through an intermediate below it (`openssl verify`:
 * "path length constraint exceeded").
 */
import { beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints } from "@peculiar/asn1-x509";
import { createIntermediateCa, createLeaf, generateKeys, type Issued } from "./support/pki.ts";
import { judgeChain } from "../core/tls/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate } from "../core/tls/x509.ts";

const DAY = 86_400_000;
let root: Issued;
let trust: TrustStore;

beforeAll(async () => {
  const keys = await generateKeys("ec");
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "0a0b0c",
    name: "CN=Constrained Internal Root, O=certkeeper tests",
    notBefore: new Date(Date.now() - 10 * DAY),
    notAfter: new Date(Date.now() + 1000 * DAY),
    keys,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      new x509.Extension(
        "2.5.29.30",
        true,
        AsnConvert.serialize(new NameConstraints({ permittedSubtrees: new GeneralSubtrees([new GeneralSubtree({ base: new GeneralName({ dNSName: "corp.example" }) })]) })),
      ),
    ],
  });
  root = { cert, keys, certPem: cert.toString("pem") + "\n", keyPem: "" };
  trust = new TrustStore([root.certPem]);
});

const problemOf = async (leaf: Issued, domain: string) => (await judgeChain([new Certificate(leaf.cert.rawData)], domain, trust, Date.now())).problem;

describe("a constrained trusted root (RFC 5280 §4.2.1.10, as OpenSSL, Go and Chromium hold it)", () => {
  test("the control: it vouches for a name inside its permitted subtree", async () => {
    const leaf = await createLeaf({ issuer: root, dnsNames: ["www.corp.example"], freshKey: true });
    expect(await problemOf(leaf, "www.corp.example")).toBeNull();
  });

  test("it does not vouch for a name outside its permitted subtree: untrusted_issuer", async () => {
    const leaf = await createLeaf({ issuer: root, dnsNames: ["www.bank.example"], freshKey: true });
    expect(await problemOf(leaf, "www.bank.example")).toBe("untrusted_issuer");
  });
});

describe("a trusted root's own path length constraint (RFC 5280 §4.2.1.9, as OpenSSL and Go hold it)", () => {
  test("a root with pathLenConstraint 0 vouches for a leaf it signs itself, not for one through an intermediate below it", async () => {
    const keys = await generateKeys("ec");
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: "0a0b0d",
      name: "CN=PathLen0 Internal Root, O=certkeeper tests",
      notBefore: new Date(Date.now() - 10 * DAY),
      notAfter: new Date(Date.now() + 1000 * DAY),
      keys,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ],
    });
    const pathLen0: Issued = { cert, keys, certPem: cert.toString("pem") + "\n", keyPem: "" };
    const store = new TrustStore([pathLen0.certPem]);
    const direct = await createLeaf({ issuer: pathLen0, dnsNames: ["direct.example"], freshKey: true });
    expect((await judgeChain([new Certificate(direct.cert.rawData)], "direct.example", store, Date.now())).problem).toBeNull();
    const intermediate = await createIntermediateCa(pathLen0, { name: "CN=Below PathLen0 Root, O=certkeeper tests" });
    const below = await createLeaf({ issuer: intermediate, dnsNames: ["below.example"], freshKey: true });
    const chain = [below, intermediate].map((i) => new Certificate(i.cert.rawData));
    expect((await judgeChain(chain, "below.example", store, Date.now())).problem).toBe("untrusted_issuer");
  });
});
