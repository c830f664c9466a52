/**
 * What one check means: the certificate's new state and the events it raises (CONTRACT §7). Pure:
 * the same previous state, outcome and time always give the same result, which is what lets a
 * writer that lost a race simply apply its outcome again to the fresher state.
 */
import type { CertificateDetails, ChainProblem, NetFailureReason } from "../base/records.ts";
import type { CertificateRecord, EventRecord, EventType, Health } from "../base/records.ts";
import { newId } from "../base/ids.ts";
import { iso } from "../base/time.ts";
import { certificateStatus } from "../certificates/status.ts";
import { presentCertificate } from "../certificates/present.ts";
import { nextAlertAt, thresholdToAnnounce } from "./threshold_crossings.ts";

/** What a retrieval found. */
export type CheckOutcome =
  | { ok: true; fingerprint: string; details: CertificateDetails; problem: ChainProblem | null }
  | { ok: false; reason: NetFailureReason; message: string };

export interface CheckPolicy {
  intervalMs: number;
  /** Consecutive failures before a certificate is declared unreachable (1: at once). */
  failuresBeforeUnreachable: number;
  /** Waits before re-trying after the 1st, 2nd, … failure that is not yet declared. */
  retryDelaysMs: number[];
}

export interface AppliedCheck {
  record: CertificateRecord;
  events: EventRecord[];
}

interface Draft {
  type: EventType;
  extra?: Record<string, unknown>;
}

/**
 * Applies `outcome` to `previous`. For a certificate being added, pass its initial record as
 * `previous` with `isNew`: no renewal is detected, and health starts as "ok", so a certificate added
 * invalid, expired or inside a threshold is announced like any other.
 */
export function applyCheck(
  previous: CertificateRecord,
  outcome: CheckOutcome,
  now: number,
  policy: CheckPolicy,
  options: { isNew?: boolean } = {},
): AppliedCheck {
  const drafts: Draft[] = [];
  const next: CertificateRecord = { ...previous, lastCheckedAt: now };

  if (!outcome.ok) {
    next.failureCount = previous.failureCount + 1;
    if (next.failureCount < policy.failuresBeforeUnreachable) {
      // Not declared yet: one lost packet raises no alert. Try again shortly; announce nothing.
      const delay = policy.retryDelaysMs[next.failureCount - 1] ?? policy.retryDelaysMs.at(-1) ?? policy.intervalMs;
      next.nextCheckAt = now + Math.min(delay, policy.intervalMs);
      return { record: next, events: [] };
    }
    next.failure = outcome.reason;
    next.health = "unreachable";
    if (previous.health !== "unreachable") drafts.push({ type: "certificate.unreachable", extra: { error: outcome.message } });
  } else {
    const renewed =
      !options.isNew &&
      (outcome.details.serialNumber !== previous.details.serialNumber ||
        outcome.details.notAfter > previous.details.notAfter);
    next.fingerprint = outcome.fingerprint;
    next.details = outcome.details;
    next.problem = outcome.problem;
    next.failure = null;
    next.failureCount = 0;
    if (renewed) {
      drafts.push({
        type: "certificate.renewed",
        extra: { previous: { serialNumber: previous.details.serialNumber, expiresAt: iso(previous.details.notAfter) } },
      });
      next.alertedThreshold = null;
      next.expiryAlerted = false;
    }
    // Revocation is final: each serial is announced once, when first seen revoked.
    const revoked = outcome.details.revocation?.status === "revoked";
    const knownRevoked =
      !options.isNew &&
      previous.details.revocation?.status === "revoked" &&
      previous.details.serialNumber === outcome.details.serialNumber;
    if (revoked && !knownRevoked) drafts.push({ type: "certificate.revoked" });
    const health: Health = outcome.problem || now < outcome.details.notBefore ? "invalid" : "ok";
    next.health = health;
    if (health === "invalid" && previous.health !== "invalid") drafts.push({ type: "certificate.invalid" });
    if (health === "ok" && previous.health !== "ok") {
      const { status } = certificateStatus(next, now);
      if (status === "valid" || status === "expiring") drafts.push({ type: "certificate.recovered" });
    }
  }

  // Time-based alerts, on the details we hold (the last retrieved ones when unreachable).
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
    const threshold = thresholdToAnnounce(next.alertThresholds, notAfter, next.alertedThreshold, now);
    if (threshold !== null) {
      drafts.push({ type: "certificate.expiring", extra: { threshold } });
      next.alertedThreshold = threshold;
    }
  }

  const due = nextAlertAt(next.alertThresholds, notAfter, next.alertedThreshold, next.expiryAlerted, now);
  next.nextCheckAt = Math.min(now + policy.intervalMs, due ?? Infinity);
  if (drafts.length > 0 || changed(previous, next)) next.updatedAt = now;
  return { record: next, events: drafts.map((draft) => toEvent(next, draft, now)) };
}

/** Whether a check changed anything a caller can see besides lastCheckedAt. */
function changed(a: CertificateRecord, b: CertificateRecord): boolean {
  return (
    a.fingerprint !== b.fingerprint ||
    a.problem !== b.problem ||
    a.failure !== b.failure ||
    a.details.revocation?.status !== b.details.revocation?.status
  );
}

function toEvent(record: CertificateRecord, draft: Draft, now: number): EventRecord {
  return certificateEvent(record, draft.type, now, draft.extra);
}

/**
 * An event about `record`: its data carries the certificate as GET shows it now, and `muted: true`
 * while the certificate is muted (CONTRACT §16; such an event is recorded and delivered nowhere).
 */
export function certificateEvent(record: CertificateRecord, type: EventType, now: number, extra?: Record<string, unknown>): EventRecord {
  const muted = record.mutedUntil !== null && record.mutedUntil > now;
  return {
    id: newId("evt"),
    organizationId: record.organizationId,
    mode: record.mode,
    type,
    certificateId: record.id,
    data: { certificate: presentCertificate(record, now), ...extra, ...(muted ? { muted: true } : {}) },
    createdAt: now,
  };
}
