/**
 * CRLs (RFC 5280 §5): verified as signed by the certificate's issuer, about that issuer, and current,
 * then searched for the certificate's serial.
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { CertificateList } from "@peculiar/asn1-x509";
import { x509, type Certificate } from "../tls/x509.ts";
import { serialBytes, serialOf } from "./_issuer_id.ts";
import { signatureVerifies } from "./_signature.ts";
import { CLOCK_SKEW_MS, reasonName, RevocationFailure, validUntil, type RevocationAnswer } from "./revocation_answer.ts";

/** Reads and verifies a DER CRL and answers for `leaf`. Throws {@link RevocationFailure} otherwise. */
export function verifyCrl(der: Uint8Array, options: { leaf: Certificate; issuer: Certificate; now: number }): RevocationAnswer {
  const { leaf, issuer, now } = options;
  let crl: CertificateList;
  let issuerName: string;
  try {
    crl = AsnConvert.parse(new Uint8Array(der), CertificateList);
    issuerName = new x509.Name(AsnConvert.serialize(crl.tbsCertList.issuer)).toString();
  } catch {
    throw new RevocationFailure("the CRL is not a DER certificate revocation list");
  }
  if (issuerName !== leaf.issuer) throw new RevocationFailure("the CRL is about another issuer");
  if (!crl.tbsCertListRaw || !signatureVerifies(crl.tbsCertListRaw, crl.signature, crl.signatureAlgorithm.algorithm, issuer)) {
    throw new RevocationFailure("the CRL's signature does not verify with the issuer's key");
  }
  const thisUpdate = crl.tbsCertList.thisUpdate.getTime().getTime();
  const nextUpdate = crl.tbsCertList.nextUpdate?.getTime().getTime();
  if (thisUpdate > now + CLOCK_SKEW_MS) throw new RevocationFailure("the CRL is dated in the future");
  if (nextUpdate !== undefined && nextUpdate < now) throw new RevocationFailure("the CRL is out of date (nextUpdate has passed)");

  const base = { source: "crl" as const, checkedAt: now, validUntil: validUntil(now, nextUpdate) };
  const serial = serialOf(leaf);
  const entry = (crl.tbsCertList.revokedCertificates ?? []).find((revoked) => serialBytes(revoked.userCertificate) === serial);
  if (!entry) return { ...base, status: "good", revokedAt: null, reason: null };
  const parsed = new x509.X509CrlEntry(entry);
  return { ...base, status: "revoked", revokedAt: parsed.revocationDate.getTime(), reason: reasonName(parsed.reason) };
}
