/**
 * Chain judgement rules (CONTRACT §5; RFC 5280 §4.2, §4.2.1.10, §4.2.1.12, §6.1; RFC 6125) that no
 * other test held: a sent CA carrying an unrecognised critical extension vouches for nothing, nor does
 * one whose Microsoft application policies are critical without an extended key usage beside them; a
 * critical extended key usage is understood; name constraints that cannot be read allow nothing; an empty dNSName subtree covers every name; a SAN written with a trailing dot is
 * the same name, both for the host name and under a CA's excluded subtree; a CA whose key signed the
 * leaf but whose subject is not the leaf's issuer name is not its issuer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints } from "@peculiar/asn1-x509";
import { chainPem, createLeaf, generateKeys, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

const DAY = 86_400_000;
let h: Harness;
const servers: TlsTestServer[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await h.close();
});

const dnsConstraint = (kind: "permittedSubtrees" | "excludedSubtrees", ...names: string[]) =>
  new x509.Extension("2.5.29.30", true, AsnConvert.serialize(new NameConstraints({ [kind]: new GeneralSubtrees(names.map((dNSName) => new GeneralSubtree({ base: new GeneralName({ dNSName }) }))) })));
const pem = (keys: CryptoKeyPair) =>
  crypto.subtle.exportKey("pkcs8", keys.privateKey).then((der) => {
    const b64 = Buffer.from(der).toString("base64");
    return `-----BEGIN PRIVATE KEY-----\n${b64.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
  });
const serial = () => Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex").replace(/^[89a-f]/, "1");
const algorithmOf = (keys: CryptoKeyPair) =>
  keys.privateKey.algorithm.name === "ECDSA" ? { name: "ECDSA", hash: "SHA-256" } : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };

/** An intermediate CA under `parent` (pathLen 0, keyCertSign), with `extensions` added. */
async function ca(parent: Issued, name: string, extensions: x509.Extension[]): Promise<Issued> {
  const keys = await generateKeys("ec");
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: name,
    issuer: parent.cert.subject,
    notBefore: new Date(Date.now() - 10 * DAY),
    notAfter: new Date(Date.now() + 1000 * DAY),
    publicKey: keys.publicKey,
    signingKey: parent.keys.privateKey,
    signingAlgorithm: algorithmOf(parent.keys),
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ...extensions,
    ],
  });
  return { cert, keys, certPem: cert.toString("pem") + "\n", keyPem: await pem(keys) };
}

/** A leaf for `names`, signed by `signer`'s key, naming `issuerName` as its issuer. */
async function leafNamingIssuer(signer: Issued, issuerName: string, names: string[]): Promise<Issued> {
  const keys = await generateKeys("ec");
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${names[0]}`,
    issuer: issuerName,
    notBefore: new Date(Date.now() - 10 * DAY),
    notAfter: new Date(Date.now() + 90 * DAY),
    publicKey: keys.publicKey,
    signingKey: signer.keys.privateKey,
    signingAlgorithm: algorithmOf(signer.keys),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: "dns" as const, value }))),
    ],
  });
  return { cert, keys, certPem: cert.toString("pem") + "\n", keyPem: await pem(keys) };
}

async function statusOf(domain: string, chain: string, key: string) {
  const server = await startTlsServer({ cert: chain, key });
  servers.push(server);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  return [shown.status, shown.statusReason];
}

async function throughCa(label: string, extensions: x509.Extension[]) {
  const { root } = await testPki();
  const intermediate = await ca(root, `CN=${label} CA, O=certkeeper tests`, extensions);
  const domain = `${label}.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: intermediate, dnsNames: [domain], freshKey: true });
  return statusOf(domain, chainPem(leaf, intermediate), leaf.keyPem);
}

describe("critical extensions of a sent CA (RFC 5280 §4.2)", () => {
  test("the control: an intermediate with nothing unusual vouches for the leaf", async () => {
    expect(await throughCa("plain", [])).toEqual(["valid", null]);
  });

  test("an intermediate with an unrecognised critical extension vouches for nothing: untrusted_issuer", async () => {
    expect(await throughCa("unknown-critical", [new x509.Extension("1.2.3.4", true, new Uint8Array([0x05, 0x00]))])).toEqual(["invalid", "untrusted_issuer"]);
  });

  test("an intermediate whose extended key usage (serverAuth) is marked critical is understood: valid", async () => {
    expect(await throughCa("critical-eku", [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], true)])).toEqual(["valid", null]);
  });

  test("critical Microsoft application policies without an extended key usage beside them are not understood: untrusted_issuer", async () => {
    // SEQUENCE { SEQUENCE { OID serverAuth } }
    const value = new Uint8Array([0x30, 0x0c, 0x30, 0x0a, 0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01]);
    expect(await throughCa("ms-policies-alone", [new x509.Extension("1.3.6.1.4.1.311.21.10", true, value)])).toEqual(["invalid", "untrusted_issuer"]);
  });
});

describe("name constraints that cannot be read allow nothing", () => {
  test("an intermediate whose name constraints cannot be read vouches for nothing", async () => {
    expect(await throughCa("garbled-nc", [new x509.Extension("2.5.29.30", true, new Uint8Array([0x02, 0x01, 0x01]))])).toEqual(["invalid", "untrusted_issuer"]);
  });
});

describe("an empty dNSName subtree covers every name (RFC 5280 §4.2.1.10)", () => {
  test("permitted \"\" vouches for any name; excluded \"\" for none", async () => {
    expect(await throughCa("permit-all", [dnsConstraint("permittedSubtrees", "")])).toEqual(["valid", null]);
    expect(await throughCa("exclude-all", [dnsConstraint("excludedSubtrees", "")])).toEqual(["invalid", "untrusted_issuer"]);
  });
});

describe("a SAN written with a trailing dot (absolute form) is the same name", () => {
  test("it matches the host name: valid, not hostname_mismatch", async () => {
    const { rsaIntermediate: intermediate } = await testPki();
    const domain = `absolute.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: intermediate, dnsNames: [`${domain}.`], freshKey: true });
    expect(await statusOf(domain, chainPem(leaf, intermediate), leaf.keyPem)).toEqual(["valid", null]);
  });

  test("under an excluded subtree it is still excluded: untrusted_issuer", async () => {
    const { root } = await testPki();
    const excluding = await ca(root, "CN=Excluding Absolute CA, O=certkeeper tests", [dnsConstraint("excludedSubtrees", `banned.${TEST_DOMAIN}`)]);
    const domain = `www.banned.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: excluding, dnsNames: [`${domain}.`], freshKey: true });
    expect(await statusOf(domain, chainPem(leaf, excluding), leaf.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
  });
});

describe("names chain a certificate to its issuer (RFC 5280 §6.1.3 (a)(4))", () => {
  test("a sent CA whose key signed the leaf, but whose subject is not the leaf's issuer name, is not its issuer", async () => {
    const { root } = await testPki();
    const signer = await ca(root, "CN=Real Name CA, O=certkeeper tests", []);
    const domain = `misnamed-issuer.${TEST_DOMAIN}`;
    const misnamed = await leafNamingIssuer(signer, "CN=Some Other CA, O=certkeeper tests", [domain]);
    expect(await statusOf(domain, chainPem(misnamed, signer), misnamed.keyPem)).toEqual(["invalid", "untrusted_issuer"]);
    // The control: the same CA, named rightly, vouches for it.
    const domain2 = `rightly-named-issuer.${TEST_DOMAIN}`;
    const named = await leafNamingIssuer(signer, signer.cert.subject, [domain2]);
    expect(await statusOf(domain2, chainPem(named, signer), named.keyPem)).toEqual(["valid", null]);
  });
});
