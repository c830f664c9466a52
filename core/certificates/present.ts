/** The certificate as callers see it: SPEC.md 2.2's fields, in its order, as CONTRACT §5 formats them. */
import { iso } from "../time.ts";
import type { CertificateRecord } from "../model.ts";
import { certificateStatus, type StatusInput } from "./status.ts";
import type { CertificateView, CreatedCertificateView, CheckedCertificateView } from "../schemas/certificate.ts";

/** The add operation's 13 fields. */
export function presentCreated(record: CertificateRecord, now: number): CreatedCertificateView {
  const { status, daysUntilExpiry } = certificateStatus(record, now);
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
    port: record.port,
    alertThresholds: record.alertThresholds,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
  };
}

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
  };
}

/** The CLI's `check`: the get view without id, createdAt, updatedAt, alertThresholds and name. */
export function presentChecked(
  input: Pick<CertificateRecord, "domain" | "port" | "details" | "problem" | "failure" | "lastCheckedAt">,
  now: number,
): CheckedCertificateView {
  const record: StatusInput = { ...input, alertThresholds: [] };
  const { status, statusReason, daysUntilExpiry } = certificateStatus(record, now);
  const d = input.details;
  return {
    domain: input.domain,
    status,
    daysUntilExpiry,
    expiresAt: iso(d.notAfter),
    issuedAt: iso(d.notBefore),
    issuer: d.issuer,
    subject: d.subject,
    subjectAlternativeNames: d.subjectAlternativeNames,
    serialNumber: d.serialNumber,
    signatureAlgorithm: d.signatureAlgorithm,
    port: input.port,
    lastCheckedAt: iso(input.lastCheckedAt),
    chain: d.chain,
    statusReason,
  };
}
