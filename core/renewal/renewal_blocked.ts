/** Where CONTRACT §22's CAA verdict lives on a stored certificate, for the rules that read it. */
import type { CertificateDetails, CertificateRecord } from "../base/records.ts";

/**
 * True when the last CAA judgement found that the CA of the served leaf may not issue its next
 * certificate (`warnings` shows `caa_forbids_issuer`). Under `alertPolicy: "renewal"`, a certificate
 * whose deadline passed while this holds has `statusReason: "renewal_blocked"` (CONTRACT §18, §22).
 */
export function caaBlocksRenewal(record: Pick<CertificateRecord, "dns">): boolean {
  return record.dns?.caa?.status === "forbidden";
}

/**
 * The names of a leaf's issuer that CAA identities (CERTKEEPER_CAA_IDENTITIES, the built-in pairs) are
 * compared with: its O (else CN) and its CN (else O).
 */
export function caaIssuerNames(details: Pick<CertificateDetails, "issuer" | "chain">): string[] {
  return [details.issuer, details.chain[0]?.issuer ?? details.issuer];
}
