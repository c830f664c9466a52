/**
 * CRLs (RFC 5280 §5): verified as signed by the certificate's issuer, about that issuer, and current,
 * then searched for the certificate's serial. A verified CRL is kept in a small form (its revoked
 * serials) so the many certificates of one CA share one download per nextUpdate.
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { CertificateList, id_ce_cRLNumber, id_ce_authorityKeyIdentifier, id_ce_deltaCRLIndicator, id_ce_issuingDistributionPoint, IssuingDistributionPoint, type Extension } from "@peculiar/asn1-x509";
import { x509, type Certificate } from "../tls/x509.ts";
import { serialBytes, serialOf } from "./_issuer_id.ts";
import { signatureVerifies } from "./_signature.ts";
import { assertCurrent, reasonName, RevocationFailure, validUntil, type RevocationAnswer } from "./revocation_answer.ts";

/** A CRL verified against one issuer: what is needed to answer for any serial of that issuer. */
export interface VerifiedCrl {
  issuerName: string;
  thisUpdate: number;
  nextUpdate: number | undefined;
  /** Revoked serials (normalized hex) with when and why. */
  revoked: Map<string, { revokedAt: number; reason: string | null }>;
}

/** The CRL extensions read here; any other marked critical makes the CRL unusable (RFC 5280 §5.2). */
const KNOWN_CRL_EXTENSIONS = new Set([id_ce_cRLNumber, id_ce_authorityKeyIdentifier, id_ce_issuingDistributionPoint]);
/** reasonCode removeFromCRL (RFC 5280 §5.3.1): only a delta CRL carries it, and it does not mean revoked. */
const REMOVE_FROM_CRL = 8;

/**
 * Reads and verifies a DER CRL issued by `issuer` (whose key usage, when given, must allow cRLSign),
 * fetched from `url` (when given). Throws
 * {@link RevocationFailure} otherwise, and for a CRL that cannot say whether a leaf is revoked: a
 * delta CRL, one with a critical extension not read here, or one whose issuing distribution point
 * limits it to CA or attribute certificates, some reasons, another distribution point, or entries of
 * other issuers (RFC 5280 §5.2, §6.3.3).
 */
export function readCrl(der: Uint8Array, options: { issuer: Certificate; now: number; url?: string }): VerifiedCrl {
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
  const keyUsage = issuer.getExtension(x509.KeyUsagesExtension);
  if (keyUsage && (keyUsage.usages & x509.KeyUsageFlags.cRLSign) === 0) {
    throw new RevocationFailure("the CRL's issuer may not sign CRLs (its key usage leaves out cRLSign)");
  }
  if (!crl.tbsCertListRaw || !signatureVerifies(crl.tbsCertListRaw, crl.signature, crl.signatureAlgorithm.algorithm, issuer)) {
    throw new RevocationFailure("the CRL's signature does not verify with the issuer's key");
  }
  const thisUpdate = crl.tbsCertList.thisUpdate.getTime().getTime();
  const nextUpdate = crl.tbsCertList.nextUpdate?.getTime().getTime();
  assertCurrent("CRL", thisUpdate, nextUpdate, now);
  checkScope(crl.tbsCertList.crlExtensions ?? [], options.url);
  const revoked = new Map<string, { revokedAt: number; reason: string | null }>();
  for (const entry of crl.tbsCertList.revokedCertificates ?? []) {
    const unknown = (entry.crlEntryExtensions ?? []).find((extension) => extension.critical && extension.extnID !== REASON_CODE && extension.extnID !== INVALIDITY_DATE);
    if (unknown) throw new RevocationFailure(`the CRL has an entry with a critical extension certkeeper cannot read (${unknown.extnID})`);
    const parsed = new x509.X509CrlEntry(entry);
    if (parsed.reason === REMOVE_FROM_CRL) continue;
    revoked.set(serialBytes(entry.userCertificate), { revokedAt: parsed.revocationDate.getTime(), reason: reasonName(parsed.reason) });
  }
  return { issuerName, thisUpdate, nextUpdate, revoked };
}

const REASON_CODE = "2.5.29.21";
const INVALIDITY_DATE = "2.5.29.24";

function checkScope(extensions: Extension[], url: string | undefined): void {
  for (const extension of extensions) {
    if (extension.extnID === id_ce_deltaCRLIndicator) throw new RevocationFailure("the CRL is a delta CRL, which certkeeper does not combine with its base");
    if (extension.critical && !KNOWN_CRL_EXTENSIONS.has(extension.extnID)) {
      throw new RevocationFailure(`the CRL has a critical extension certkeeper cannot read (${extension.extnID})`);
    }
    if (extension.extnID !== id_ce_issuingDistributionPoint) continue;
    let point: IssuingDistributionPoint;
    try {
      point = AsnConvert.parse(extension.extnValue.buffer, IssuingDistributionPoint);
    } catch {
      throw new RevocationFailure("the CRL's issuing distribution point cannot be read");
    }
    if (point.onlyContainsCACerts) throw new RevocationFailure("the CRL lists CA certificates only");
    if (point.onlyContainsAttributeCerts) throw new RevocationFailure("the CRL lists attribute certificates only");
    if (point.onlySomeReasons) throw new RevocationFailure("the CRL covers only some revocation reasons");
    if (point.indirectCRL) throw new RevocationFailure("the CRL is an indirect CRL, which certkeeper does not read");
    const names = (point.distributionPoint?.fullName ?? []).map((name) => name.uniformResourceIdentifier).filter((uri): uri is string => uri !== undefined);
    if (url !== undefined && names.length > 0 && !names.includes(url)) {
      throw new RevocationFailure("the CRL is for another distribution point than the one it was fetched from");
    }
  }
}

/** What a verified CRL says about `leaf`, or throws when it is about another issuer or out of date. */
export function crlAnswer(crl: VerifiedCrl, options: { leaf: Certificate; now: number }): RevocationAnswer {
  const { leaf, now } = options;
  if (crl.issuerName !== leaf.issuer) throw new RevocationFailure("the CRL is about another issuer");
  assertCurrent("CRL", crl.thisUpdate, crl.nextUpdate, now);
  const base = { source: "crl" as const, checkedAt: now, validUntil: validUntil(now, crl.nextUpdate, crl.thisUpdate) };
  const entry = crl.revoked.get(serialOf(leaf));
  if (!entry) return { ...base, status: "good", revokedAt: null, reason: null };
  return { ...base, status: "revoked", revokedAt: entry.revokedAt, reason: entry.reason };
}

/** Reads and verifies a DER CRL and answers for `leaf`. Throws {@link RevocationFailure} otherwise. */
export function verifyCrl(der: Uint8Array, options: { leaf: Certificate; issuer: Certificate; now: number }): RevocationAnswer {
  return crlAnswer(readCrl(der, options), options);
}
