/**
 * Certificates as a CA issues them through CT (RFC 6962 §3.1): a precertificate carrying the critical
 * poison extension, logged in one or more logs, each answering a Signed Certificate Timestamp; then
 * the final certificate, the same TBSCertificate with the SCT list extension in the poison's place.
 * Made by the test PKI; the TBSCertificate without the poison is computed with @peculiar/asn1-x509,
 * not with core's code.
 */
import "reflect-metadata";
import { createHash } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate, Extensions } from "@peculiar/asn1-x509";
import { DAY, generateKeys, type Issued } from "./pki.ts";
import { vector } from "./ct_log_tree.ts";

export const POISON_OID = "1.3.6.1.4.1.11129.2.4.3";
export const SCT_LIST_OID = "1.3.6.1.4.1.11129.2.4.2";

/** What a log needs to log a precertificate. */
export interface PrecertSubmission {
  /** The precertificate's DER, as submitted (it goes in extra_data and TileLeaf). */
  precertificate: Buffer;
  /** Its TBSCertificate without the poison: the PreCert's tbs_certificate. */
  tbs: Buffer;
  /** SHA-256 of the issuer's SubjectPublicKeyInfo. */
  issuerKeyHash: Buffer;
  /** The chain above it, DER, issuer first. */
  chain: Buffer[];
}

/** A log that can log a precertificate and answer its SCT. */
export interface SctSigner {
  logPrecertificate(submission: PrecertSubmission, options?: { timestamp?: number }): Buffer;
}

export interface CtIssued {
  precertificate: x509.X509Certificate;
  certificate: x509.X509Certificate;
  /** The final certificate with its key, as a TLS server would serve it. */
  leaf: Issued;
  submission: PrecertSubmission;
  /** The chain above both, DER, issuer first. */
  chain: Buffer[];
}

export interface CtIssueOptions {
  issuer: Issued;
  /** Further certificates of the chain above the issuer (the root), DER. */
  above?: Buffer[];
  dnsNames: string[];
  /** Default `CN=<first name>`. */
  subject?: string;
  keyType?: "ec" | "rsa";
  notBefore?: Date;
  daysLeft?: number;
  /** The logs the precertificate goes to; each SCT is embedded in the final certificate. */
  logs: SctSigner[];
  /** When the precertificate is logged (default now). */
  timestamp?: number;
}

const keys = new Map<string, Promise<CryptoKeyPair>>();

function signingAlgorithm(issuer: Issued) {
  const algorithm = issuer.keys.privateKey.algorithm as EcKeyAlgorithm;
  return algorithm.name === "ECDSA"
    ? { name: "ECDSA", namedCurve: algorithm.namedCurve, hash: "SHA-256" }
    : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
}

/** The DER TBSCertificate of `der` without the extension `oid`, re-encoded by @peculiar/asn1-x509. */
export function tbsWithout(der: ArrayBuffer | Uint8Array, oid: string): Buffer {
  const certificate = AsnConvert.parse(der, Certificate);
  const tbs = certificate.tbsCertificate;
  tbs.extensions = new Extensions((tbs.extensions ?? []).filter((extension) => extension.extnID !== oid));
  if (tbs.extensions.length === 0) tbs.extensions = undefined;
  return Buffer.from(AsnConvert.serialize(tbs));
}

/** RFC 6962 §3.3: the extension value, an OCTET STRING holding the TLS-encoded SignedCertificateTimestampList. */
function sctListExtension(scts: Buffer[]): x509.Extension {
  const list = vector(Buffer.concat(scts.map((sct) => vector(sct, 2))), 2);
  const octetString = Buffer.concat([Buffer.from([0x04]), derLength(list.length), list]);
  return new x509.Extension(SCT_LIST_OID, false, octetString);
}

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** Issues a precertificate, logs it in `options.logs`, and issues the final certificate with their SCTs. */
export async function issueThroughCt(options: CtIssueOptions): Promise<CtIssued> {
  const keyType = options.keyType ?? "ec";
  let pair = keys.get(keyType);
  if (!pair) keys.set(keyType, (pair = generateKeys(keyType)));
  const leafKeys = await pair;
  const serialBytes = crypto.getRandomValues(new Uint8Array(16));
  serialBytes[0]! &= 0x7f;
  const notBefore = options.notBefore ?? new Date(Date.now() - DAY);
  const notAfter = new Date(notBefore.getTime() + (options.daysLeft ?? 90) * DAY);
  const extensions = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey),
    new x509.SubjectAlternativeNameExtension(options.dnsNames.map((value) => ({ type: "dns" as const, value }))),
    await x509.AuthorityKeyIdentifierExtension.create(options.issuer.keys.publicKey),
  ];
  const make = (last: x509.Extension) =>
    x509.X509CertificateGenerator.create({
      serialNumber: Buffer.from(serialBytes).toString("hex"),
      subject: options.subject ?? `CN=${options.dnsNames[0]}`,
      issuer: options.issuer.cert.subject,
      notBefore,
      notAfter,
      publicKey: leafKeys.publicKey,
      signingKey: options.issuer.keys.privateKey,
      signingAlgorithm: signingAlgorithm(options.issuer),
      extensions: [...extensions, last],
    });
  const precertificate = await make(new x509.Extension(POISON_OID, true, Uint8Array.of(0x05, 0x00)));
  const chain = [Buffer.from(options.issuer.cert.rawData), ...(options.above ?? [])];
  const submission: PrecertSubmission = {
    precertificate: Buffer.from(precertificate.rawData),
    tbs: tbsWithout(precertificate.rawData, POISON_OID),
    issuerKeyHash: createHash("sha256").update(Buffer.from(options.issuer.cert.publicKey.rawData)).digest(),
    chain,
  };
  const scts = options.logs.map((log) => log.logPrecertificate(submission, { timestamp: options.timestamp }));
  const certificate = await make(sctListExtension(scts));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${Buffer.from(await crypto.subtle.exportKey("pkcs8", leafKeys.privateKey)).toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
  return {
    precertificate,
    certificate,
    leaf: { cert: certificate, keys: leafKeys, certPem: certificate.toString("pem") + "\n", keyPem },
    submission,
    chain,
  };
}
