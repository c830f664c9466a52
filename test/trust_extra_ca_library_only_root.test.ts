/**
 * CERTKEEPER_EXTRA_CA_FILE's blocks are each read when the roots are loaded (a garbled one is
 * refused), by the platform's parser or, failing it, by @peculiar/x509, as the trust store keeps
 * anchors (trust_store.test.ts "a root the platform cannot read … is still an anchor"): a root only
 * the library reads (an internal CA named in UniversalString) is still trusted, never refused.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { X509Certificate as PlatformCertificate } from "node:crypto";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate, x509 } from "../core/tls/x509.ts";

const EC = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), "certkeeper-extra-ca-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function rootAndIntermediate(): Promise<{ root: Certificate; intermediate: Certificate }> {
  const rootKeys = (await crypto.subtle.generateKey(EC, true, ["sign", "verify"])) as CryptoKeyPair;
  const ownKeys = (await crypto.subtle.generateKey(EC, true, ["sign", "verify"])) as CryptoKeyPair;
  const validity = { notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 300 * DAY) };
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: new x509.Name([{ CN: [{ universalString: "Internal Root \u{1F600}" }] }]),
    ...validity,
    keys: rootKeys,
    signingAlgorithm: EC,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  const intermediate = await x509.X509CertificateGenerator.create({
    serialNumber: "02",
    subject: "CN=Internal Intermediate",
    issuer: new x509.Name([{ CN: [{ utf8String: "Internal Root \u{1F600}" }] }]),
    ...validity,
    publicKey: ownKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: EC,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  return { root: new Certificate(root.toString("pem")), intermediate: new Certificate(intermediate.toString("pem")) };
}

test("a root the platform's parser cannot read, in CERTKEEPER_EXTRA_CA_FILE, is still trusted (as TrustStore keeps such roots)", async () => {
  const { root, intermediate } = await rootAndIntermediate();
  // The precondition: node:crypto refuses it, @peculiar/x509 reads it.
  expect(() => new PlatformCertificate(new Uint8Array(root.rawData))).toThrow();
  const file = join(dir, "internal-root.pem");
  writeFileSync(file, root.toString("pem"));
  let store: TrustStore | undefined;
  let refused: string | null = null;
  try {
    store = TrustStore.system(file);
  } catch (error) {
    refused = (error as Error).message;
  }
  expect(refused).toBeNull();
  expect(await store!.isAnchor(root)).toBe(true);
  expect((await store!.anchorsFor(intermediate)).length).toBe(1);
});
