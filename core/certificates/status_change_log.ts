/**
 * The `info` line of a certificate's status change (CONTRACT §23: every status change, old and new
 * status and reason), written by whatever changed it: a check, or a patch of the settings the status
 * rule reads (the alert thresholds and policy).
 */
import type { Logger } from "../base/log.ts";
import type { CertificateRecord } from "../base/records.ts";
import { certificateStatus } from "./status.ts";

/**
 * One line when `after` has another status or reason than `before`, each judged at its own last check:
 * a change that time alone brought (a threshold crossed, an expiry) is told by the check made at that
 * moment, and a patch's line starts from the status the previous line ended on.
 */
export function logStatusChange(logger: Logger, before: CertificateRecord, after: CertificateRecord): void {
  if (!logger.enabled("info")) return;
  const was = certificateStatus(before, before.lastCheckedAt);
  const is = certificateStatus(after, after.lastCheckedAt);
  if (was.status === is.status && was.statusReason === is.statusReason) return;
  logger.info("certificate status changed", {
    certificateId: after.id,
    domain: after.domain,
    port: after.port,
    from: was.status,
    to: is.status,
    fromReason: was.statusReason,
    toReason: is.statusReason,
    organizationId: after.organizationId,
    mode: after.mode,
  });
}
