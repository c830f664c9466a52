/**
 * The leaf's public key as CONTRACT §13 shows it, and the refusals of the private-address rule, at
 * edges no other test held: an RSASSA-PSS key is an RSA key of its modulus size; a key on a named curve
 * outside the usual list is shown by its curve OID and its point's size (and is weak under 256 bits);
 * a P-192 key is shown as P-192; a CA's RSA key of exactly 8,192 bits, or with the exponent 2^33 - 1,
 * is still one a signature is checked under; an IPv6 unique local address is refused as a private
 * address, a link-local one as link-local, text that is no address is refused; an address already in
 * brackets is not bracketed twice.
 */
import { describe, expect, test } from "bun:test";
import "reflect-metadata";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { isUsableSigningKey, isWeakKey, publicKeyInfo } from "../core/tls/public_key.ts";
import { Certificate } from "../core/tls/x509.ts";
import { hostPort, refusedAddressReason } from "../core/net/address_policy.ts";
import { CN, dn, intRaw, oid, seq, SHA256_RSA, tlv, utcTime } from "./support/forged_certs.ts";

/** A certificate carrying `spki` (DER SubjectPublicKeyInfo); its signature is never checked here. */
function withKey(spki: Buffer): Certificate {
  const name = dn([CN, "key.example"]);
  const tbs = seq(tlv(0xa0, intRaw(Buffer.from([2]))), intRaw(Buffer.from([0x01, 0x02])), SHA256_RSA, name, seq(utcTime("250101000000Z"), utcTime("350101000000Z")), name, spki);
  const der = seq(tbs, SHA256_RSA, tlv(0x03, Buffer.from([0]), Buffer.alloc(256, 0x5a)));
  return new Certificate(der);
}

/** An EC SubjectPublicKeyInfo on the curve `curveOidHex`, with an uncompressed point of `coordinateBytes` per coordinate. */
function ecSpki(curveOidHex: string, coordinateBytes: number): Buffer {
  const point = Buffer.concat([Buffer.from([0x04]), Buffer.alloc(coordinateBytes * 2, 0x11)]);
  return seq(seq(oid("2a8648ce3d0201"), oid(curveOidHex)), tlv(0x03, Buffer.from([0]), point));
}

describe("the key shown (CONTRACT §13)", () => {
  test("an RSASSA-PSS key (OID 1.2.840.113549.1.1.10) is an RSA key of its modulus size", () => {
    // The runtime makes no RSASSA-PSS keys: an RSA key's RSAPublicKey under the id-RSASSA-PSS algorithm.
    const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const spki = seq(seq(oid("2a864886f70d01010a")), tlv(0x03, Buffer.from([0]), publicKey.export({ format: "der", type: "pkcs1" })));
    const info = publicKeyInfo(withKey(spki));
    expect(info).toEqual({ algorithm: "RSA", size: 2048, curve: null });
    expect(isWeakKey(info)).toBe(false);
  });

  test("a key on a curve outside the usual list is shown by its OID and its point's size, and is weak under 256 bits", () => {
    // secp224k1 (1.3.132.0.32): 28-byte coordinates.
    const info = publicKeyInfo(withKey(ecSpki("2b81040020", 28)));
    expect(info).toEqual({ algorithm: "EC", size: 224, curve: "1.3.132.0.32" });
    expect(isWeakKey(info)).toBe(true);
  });

  test("a P-192 key is shown as P-192, 192 bits, weak", () => {
    const info = publicKeyInfo(withKey(ecSpki("2a8648ce3d030101", 24)));
    expect(info).toEqual({ algorithm: "EC", size: 192, curve: "P-192" });
    expect(isWeakKey(info)).toBe(true);
  });
});

describe("keys a signature is checked under: the bounds themselves are allowed", () => {
  const rsa = (modulusBytes: number, exponent: bigint) => {
    const n = Buffer.alloc(modulusBytes, 0xab);
    n[0] = 0xc1;
    const eHex = exponent.toString(16);
    const e = Buffer.from(eHex.length % 2 ? `0${eHex}` : eHex, "hex");
    return createPublicKey({ key: { kty: "RSA", n: n.toString("base64url"), e: e.toString("base64url") }, format: "jwk" });
  };

  test("an RSA key of exactly 8,192 bits is checked; one of 8,200 is not", () => {
    expect(rsa(1024, 65537n).asymmetricKeyDetails?.modulusLength).toBe(8192);
    expect(isUsableSigningKey(rsa(1024, 65537n))).toBe(true);
    expect(isUsableSigningKey(rsa(1025, 65537n))).toBe(false);
  });

  test("an RSA key of 6,144 bits (above 4,096, as some roots have) is checked", () => {
    expect(isUsableSigningKey(rsa(768, 65537n))).toBe(true);
  });

  test("the exponent 2^33 - 1 is allowed; 2^33 + 1 is not", () => {
    expect(isUsableSigningKey(rsa(256, (1n << 33n) - 1n))).toBe(true);
    expect(isUsableSigningKey(rsa(256, (1n << 33n) + 1n))).toBe(false);
  });
});

describe("the private-address rule's wording and address forms", () => {
  test("an IPv6 unique local address (fc00::/7) is refused as a private address", () => {
    expect(refusedAddressReason("fd12:3456::1")).toBe("a private address");
    expect(refusedAddressReason("fc00::1")).toBe("a private address");
  });

  test("link-local addresses are named so; text that is no IP address is refused, never let through", () => {
    expect(refusedAddressReason("fe80::1")).toBe("a link-local address");
    expect(refusedAddressReason("169.254.169.254")).toBe("a link-local address");
    expect(refusedAddressReason("example.com")).toBe("not an IP address");
    expect(refusedAddressReason("10.0.0.1.example")).toBe("not an IP address");
  });

  test("an IPv6 address is bracketed once: [::1]:443 whether or not it came in brackets", () => {
    expect(hostPort("::1", 443)).toBe("[::1]:443");
    expect(hostPort("[::1]", 443)).toBe("[::1]:443");
    expect(hostPort("example.com", "8443")).toBe("example.com:8443");
  });
});
