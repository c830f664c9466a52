/**
 * Time-based alerts, on the details held (the last retrieved ones when unreachable): expiry, the
 * thresholds, and the renewal alerts (CONTRACT §18, §19): a CA's request for early replacement and the
 * renewal deadline, for the certificate-level leaf and for the leaves other addresses serve.
 */
import type { CertificateDetails, CertificateRecord, Renewing } from "../base/records.ts";
import { daysUntil, iso } from "../base/time.ts";
import { renewalDeadline } from "../renewal/mod.ts";
import { leafKey, RENEWAL_MEMORY_SIZE, withoutCovered } from "./alert_memory.ts";
import { endpointNamed, presentWindow, requestShown } from "./check_events.ts";
import type { CheckState } from "./check_state.ts";
import { thresholdToAnnounce } from "./threshold_crossings.ts";

/** The certificate-level leaf's expiry, or (before it) its renewal request, deadline and thresholds. */
export function announceLeafAlerts(state: CheckState): void {
  const { next, drafts, now } = state;
  const { notAfter } = next.details;
  if (now > notAfter) {
    if (!next.expiryAlerted) {
      drafts.push({ type: "certificate.expired" });
      next.expiryAlerted = true;
      // Past expiry no threshold is worth announcing any more for this serial.
      next.alertedThreshold = Math.min(...next.alertThresholds, next.alertedThreshold ?? Infinity);
      if (next.alertedThreshold === Infinity) next.alertedThreshold = null;
    }
  } else {
    announceRequest(state);
    announceOverdueOrThreshold(state);
  }
}

/**
 * The CA asks for early replacement (CONTRACT §19), under both policies: once per serial and window
 * end, judged on a leaf just retrieved. A window that had already ended covers the overdue alert.
 */
function announceRequest(state: CheckState): void {
  const { next, drafts, outcome, now } = state;
  const { serialNumber } = next.details;
  const alertPolicy = next.alertPolicy ?? "days";
  const info = next.details.renewalInfo;
  if (outcome.ok && info && info.requestedEnd !== null) {
    const key = `${serialNumber}@${info.requestedEnd}`;
    if (!(next.alertMemory.requested ?? []).includes(key)) {
      drafts.push({ type: "certificate.renewal_requested", extra: requestShown(info) });
      next.alertMemory = { ...next.alertMemory, requested: [key, ...(next.alertMemory.requested ?? [])].slice(0, RENEWAL_MEMORY_SIZE) };
      if (info.requestedEnd <= now && alertPolicy === "renewal") coverOverdue(next, now);
    }
  }
}

/** Under the renewal policy, the deadline until it is announced; then (or under days) the thresholds. */
function announceOverdueOrThreshold(state: CheckState): void {
  const { next, drafts, outcome, now } = state;
  const { notAfter, serialNumber } = next.details;
  const alertPolicy = next.alertPolicy ?? "days";
  const renewal = renewalDeadline(next.details);
  const overdueAnnounced = (next.alertMemory.overdue ?? []).includes(serialNumber);
  if (alertPolicy === "renewal" && !overdueAnnounced) {
    // Before the deadline a leaf is news only if something else is wrong (CONTRACT §18). At the
    // deadline, judged on a leaf an endpoint serves now: one renewal_overdue, which covers every
    // threshold crossed so far.
    if (outcome.ok && now >= renewal.deadline) {
      drafts.push({
        type: "certificate.renewal_overdue",
        extra: {
          deadline: iso(renewal.deadline),
          source: renewal.source,
          window: presentWindow(renewal.window),
          daysUntilExpiry: daysUntil(notAfter, now),
        },
      });
      coverOverdue(next, now);
    }
  } else {
    // Switched to days: thresholds the overdue alert covered were never raised (CONTRACT §18: the
    // lowest crossed threshold not yet raised for the serial is raised now).
    const covered = next.alertMemory.covered;
    if (alertPolicy === "days" && covered) {
      if (covered.serial === serialNumber) next.alertedThreshold = covered.raised;
      next.alertMemory = withoutCovered(next.alertMemory);
    }
    const threshold = thresholdToAnnounce(next.alertThresholds, notAfter, next.alertedThreshold, now);
    if (threshold !== null) {
      drafts.push({ type: "certificate.expiring", extra: { threshold } });
      next.alertedThreshold = threshold;
      // A threshold raised: those above it stay unraised, never owed (only the lowest crossed is).
      if (next.alertMemory.covered) next.alertMemory = withoutCovered(next.alertMemory);
    }
  }
}

/**
 * The same request about a leaf another address serves (a rollout under way, the status judged
 * over every endpoint, CONTRACT §11): once per serial and window end, naming that address in
 * data.endpoint, as a revocation of such a leaf is; also while the certificate-level leaf has
 * expired (a forgotten node still serving it).
 */
export function announceOtherRequests(state: CheckState): void {
  const { next, drafts, outcome, now } = state;
  const { serialNumber } = next.details;
  const alertPolicy = next.alertPolicy ?? "days";
  if (outcome.ok) {
    for (const endpoint of next.endpoints ?? []) {
      const details = endpoint.details;
      const other = details?.renewalInfo;
      if (!details || details.serialNumber === serialNumber || now > details.notAfter || !other || other.requestedEnd === null) continue;
      const key = `${details.serialNumber}@${other.requestedEnd}`;
      if ((next.alertMemory.requested ?? []).includes(key)) continue;
      drafts.push({
        type: "certificate.renewal_requested",
        extra: { ...requestShown(other), endpoint: endpointNamed(endpoint.address, details) },
      });
      next.alertMemory = { ...next.alertMemory, requested: [key, ...(next.alertMemory.requested ?? [])].slice(0, RENEWAL_MEMORY_SIZE) };
      // A window that had already ended covers that leaf's overdue alert, as for the certificate-level leaf.
      if (other.requestedEnd <= now && alertPolicy === "renewal") coverOtherOverdue(next, details, now);
    }
  }
}

/**
 * The deadline of a leaf another address serves (a rollout stopped half way, a forgotten node) makes
 * the status expiring (renewal_overdue) as the certificate-level leaf's would: one renewal_overdue
 * for it too, once per serial, naming that address in data.endpoint (as a request for early
 * replacement of such a leaf is).
 */
export function announceOtherOverdue(state: CheckState): void {
  const { next, drafts, outcome, now } = state;
  const { serialNumber } = next.details;
  const alertPolicy = next.alertPolicy ?? "days";
  if (alertPolicy === "renewal" && outcome.ok) {
    for (const endpoint of next.endpoints ?? []) {
      const details = endpoint.details;
      if (!details || details.serialNumber === serialNumber || now > details.notAfter) continue;
      if ((next.alertMemory.overdue ?? []).includes(details.serialNumber)) continue;
      const other = renewalDeadline(details);
      if (now < other.deadline) continue;
      drafts.push({
        type: "certificate.renewal_overdue",
        extra: {
          deadline: iso(other.deadline),
          source: other.source,
          window: presentWindow(other.window),
          daysUntilExpiry: daysUntil(details.notAfter, now),
          endpoint: endpointNamed(endpoint.address, details),
        },
      });
      coverOtherOverdue(next, details, now);
      // An older leaf than the certificate-level one (a rollout to shorter-lived certificates stopped
      // half way, or under way when the certificate was added): its replacement by that leaf is owed
      // certificate.renewed, announced once no node serves it (CONTRACT §20), as for a rollout seen
      // from its start.
      if (!next.alertMemory.renewing && details.notBefore < next.details.notBefore) {
        const renewing: Renewing = {
          oldKey: leafKey(details),
          newKey: leafKey(next.details),
          previous: { serialNumber: details.serialNumber, expiresAt: iso(details.notAfter) },
          oldNotBefore: details.notBefore,
        };
        next.alertMemory = { ...next.alertMemory, renewing };
      }
    }
  }
}

/**
 * Records `certificate.renewal_overdue` as announced for the certificate-level serial (or covered by a
 * request), with every threshold crossed by `now`: later thresholds are raised as they are crossed.
 */
function coverOverdue(record: CertificateRecord, now: number): void {
  const { serialNumber, notAfter } = record.details;
  const already = (record.alertMemory.overdue ?? []).includes(serialNumber);
  const overdue = [serialNumber, ...(record.alertMemory.overdue ?? []).filter((serial) => serial !== serialNumber)];
  record.alertMemory = { ...record.alertMemory, overdue: overdue.slice(0, RENEWAL_MEMORY_SIZE) };
  // Past the overdue moment (announced, or covered by an earlier request), the thresholds crossed since
  // are owed as under days: a later request from the CA covers none of them.
  if (already) return;
  const crossed = thresholdToAnnounce(record.alertThresholds, notAfter, record.alertedThreshold, now);
  if (crossed === null) return;
  record.alertMemory = { ...record.alertMemory, covered: { serial: serialNumber, raised: record.alertedThreshold } };
  record.alertedThreshold = crossed;
}

/**
 * Records `certificate.renewal_overdue` as announced (or covered by a request) for `details`, a leaf
 * another node serves, with the thresholds crossed by `now`: restored if it becomes the
 * certificate-level leaf, when only later thresholds are raised.
 */
function coverOtherOverdue(record: CertificateRecord, details: CertificateDetails, now: number): void {
  const { serialNumber } = details;
  const memory = record.alertMemory;
  const already = (memory.overdue ?? []).includes(serialNumber);
  const overdue = [serialNumber, ...(memory.overdue ?? []).filter((serial) => serial !== serialNumber)].slice(0, RENEWAL_MEMORY_SIZE);
  record.alertMemory = { ...memory, overdue };
  if (already) return;
  const crossed = thresholdToAnnounce(record.alertThresholds, details.notAfter, null, now);
  if (crossed === null) return;
  const covered = [{ serial: serialNumber, threshold: crossed }, ...(memory.overdueThresholds ?? []).filter((e) => e.serial !== serialNumber)];
  record.alertMemory = { ...record.alertMemory, overdueThresholds: covered.slice(0, RENEWAL_MEMORY_SIZE) };
}
