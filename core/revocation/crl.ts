/**
 * CRLs (RFC 5280 §5): verified as signed by the certificate's issuer, about that issuer, and current,
 * then searched for the certificate's serial. A verified CRL is kept in a small form (its revoked
 * serials) so the many certificates of one CA share one download per nextUpdate.
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { CertificateList } from "@peculiar/asn1-x509";
import { x509, type Certificate } from "../tls/x509.ts";
import { serialBytes, serialOf } from "./_issuer_id.ts";
import { signatureVerifies } from "./_signature.ts";
import { CLOCK_SKEW_MS, reasonName, RevocationFailure, validUntil, type RevocationAnswer } from "./revocation_answer.ts";

/** A CRL verified against one issuer: what is needed to answer for any serial of that issuer. */
export interface VerifiedCrl {
  issuerName: string;
  thisUpdate: number;
  nextUpdate: number | undefined;
  /** Revoked serials (normalized hex) with when and why. */
  revoked: Map<string, { revokedAt: number; reason: string | null }>;
}

/** Reads and verifies a DER CRL issued by `issuer`. Throws {@link RevocationFailure} otherwise. */
export function readCrl(der: Uint8Array, options: { issuer: Certificate; now: number }): VerifiedCrl {
  const { issuer, now } = options;
  let crl: CertificateList;
  let issuerName: string;
  try {
    crl = AsnConvert.parse(new Uint8Array(der), CertificateList);
    issuerName = new x509.Name(AsnConvert.serialize(crl.tbsCertList.issuer)).toString();
  } catch {
    throw new RevocationFailure("the CRL is not a DER certificate revocation list");
  }
  if (issuerName !== issuer.subject) throw new RevocationFailure("the CRL is about another issuer");
  if (!crl.tbsCertListRaw || !signatureVerifies(crl.tbsCertListRaw, crl.signature, crl.signatureAlgorithm.algorithm, issuer)) {
    throw new RevocationFailure("the CRL's signature does not verify with the issuer's key");
  }
  const thisUpdate = crl.tbsCertList.thisUpdate.getTime().getTime();
  const nextUpdate = crl.tbsCertList.nextUpdate?.getTime().getTime();
  if (thisUpdate > now + CLOCK_SKEW_MS) throw new RevocationFailure("the CRL is dated in the future");
  if (nextUpdate !== undefined && nextUpdate < now) throw new RevocationFailure("the CRL is out of date (nextUpdate has passed)");
  const revoked = new Map<string, { revokedAt: number; reason: string | null }>();
  for (const entry of crl.tbsCertList.revokedCertificates ?? []) {
    const parsed = new x509.X509CrlEntry(entry);
    revoked.set(serialBytes(entry.userCertificate), { revokedAt: parsed.revocationDate.getTime(), reason: reasonName(parsed.reason) });
  }
  return { issuerName, thisUpdate, nextUpdate, revoked };
}

/** What a verified CRL says about `leaf`, or throws when it is about another issuer or out of date. */
export function crlAnswer(crl: VerifiedCrl, options: { leaf: Certificate; now: number }): RevocationAnswer {
  const { leaf, now } = options;
  if (crl.issuerName !== leaf.issuer) throw new RevocationFailure("the CRL is about another issuer");
  if (crl.nextUpdate !== undefined && crl.nextUpdate < now) throw new RevocationFailure("the CRL is out of date (nextUpdate has passed)");
  const base = { source: "crl" as const, checkedAt: now, validUntil: validUntil(now, crl.nextUpdate) };
  const entry = crl.revoked.get(serialOf(leaf));
  if (!entry) return { ...base, status: "good", revokedAt: null, reason: null };
  return { ...base, status: "revoked", revokedAt: entry.revokedAt, reason: entry.reason };
}

/** Reads and verifies a DER CRL and answers for `leaf`. Throws {@link RevocationFailure} otherwise. */
export function verifyCrl(der: Uint8Array, options: { leaf: Certificate; issuer: Certificate; now: number }): RevocationAnswer {
  return crlAnswer(readCrl(der, options), options);
}
