/** Turns DER certificates into the fields of SPEC.md 2.2, formatted as CONTRACT §5 says. */
import { createHash } from "node:crypto";
import { AsnIpConverter, id_ce_subjectAltName } from "@peculiar/asn1-x509";
import { Certificate, x509 } from "./x509.ts";
import { DerError, readTlv } from "../base/der.ts";
import { nameShown } from "../base/log.ts";
import type { CertificateDetails, CertificateWarning, ChainCertificate } from "../base/records.ts";
import { isWeakKey, publicKeyInfo } from "./public_key.ts";
import { sameName } from "./name_match.ts";

/** OpenSSL's long names (LN_ in its obj_mac.h) of the signature algorithms certificates use. */
const SIGNATURE_NAMES: Record<string, string> = {
  "1.2.840.113549.1.1.2": "md2WithRSAEncryption",
  "1.2.840.113549.1.1.3": "md4WithRSAEncryption",
  "1.2.840.113549.1.1.4": "md5WithRSAEncryption",
  "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
  // OpenSSL's long name is rsassaPss; CONTRACT §5 names it RSASSA-PSS (OpenSSL's short name).
  "1.2.840.113549.1.1.10": "RSASSA-PSS",
  "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
  "1.2.840.113549.1.1.12": "sha384WithRSAEncryption",
  "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
  "1.2.840.113549.1.1.14": "sha224WithRSAEncryption",
  "1.2.840.113549.1.1.15": "sha512-224WithRSAEncryption",
  "1.2.840.113549.1.1.16": "sha512-256WithRSAEncryption",
  "1.2.840.10045.4.1": "ecdsa-with-SHA1",
  "1.2.840.10045.4.3.1": "ecdsa-with-SHA224",
  "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
  "1.2.840.10045.4.3.3": "ecdsa-with-SHA384",
  "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
  "1.3.101.112": "ED25519",
  "1.3.101.113": "ED448",
  "1.2.840.10040.4.3": "dsaWithSHA1",
  "2.16.840.1.101.3.4.3.1": "dsa_with_SHA224",
  "2.16.840.1.101.3.4.3.2": "dsa_with_SHA256",
  "2.16.840.1.101.3.4.3.3": "dsa_with_SHA384",
  "2.16.840.1.101.3.4.3.4": "dsa_with_SHA512",
  "2.16.840.1.101.3.4.3.9": "ecdsa_with_SHA3-224",
  "2.16.840.1.101.3.4.3.10": "ecdsa_with_SHA3-256",
  "2.16.840.1.101.3.4.3.11": "ecdsa_with_SHA3-384",
  "2.16.840.1.101.3.4.3.12": "ecdsa_with_SHA3-512",
  "2.16.840.1.101.3.4.3.13": "RSA-SHA3-224",
  "2.16.840.1.101.3.4.3.14": "RSA-SHA3-256",
  "2.16.840.1.101.3.4.3.15": "RSA-SHA3-384",
  "2.16.840.1.101.3.4.3.16": "RSA-SHA3-512",
  "1.2.156.10197.1.501": "SM2-with-SM3",
  // The OIW and TeleTrust forms, which some old CAs used.
  "1.3.14.3.2.3": "md5WithRSA",
  "1.3.14.3.2.13": "dsaWithSHA",
  "1.3.14.3.2.15": "shaWithRSAEncryption",
  "1.3.14.3.2.27": "dsaWithSHA1-old",
  "1.3.14.3.2.29": "sha1WithRSA",
  "1.3.36.3.3.1.2": "ripemd160WithRSA",
};

export function parseCertificates(ders: Uint8Array[]): Certificate[] {
  return ders.map((der) => new Certificate(new Uint8Array(der)));
}

/** Signature algorithms whose hash is broken (SHA-1, MD5, SHA-0 and older). */
const WEAK_SIGNATURES = new Set([
  "1.2.840.113549.1.1.2",
  "1.2.840.113549.1.1.3",
  "1.2.840.113549.1.1.4",
  "1.2.840.113549.1.1.5",
  "1.2.840.10045.4.1",
  "1.2.840.10040.4.3",
  "1.3.14.3.2.3",
  "1.3.14.3.2.13",
  "1.3.14.3.2.15",
  "1.3.14.3.2.27",
  "1.3.14.3.2.29",
]);

/** Every field of the leaf and the chain, from certificates parsed by {@link parseCertificates}. */
export function describeChain(certs: Certificate[]): CertificateDetails {
  const leaf = certs[0];
  if (!leaf) throw new Error("describeChain() needs at least one certificate");
  const publicKey = publicKeyInfo(leaf);
  const warnings: CertificateWarning[] = [];
  if (isWeakKey(publicKey)) warnings.push("weak_key");
  // A root's own signature is never checked by anyone; every other certificate's is.
  if (certs.some((cert) => !sameName(cert.issuer, cert.subject) && WEAK_SIGNATURES.has(cert.signatureOid))) warnings.push("weak_signature");
  return {
    serialNumber: formatSerial(leaf.serialNumber),
    notBefore: leaf.notBefore.getTime(),
    notAfter: leaf.notAfter.getTime(),
    issuer: nameShown(firstField(leaf.issuerName, ["O", "CN"]) ?? leaf.issuer),
    issuerNames: ["O", "CN"].flatMap((field) => leaf.issuerName.getField(field).slice(0, 1)),
    subject: nameShown(firstField(leaf.subjectName, ["CN"]) ?? dnsNames(leaf)[0] ?? leaf.subject),
    subjectAlternativeNames: alternativeNames(leaf),
    signatureAlgorithm: SIGNATURE_NAMES[leaf.signatureOid] ?? leaf.signatureOid,
    chain: certs.map((cert) => ({
      subject: nameShown(firstField(cert.subjectName, ["CN", "O"]) ?? cert.subject),
      issuer: nameShown(firstField(cert.issuerName, ["CN", "O"]) ?? cert.issuer),
      validFrom: cert.notBefore.toISOString(),
      validTo: cert.notAfter.toISOString(),
      serialNumber: formatSerial(cert.serialNumber),
      fingerprintSha256: fingerprintOf(cert),
    })),
    fingerprintSha256: fingerprintOf(leaf),
    publicKey,
    warnings,
  };
}

/** SHA-256 of a certificate's DER as upper-case hex pairs joined by `:` (CONTRACT §11). */
export function fingerprintOf(cert: Certificate): string {
  return createHash("sha256").update(new Uint8Array(cert.rawData)).digest("hex").toUpperCase().match(/../g)!.join(":");
}

/** A chain certificate as the `certificate.chain_expiring` event names it. */
export function chainCertificate(cert: Certificate): ChainCertificate {
  return {
    subject: nameShown(firstField(cert.subjectName, ["CN", "O"]) ?? cert.subject),
    issuer: nameShown(firstField(cert.issuerName, ["CN", "O"]) ?? cert.issuer),
    serialNumber: formatSerial(cert.serialNumber),
    notAfter: cert.notAfter.getTime(),
  };
}

/** Upper-case hex byte pairs joined by `:`, without the sign byte DER adds before a high bit. */
export function formatSerial(hex: string): string {
  let digits = hex.toUpperCase().replace(/[^0-9A-F]/g, "");
  if (digits.length % 2 === 1) digits = `0${digits}`;
  if (digits.length > 2 && digits.startsWith("00") && parseInt(digits[2]!, 16) >= 8) digits = digits.slice(2);
  return digits.match(/../g)!.join(":");
}

function firstField(name: x509.Name, fields: string[]): string | undefined {
  for (const field of fields) {
    const value = name.getField(field)[0];
    if (value) return value;
  }
  return undefined;
}

interface SanItem {
  type: "dns" | "ip";
  value: string;
}

/**
 * The DNS names and IP addresses of the SAN extension, read from its DER (the library's typed reading
 * costs about 20 µs a name); an extension this reader refuses is left to the library, which throws on
 * what it cannot read either. Kept per certificate: path building, matching and describing ask again.
 */
function sanItems(cert: Certificate): readonly SanItem[] {
  let items = sanCache.get(cert);
  if (!items) {
    const extension = cert.extensions.find((ext) => ext.type === id_ce_subjectAltName);
    items = extension ? readSan(new Uint8Array(extension.value), extension) : [];
    sanCache.set(cert, items);
  }
  return items;
}

const sanCache = new WeakMap<Certificate, readonly SanItem[]>();

function readSan(bytes: Uint8Array, extension: x509.Extension): SanItem[] {
  try {
    const names = readTlv(bytes, 0, bytes.length);
    if (names.tag !== 0x30 || names.end !== bytes.length) throw new DerError("not a sequence of names");
    const items: SanItem[] = [];
    for (let at = names.valueStart; at < names.end; ) {
      const name = readTlv(bytes, at, names.end);
      at = name.end;
      const value = bytes.subarray(name.valueStart, name.end);
      if (name.tag === 0x82) items.push({ type: "dns", value: charCodes(value) }); // dNSName, IA5String
      else if (name.tag === 0x87) items.push({ type: "ip", value: AsnIpConverter.fromASN({ valueBlock: { valueHexView: value } } as never) }); // iPAddress
    }
    return items;
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    const typed = new x509.SubjectAlternativeNameExtension(extension.rawData);
    return typed.names.items.flatMap((item) => (item.type === "dns" || item.type === "ip" ? [{ type: item.type, value: item.value }] : []));
  }
}

/** Each byte as the character of that code, as the ASN.1 library reads an IA5String. */
function charCodes(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 4096) text += String.fromCharCode(...bytes.subarray(i, i + 4096));
  return text;
}

/** DNS names and IP addresses of the SAN extension, in certificate order. */
export function alternativeNames(cert: Certificate): string[] {
  return sanItems(cert)
    .filter((item) => item.type === "dns" || item.type === "ip")
    .map((item) => item.value);
}

export function dnsNames(cert: Certificate): string[] {
  return sanItems(cert)
    .filter((item) => item.type === "dns")
    .map((item) => item.value);
}
