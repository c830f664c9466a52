/** Where CONTRACT §22's CAA verdict lives on a stored certificate, for the rules that read it. */
import type { CertificateDetails, CertificateRecord } from "../base/records.ts";

/**
 * True when the last CAA judgement found that the CA of the served leaf may not issue its next
 * certificate (`warnings` shows `caa_forbids_issuer`). Under `alertPolicy: "renewal"`, a certificate
 * whose deadline passed while this holds has `statusReason: "renewal_blocked"` (CONTRACT §18, §22).
 * `leaf`: another address's leaf (CONTRACT §11), blocked only when its issuer maps to the same CA domain.
 */
export function caaBlocksRenewal(record: Pick<CertificateRecord, "dns" | "details">, leaf: Pick<CertificateDetails, "issuer" | "chain"> = record.details): boolean {
  const caa = record.dns?.caa;
  if (caa?.status !== "forbidden") return false;
  if (leaf === record.details) return true;
  const issuers = caa.blocking?.issuers ?? caaIssuerNames(record.details).map((name) => name.toLowerCase());
  return caaIssuerNames(leaf).some((name) => issuers.includes(name.toLowerCase()));
}

/**
 * The names of a leaf's issuer that CAA identities (CERTKEEPER_CAA_IDENTITIES, the built-in pairs) are
 * compared with: its O (else CN) and its CN (else O).
 */
export function caaIssuerNames(details: Pick<CertificateDetails, "issuer" | "chain">): string[] {
  return [details.issuer, details.chain?.[0]?.issuer ?? details.issuer];
}
