/**
 * CONTRACT §13's weak keys and the keys a signature is checked under, at the edges the suite left
 * open (each test fails on a one-line change of core/tls/public_key.ts or name_match.ts no other test
 * caught): an EC key under 256 bits (P-224) is weak; an RSA key's size is counted in bits, so a
 * 2047-bit key is weak; an RSA-4096 CA's signatures are checked (real roots use such keys); issuer
 * names differing only in runs of spaces chain (RFC 4518 insignificant space).
 */
import { describe, expect, test } from "bun:test";
import "reflect-metadata";
import { spawnSync } from "node:child_process";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { isUsableSigningKey, isWeakKey, publicKeyInfo } from "../core/tls/public_key.ts";
import { sameName } from "../core/tls/mod.ts";
import { Certificate } from "../core/tls/x509.ts";
import { createRootCa } from "./support/pki.ts";

describe("weak keys (CONTRACT §13: RSA under 2048 bits, EC under 256)", () => {
  test("EC P-224 is weak; P-256 is not", () => {
    expect(isWeakKey({ algorithm: "EC", size: 224, curve: "P-224" })).toBe(true);
    expect(isWeakKey({ algorithm: "EC", size: 255, curve: null })).toBe(true);
    expect(isWeakKey({ algorithm: "EC", size: 256, curve: "P-256" })).toBe(false);
  });

  test("an RSA key of 2047 bits is read as 2047 bits, and is weak", async () => {
    // OpenSSL makes the odd-sized key (Bun's generateKeyPairSync rounds 2047 bits down to 1920).
    const pem = spawnSync("/usr/bin/openssl", ["genrsa", "2047"], { encoding: "utf8" }).stdout;
    const spki = createPublicKey(pem).export({ format: "der", type: "spki" });
    const subjectKey = await crypto.subtle.importKey("spki", spki, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["verify"]);
    const root = await createRootCa({ name: "CN=Test Key Root" });
    const generated = await x509.X509CertificateGenerator.create({
      serialNumber: "0102",
      subject: "CN=odd-size.example",
      issuer: root.cert.subject,
      notBefore: new Date(Date.now() - 86_400_000),
      notAfter: new Date(Date.now() + 86_400_000),
      publicKey: subjectKey,
      signingKey: root.keys.privateKey,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    });
    const info = publicKeyInfo(new Certificate(generated.rawData));
    expect(info).toEqual({ algorithm: "RSA", size: 2047, curve: null });
    expect(isWeakKey(info)).toBe(true);
  });
});

describe("keys a signature is checked under", () => {
  test("an RSA-4096 key (as many roots have) is checked; so is RSA-2048", () => {
    const { publicKey: big } = generateKeyPairSync("rsa", { modulusLength: 4096 });
    const { publicKey: usual } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    expect(isUsableSigningKey(createPublicKey(big.export({ format: "pem", type: "spki" })))).toBe(true);
    expect(isUsableSigningKey(usual)).toBe(true);
  });
});

describe("distinguished names for chaining", () => {
  test("names differing only in case and in runs of spaces are the same name; others are not", () => {
    expect(sameName("CN=Example  Issuing   CA, O=Example", "CN=example issuing ca, O=EXAMPLE")).toBe(true);
    expect(sameName("CN=Example Issuing CA, O=Example", "CN=Example Issuing CA 2, O=Example")).toBe(false);
  });
});
