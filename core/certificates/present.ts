/** The certificate as callers see it: SPEC.md 2.2's fields, in its order, as CONTRACT §5 formats them. */
import { iso } from "../base/time.ts";
import type { CertificateRecord, RevocationState } from "../base/records.ts";
import { certificateStatus } from "./status.ts";
import {
  CREATED_FIELDS,
  UNMONITORED_FIELDS,
  type CertificateView,
  type CheckedCertificateView,
  type CreatedCertificateView,
} from "../schemas/certificate.ts";

/** Every field of SPEC.md 2.2 plus statusReason: get, list, patch, check, and event payloads. */
export function presentCertificate(record: CertificateRecord, now: number): CertificateView {
  const { status, statusReason, daysUntilExpiry } = certificateStatus(record, now);
  const d = record.details;
  return {
    id: record.id,
    domain: record.domain,
    name: record.name,
    status,
    daysUntilExpiry,
    expiresAt: iso(d.notAfter),
    issuedAt: iso(d.notBefore),
    issuer: d.issuer,
    subject: d.subject,
    subjectAlternativeNames: d.subjectAlternativeNames,
    serialNumber: d.serialNumber,
    signatureAlgorithm: d.signatureAlgorithm,
    port: record.port,
    alertThresholds: record.alertThresholds,
    lastCheckedAt: iso(record.lastCheckedAt),
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    chain: d.chain,
    statusReason,
    revocation: presentRevocation(d.revocation),
    tags: record.tags,
    mutedUntil: record.mutedUntil === null ? null : iso(record.mutedUntil),
  };
}

/** CONTRACT §14's field; details stored before revocation checks existed read as not_checked. */
export function presentRevocation(state: RevocationState | undefined): CertificateView["revocation"] {
  if (!state) return { status: "not_checked", source: null, checkedAt: null, revokedAt: null, reason: null };
  const time = (ms: number | null) => (ms === null ? null : iso(ms));
  return { status: state.status, source: state.source, checkedAt: time(state.checkedAt), revokedAt: time(state.revokedAt), reason: state.reason };
}

/** The add operation's 13 fields. */
export function presentCreated(record: CertificateRecord, now: number): CreatedCertificateView {
  const full = presentCertificate(record, now);
  return Object.fromEntries(CREATED_FIELDS.map((field) => [field, full[field]])) as CreatedCertificateView;
}

/** The CLI's `check`: the get view of a certificate nobody monitors (no thresholds: expiring within 30 days). */
export function presentChecked(
  input: Pick<CertificateRecord, "domain" | "port" | "details" | "problem" | "failure" | "lastCheckedAt">,
  now: number,
): CheckedCertificateView {
  const unmonitored = { ...input, id: "", name: "", alertThresholds: [], tags: [], mutedUntil: null, createdAt: 0, updatedAt: 0 } as unknown as CertificateRecord;
  const full: Record<string, unknown> = { ...presentCertificate(unmonitored, now) };
  for (const field of UNMONITORED_FIELDS) delete full[field];
  return full as CheckedCertificateView;
}
