/**
 * CRLs (RFC 5280 §5): verified as signed by the certificate's issuer, about that issuer, and current,
 * then searched for the certificate's serial.
 */
import { x509, type Certificate } from "../tls/x509.ts";
import { serialBytes, serialOf } from "./_issuer_id.ts";
import { signatureVerifies } from "./_signature.ts";
import { CLOCK_SKEW_MS, reasonName, RevocationFailure, validUntil, type RevocationAnswer } from "./revocation_answer.ts";

/** Reads and verifies a DER CRL and answers for `leaf`. Throws {@link RevocationFailure} otherwise. */
export function verifyCrl(der: Uint8Array, options: { leaf: Certificate; issuer: Certificate; now: number }): RevocationAnswer {
  const { leaf, issuer, now } = options;
  let crl: x509.X509Crl;
  try {
    crl = new x509.X509Crl(der);
  } catch {
    throw new RevocationFailure("the CRL is not a DER certificate revocation list");
  }
  if (crl.issuer !== leaf.issuer) throw new RevocationFailure("the CRL is about another issuer");
  const asn = crl.asn;
  const tbsRaw = asn.tbsCertListRaw;
  if (!tbsRaw || !signatureVerifies(tbsRaw, asn.signature, asn.signatureAlgorithm.algorithm, issuer)) {
    throw new RevocationFailure("the CRL's signature does not verify with the issuer's key");
  }
  const thisUpdate = crl.thisUpdate.getTime();
  const nextUpdate = crl.nextUpdate?.getTime();
  if (thisUpdate > now + CLOCK_SKEW_MS) throw new RevocationFailure("the CRL is dated in the future");
  if (nextUpdate !== undefined && nextUpdate < now) throw new RevocationFailure("the CRL is out of date (nextUpdate has passed)");

  const base = { source: "crl" as const, checkedAt: now, validUntil: validUntil(now, nextUpdate) };
  const serial = serialOf(leaf);
  const entry = (asn.tbsCertList.revokedCertificates ?? []).find((revoked) => serialBytes(revoked.userCertificate) === serial);
  if (!entry) return { ...base, status: "good", revokedAt: null, reason: null };
  const parsed = new x509.X509CrlEntry(entry);
  return { ...base, status: "revoked", revokedAt: parsed.revocationDate.getTime(), reason: reasonName(parsed.reason) };
}
