/** Verifies a signature made with a certificate's key, as OCSP responses carry them. */
import { createPublicKey, verify } from "node:crypto";
import type { Certificate } from "../tls/x509.ts";

/** Signature algorithms by OID, as the hash node:crypto takes (null: the algorithm hashes itself). */
const HASHES: Record<string, string | null> = {
  "1.2.840.113549.1.1.5": "sha1",
  "1.2.840.113549.1.1.11": "sha256",
  "1.2.840.113549.1.1.12": "sha384",
  "1.2.840.113549.1.1.13": "sha512",
  "1.2.840.113549.1.1.14": "sha224",
  "1.2.840.10045.4.1": "sha1",
  "1.2.840.10045.4.3.1": "sha224",
  "1.2.840.10045.4.3.2": "sha256",
  "1.2.840.10045.4.3.3": "sha384",
  "1.2.840.10045.4.3.4": "sha512",
  "1.3.101.112": null,
  "1.3.101.113": null,
};

/** True when `signature` over `data` verifies with `signer`'s public key; false for anything unknown. */
export function signatureVerifies(data: ArrayBuffer, signature: ArrayBuffer, algorithmOid: string, signer: Certificate): boolean {
  if (!(algorithmOid in HASHES)) return false;
  try {
    const key = createPublicKey({ key: Buffer.from(signer.publicKey.rawData), format: "der", type: "spki" });
    return verify(HASHES[algorithmOid] ?? null, Buffer.from(data), key, Buffer.from(signature));
  } catch {
    return false; // a key or signature that cannot be read proves nothing
  }
}
