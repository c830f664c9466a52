/** The leaf's public key as CONTRACT §13 shows it, and what counts as weak. */
import { createPublicKey, type KeyObject } from "node:crypto";
import { AsnConvert } from "@peculiar/asn1-schema";
import { RSAPublicKey } from "@peculiar/asn1-rsa";
import type { Certificate } from "./x509.ts";

import type { PublicKeyInfo } from "../base/records.ts";
import { oidText } from "../base/der.ts";

/** Named curves by OID, under the names operators know them by. */
const CURVES: Record<string, { name: string; size: number }> = {
  "1.2.840.10045.3.1.7": { name: "P-256", size: 256 },
  "1.3.132.0.34": { name: "P-384", size: 384 },
  "1.3.132.0.35": { name: "P-521", size: 521 },
  "1.3.132.0.10": { name: "secp256k1", size: 256 },
  "1.2.840.10045.3.1.1": { name: "P-192", size: 192 },
  "1.3.132.0.33": { name: "P-224", size: 224 },
  "1.3.36.3.3.2.8.1.1.7": { name: "brainpoolP256r1", size: 256 },
  "1.3.36.3.3.2.8.1.1.11": { name: "brainpoolP384r1", size: 384 },
  "1.3.36.3.3.2.8.1.1.13": { name: "brainpoolP512r1", size: 512 },
};

/** Read from the SubjectPublicKeyInfo's OIDs, so keys the runtime cannot use (Ed448) are still described. */
export function publicKeyInfo(cert: Certificate): PublicKeyInfo {
  const spki = cert.subjectPublicKeyInfo;
  const oid = spki.algorithm.algorithm;
  switch (oid) {
    case "1.2.840.113549.1.1.1": // rsaEncryption
    case "1.2.840.113549.1.1.10": // RSASSA-PSS keys
      return { algorithm: "RSA", size: rsaBits(new Uint8Array(spki.subjectPublicKey)), curve: null };
    case "1.2.840.10045.2.1": {
      // id-ecPublicKey; parameters: namedCurve OID (06 len …)
      const params = spki.algorithm.parameters ? new Uint8Array(spki.algorithm.parameters) : new Uint8Array();
      const curveOid = params[0] === 0x06 ? oidText(params.subarray(2, 2 + params[1]!)) : "";
      const curve = CURVES[curveOid];
      const pointBits = ((new Uint8Array(spki.subjectPublicKey).length - 1) / 2) * 8;
      return { algorithm: "EC", size: curve?.size ?? pointBits, curve: curve?.name ?? (curveOid || null) };
    }
    case "1.3.101.112":
      return { algorithm: "Ed25519", size: 256, curve: null };
    case "1.3.101.113":
      return { algorithm: "Ed448", size: 456, curve: null };
    default:
      return { algorithm: oid, size: new Uint8Array(spki.subjectPublicKey).length * 8, curve: null };
  }
}

/** RSA under 2048 bits, EC under 256. */
export function isWeakKey(key: PublicKeyInfo): boolean {
  return (key.algorithm === "RSA" && key.size < 2048) || (key.algorithm === "EC" && key.size < 256);
}

/**
 * RSA keys larger than any CA uses, or with a larger exponent: a signature under one verifies nothing.
 * The exponent's bound is BoringSSL's (33 bits), so a key it verifies under (2^32 + 1, say) is not refused.
 */
const MAX_RSA_BITS = 8192;
const MAX_RSA_EXPONENT = (1n << 33n) - 1n;

/**
 * Whether a signature is worth checking under `key`: not an RSA key over 8,192 bits or with an exponent
 * of more than 33 bits. A server (or its zone) can send such keys to make each check cost tens of milliseconds of
 * signature checks; nothing honest comes near either bound. Used by path building and by DANE.
 */
export function isUsableSigningKey(key: KeyObject): boolean {
  const details = key.asymmetricKeyDetails;
  return (details?.modulusLength ?? 0) <= MAX_RSA_BITS && (details?.publicExponent ?? 0n) <= MAX_RSA_EXPONENT;
}

function rsaBits(der: Uint8Array): number {
  try {
    const modulus = new Uint8Array(AsnConvert.parse(der, RSAPublicKey).modulus);
    let start = 0;
    while (start < modulus.length && modulus[start] === 0) start++;
    if (start === modulus.length) return 0;
    return (modulus.length - start - 1) * 8 + (32 - Math.clz32(modulus[start]!));
  } catch {
    // Fall back on the runtime's parser.
    const spki = createPublicKey({ key: Buffer.from(der), format: "der", type: "pkcs1" });
    return spki.asymmetricKeyDetails?.modulusLength ?? 0;
  }
}

