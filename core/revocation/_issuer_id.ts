/** What identifies a certificate to its issuer's OCSP responder: hashes of the issuer's name and key. */
import { createHash } from "node:crypto";
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate as AsnCertificate } from "@peculiar/asn1-x509";
import type { Certificate } from "../tls/x509.ts";

export const HASH_OIDS: Record<string, string> = {
  "1.3.14.3.2.26": "sha1",
  "2.16.840.1.101.3.4.2.1": "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
};

/** The issuer's subject DER and the bits of its public key (without tag, length and unused-bits byte). */
export interface IssuerIdentity {
  nameDer: Buffer;
  keyBits: Buffer;
}

/**
 * Read once per parsed certificate: an issuer (an intermediate of a chain many names share, a trusted
 * root) is asked about for every leaf it signed. The buffers are shared: read them, never change them.
 */
export function issuerIdentity(issuer: Certificate): IssuerIdentity {
  let identity = identities.get(issuer);
  if (!identity) {
    const asn = AsnConvert.parse(issuer.rawData, AsnCertificate);
    identity = {
      nameDer: Buffer.from(AsnConvert.serialize(asn.tbsCertificate.subject)),
      keyBits: Buffer.from(asn.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey),
    };
    identities.set(issuer, identity);
  }
  return identity;
}

const identities = new WeakMap<Certificate, IssuerIdentity>();

export function digest(hash: string, data: Uint8Array): Buffer {
  return createHash(hash).update(data).digest();
}

/**
 * A serial's INTEGER content bytes in their shortest two's-complement form (DER's own), as hex: serials
 * compared as the numbers they are, sign included. A positive serial whose first byte has its top bit
 * set keeps its leading 00 (`008f…`); without it, `8f…` is a negative number, another serial, and an
 * OCSP responder asked about it answers for that one (or `unknown`).
 */
export function serialBytes(serial: ArrayBuffer | Uint8Array): string {
  let bytes = Buffer.from(serial instanceof Uint8Array ? serial : new Uint8Array(serial));
  // Only redundant sign bytes go: 00 before a byte whose top bit is clear, FF before one whose top bit is set.
  while (bytes.length > 1 && ((bytes[0] === 0x00 && bytes[1]! < 0x80) || (bytes[0] === 0xff && bytes[1]! >= 0x80))) bytes = bytes.subarray(1);
  return bytes.toString("hex");
}

/**
 * A certificate's serial in the same form, from its INTEGER as encoded (x509's `serialNumber` is a
 * display form that drops the sign byte of `00 8f…`).
 */
export function serialOf(cert: Certificate): string {
  return serialBytes(cert.serialNumberOctets);
}
