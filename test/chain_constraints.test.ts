/**
 * A trusted path holds what each CA on it allows (CONTRACT §5; RFC 5280 §6.1): a CA constrained to
 * some DNS names vouches for those alone (§4.2.1.10), a CA with pathLenConstraint 0 certifies no other
 * CA (§4.2.1.9); a path that breaks either is no trusted path, `invalid` with `untrusted_issuer`. A leaf
 * whose issuer is its own subject is `self_signed` only when its own key verifies its signature: one
 * whose signature cannot even be read is still added, `untrusted_issuer`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate as AsnCertificate, GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints } from "@peculiar/asn1-x509";
import { chainPem, createLeaf, generateKeys, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

const DAY = 86_400_000;
let h: Harness;
const servers: TlsTestServer[] = [];
beforeAll(async () => {
  h = await createHarness();
});
const dnsConstraint = (kind: "permittedSubtrees" | "excludedSubtrees", ...names: string[]) =>
  new x509.Extension("2.5.29.30", true, AsnConvert.serialize(new NameConstraints({ [kind]: new GeneralSubtrees(names.map((dNSName) => new GeneralSubtree({ base: new GeneralName({ dNSName }) }))) })));
afterAll(async () => {
  for (const s of servers) await s.close();
  await h.close();
});

async function ca(parent: Issued, name: string, extensions: x509.Extension[], pathLen: number | undefined = undefined, issuerName = parent.cert.subject): Promise<Issued> {
  const keys = await generateKeys("ec");
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex").replace(/^[89a-f]/, "1"),
    subject: name,
    issuer: issuerName,
    notBefore: new Date(Date.now() - 10 * DAY),
    notAfter: new Date(Date.now() + 1000 * DAY),
    publicKey: keys.publicKey,
    signingKey: parent.keys.privateKey,
    signingAlgorithm: parent.keys.privateKey.algorithm.name === "ECDSA" ? { name: "ECDSA", hash: "SHA-256" } : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(true, pathLen, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ...extensions,
    ],
  });
  const der = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  return { cert, keys, certPem: cert.toString("pem") + "\n", keyPem: `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n` };
}

async function statusOf(domain: string, pem: string, key: string) {
  const server = await startTlsServer({ cert: pem, key });
  servers.push(server);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  return [shown.status, shown.statusReason];
}

describe("name constraints", () => {
  test("a CA permitted allowed.example vouches for names under it, not for one under certkeeper.test", async () => {
    const { root } = await testPki();
    const constrained = await ca(root, "CN=Constrained CA, O=review", [dnsConstraint("permittedSubtrees", "allowed.example")], 0);
    const outside = `outside.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: constrained, dnsNames: [outside], freshKey: true });
    expect(await statusOf(outside, chainPem(leaf, constrained), leaf.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
    const permittedCa = await ca(root, "CN=Permitting CA, O=review", [dnsConstraint("permittedSubtrees", TEST_DOMAIN)], 0);
    const inside = `inside.${TEST_DOMAIN}`;
    const good = await createLeaf({ issuer: permittedCa, dnsNames: [inside], freshKey: true });
    expect(await statusOf(inside, chainPem(good, permittedCa), good.keyPem)).toEqual(["valid", null]);
  });

  test("a CA excluding a subtree does not vouch for a name in it", async () => {
    const { root } = await testPki();
    const excluding = await ca(root, "CN=Excluding CA, O=review", [dnsConstraint("excludedSubtrees", `banned.${TEST_DOMAIN}`)], 0);
    const domain = `www.banned.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: excluding, dnsNames: [domain], freshKey: true });
    expect(await statusOf(domain, chainPem(leaf, excluding), leaf.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
  });

  test("a CA whose constraints would cost more than 250,000 comparisons with the leaf's names vouches for nothing (as Go bounds them); below that it does", async () => {
    const { root } = await testPki();
    // 3,000 excluded subtrees none of the names is in: 101 names cost 303,000 comparisons, 51 cost 153,000.
    const subtrees = Array.from({ length: 3000 }, (_, i) => `elsewhere${i}.example`);
    const many = await ca(root, "CN=Many Constraints CA, O=review", [dnsConstraint("excludedSubtrees", ...subtrees)], 0);
    const names = (domain: string, count: number) => [domain, ...Array.from({ length: count }, (_, i) => `n${i}.${domain}`)];
    const costly = `costly.${TEST_DOMAIN}`;
    const costlyLeaf = await createLeaf({ issuer: many, dnsNames: names(costly, 100), freshKey: true });
    expect(await statusOf(costly, chainPem(costlyLeaf, many), costlyLeaf.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
    const within = `within.${TEST_DOMAIN}`;
    const withinLeaf = await createLeaf({ issuer: many, dnsNames: names(within, 50), freshKey: true });
    expect(await statusOf(within, chainPem(withinLeaf, many), withinLeaf.keyPem)).toEqual(["valid", null]);
  });
});

describe("path length", () => {
  test("a CA with pathLenConstraint 0 may not certify another CA; with 1 it may", async () => {
    const { root } = await testPki();
    const top = await ca(root, "CN=PathLen0 CA, O=review", [], 0);
    const below = await ca(top, "CN=Below PathLen0 CA, O=review", [], undefined);
    const domain = `pathlen.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: below, dnsNames: [domain], freshKey: true });
    expect(await statusOf(domain, chainPem(leaf, below, top), leaf.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
    const top1 = await ca(root, "CN=PathLen1 CA, O=review", [], 1);
    const below1 = await ca(top1, "CN=Below PathLen1 CA, O=review", [], 0);
    const domain1 = `pathlen1.${TEST_DOMAIN}`;
    const leaf1 = await createLeaf({ issuer: below1, dnsNames: [domain1], freshKey: true });
    expect(await statusOf(domain1, chainPem(leaf1, below1, top1), leaf1.keyPem)).toEqual(["valid", null]);
  });

  test("a self-issued CA (a key rollover) below a CA with pathLenConstraint 0 is not counted, whatever the case of its issuer name", async () => {
    // RFC 5280 §4.2.1.9 and §6.1.4 (l): self-issued intermediates are not counted; a certificate is
    // self-issued when its issuer and subject names match, compared as §7.1 compares names (case
    // folded; OpenSSL's X509_NAME_cmp on canonical encodings agrees).
    const { root } = await testPki();
    for (const [label, issuerName] of [["exact", "CN=Rollover CA, O=review"], ["case", "CN=ROLLOVER CA, O=Review"]] as const) {
      const top = await ca(root, "CN=Rollover CA, O=review", [], 0);
      const rolled = await ca(top, "CN=Rollover CA, O=review", [], 0, issuerName);
      const domain = `rollover-${label}.${TEST_DOMAIN}`;
      const leaf = await createLeaf({ issuer: rolled, dnsNames: [domain], freshKey: true });
      expect([label, ...(await statusOf(domain, chainPem(leaf, rolled, top), leaf.keyPem))]).toEqual([label, "valid", null]);
    }
  });
});

describe("self-signed", () => {
  test("a leaf naming itself as issuer whose signature cannot be read is added, untrusted_issuer, not 422", async () => {
    const domain = `garbled.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ dnsNames: [domain] }); // self-signed, P-256
    const asn = AsnConvert.parse(leaf.cert.rawData, AsnCertificate);
    asn.signatureValue = new Uint8Array(72).fill(0x41).buffer; // not a DER ECDSA-Sig-Value
    const der = Buffer.from(AsnConvert.serialize(asn));
    const pem = `-----BEGIN CERTIFICATE-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`;
    expect(await statusOf(domain, pem, leaf.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
    const genuine = `self.${TEST_DOMAIN}`;
    const self = await createLeaf({ dnsNames: [genuine] });
    expect(await statusOf(genuine, self.certPem, self.keyPem)).toEqual(["invalid", "self_signed"]);
  });
});

describe("extended key usage", () => {
  test("a leaf for client authentication alone serves no TLS server; one naming any usage does", async () => {
    const { ecIntermediate: intermediate } = await testPki();
    const clientOnly = `client.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: intermediate, dnsNames: [clientOnly], extendedKeyUsages: [x509.ExtendedKeyUsage.clientAuth], freshKey: true });
    expect(await statusOf(clientOnly, chainPem(leaf, intermediate), leaf.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
    const anyUsage = `any.${TEST_DOMAIN}`;
    const good = await createLeaf({ issuer: intermediate, dnsNames: [anyUsage], extendedKeyUsages: ["2.5.29.37.0"], freshKey: true });
    expect(await statusOf(anyUsage, chainPem(good, intermediate), good.keyPem)).toEqual(["valid", null]);
  });

  test("a CA whose extended key usage leaves out TLS servers vouches for no server's leaf", async () => {
    const { root } = await testPki();
    const emailCa = await ca(root, "CN=Email CA, O=review", [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.emailProtection])], 0);
    const domain = `mail-ca.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: emailCa, dnsNames: [domain], freshKey: true });
    expect(await statusOf(domain, chainPem(leaf, emailCa), leaf.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
    const tlsCa = await ca(root, "CN=TLS CA, O=review", [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth])], 0);
    const fine = `tls-ca.${TEST_DOMAIN}`;
    const good = await createLeaf({ issuer: tlsCa, dnsNames: [fine], freshKey: true });
    expect(await statusOf(fine, chainPem(good, tlsCa), good.keyPem)).toEqual(["valid", null]);
  });
});
