/** CONTRACT §5's status and statusReason of a certificate, computed at the time of asking. */
import { daysUntil } from "../base/time.ts";
import type { CertificateRecord, CertificateStatus, StatusReason } from "../base/records.ts";
export { CERTIFICATE_STATUSES, type CertificateStatus, type StatusReason } from "../base/records.ts";


/** With no alert thresholds, a certificate counts as expiring within this many days. */
export const DEFAULT_EXPIRING_DAYS = 30;
export const DEFAULT_ALERT_THRESHOLDS = [30, 14, 7, 3, 1];

/** The days-until-expiry at or below which a certificate is `expiring`. */
export function expiringHorizon(alertThresholds: readonly number[]): number {
  return alertThresholds.length === 0 ? DEFAULT_EXPIRING_DAYS : Math.max(...alertThresholds);
}

export type StatusInput = Pick<CertificateRecord, "details" | "problem" | "failure" | "alertThresholds">;

/** The first status of CONTRACT §5's list that applies, and why. */
export function certificateStatus(
  record: StatusInput,
  now: number,
): { status: CertificateStatus; statusReason: StatusReason | null; daysUntilExpiry: number } {
  const { notBefore, notAfter } = record.details;
  const daysUntilExpiry = daysUntil(notAfter, now);
  const at = (status: CertificateStatus, statusReason: StatusReason | null) => ({ status, statusReason, daysUntilExpiry });
  if (now > notAfter) return at("expired", "expired");
  if (record.failure) return at("unreachable", record.failure);
  if (now < notBefore) return at("invalid", "not_yet_valid");
  if (record.problem) return at("invalid", record.problem);
  if (daysUntilExpiry <= expiringHorizon(record.alertThresholds)) return at("expiring", "expiring_soon");
  return at("valid", null);
}
