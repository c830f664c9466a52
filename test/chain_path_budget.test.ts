/**
 * Building a trusted path through what a server sends is bounded: a hostile server can send a mesh of
 * CA certificates that all bear one name and sign one another (nine keys, each certified by each of the
 * others: 72 certificates), under which every path is a valid chain of signatures that leads to no
 * trusted root. Tried path by path, that is millions of paths of up to eight steps, each a signature
 * check; the judgement gives up after a bounded number of candidates (at most 100 signature checks)
 * and calls the chain untrusted, while an honest chain through a cross-signed intermediate is still
 * trusted. Nor is a signature checked under a key no CA uses (RSA over 8,192 bits, or an exponent over
 * 2^32), each of which would cost tens of milliseconds to refuse. What is counted is the signature
 * checks asked of WebCrypto, not the time they take (which moves with the machine's load).
 */
import "reflect-metadata";
import { expect, test } from "bun:test";
import * as x509 from "@peculiar/x509";
import { generateKeyPairSync } from "node:crypto";
import { judgeChain, parseCertificates, TrustStore } from "../core/tls/mod.ts";
import { createIntermediateCa, createLeaf, createRootCa, generateKeys } from "./support/pki.ts";
import { costlyRsaSpki, hostileCertificate } from "./support/hostile_certs.ts";
import { signatureChecks } from "./support/signature_checks.ts";

const DAY = 86_400_000;
/** As a check parses what a server sent. */
const parse = (certs: x509.X509Certificate[]) => parseCertificates(certs.map((cert) => new Uint8Array(cert.rawData)));
const ALG = { name: "ECDSA", hash: "SHA-256" };

async function caCert(name: string, publicKey: CryptoKey, signingKey: CryptoKey, serial: number): Promise<x509.X509Certificate> {
  return x509.X509CertificateGenerator.create({
    serialNumber: serial.toString(16).padStart(4, "0"),
    subject: name,
    issuer: name,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 365 * DAY),
    publicKey,
    signingKey,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
}

test("a mesh of same-named CAs that sign one another is judged untrusted at once, not path by path", async () => {
  const name = "CN=Mesh CA";
  const keys = await Promise.all(Array.from({ length: 9 }, () => generateKeys("ec")));
  const mesh: x509.X509Certificate[] = [];
  let serial = 1;
  for (const subject of keys) for (const signer of keys) if (signer !== subject) mesh.push(await caCert(name, subject.publicKey, signer.privateKey, serial++));
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: "ffff",
    subject: "CN=mesh.example",
    issuer: name,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 30 * DAY),
    publicKey: (await generateKeys("ec")).publicKey,
    signingKey: keys[0]!.privateKey,
    signingAlgorithm: ALG,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: "dns", value: "mesh.example" }])],
  });
  const unrelated = await createRootCa({ name: "CN=Unrelated Root" });
  const { result: judged, checks } = await signatureChecks(() => judgeChain(parse([leaf, ...mesh]), "mesh.example", new TrustStore([unrelated.certPem]), Date.now()));
  expect(judged.problem).toBe("untrusted_issuer");
  // The bound, not the mesh's millions of paths.
  expect(checks).toBeGreaterThan(0);
  expect(checks).toBeLessThanOrEqual(100);
}, 60_000);

test("an honest chain whose intermediate is also sent cross-signed, with a decoy, is still trusted", async () => {
  const root = await createRootCa({ name: "CN=Budget Root" });
  const other = await createRootCa({ name: "CN=Budget Other Root" });
  const intermediate = await createIntermediateCa(root, { name: "CN=Budget Intermediate" });
  const crossSigned = await createIntermediateCa(other, { name: "CN=Budget Intermediate" });
  const leaf = await createLeaf({ issuer: intermediate, dnsNames: ["budget.example"] });
  const judged = await judgeChain(parse([leaf.cert, crossSigned.cert, intermediate.cert]), "budget.example", new TrustStore([root.certPem]), Date.now());
  expect(judged.problem).toBeNull();
});

test("look-alike CAs with keys no CA uses (16384-bit RSA, exponent 2^33-1) cost no signature check", async () => {
  const leafKeys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const leafSpki = leafKeys.publicKey.export({ type: "spki", format: "der" }) as Buffer;
  const ders = [hostileCertificate(1, "Look-alike CA", "huge.example", leafSpki, ["huge.example"])];
  for (let i = 0; i < 40; i++) ders.push(hostileCertificate(2 + i, "Look-alike CA", "Look-alike CA", costlyRsaSpki(), undefined, true));
  const unrelated = await createRootCa({ name: "CN=Unrelated Root" });
  const { result: judged, checks } = await signatureChecks(() =>
    judgeChain(parseCertificates(ders.map((der) => new Uint8Array(der))), "huge.example", new TrustStore([unrelated.certPem]), Date.now()),
  );
  expect(judged.problem).toBe("untrusted_issuer");
  // Each such signature costs tens of ms to refuse; none is checked.
  expect(checks).toBe(0);
});
