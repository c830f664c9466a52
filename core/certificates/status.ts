/**
 * CONTRACT §5's status and statusReason of a certificate: the rule, written once, in {@link rule}.
 *
 * The rule reads time only through `clock.atOrAfter(moment)`. Asked with a real time, it gives the
 * status now ({@link certificateStatus}). Asked by {@link statusTimeline}, which notes every moment the
 * rule compares with, it gives the whole timeline of what the last check found: the periods in which
 * the status stays the same. Stores keep that timeline, so a filter by status compares times and never
 * restates the rule. A new status (Part II's `revoked`, a `chain_expiring` reason) is a new line here.
 */
import { DAY, daysUntil } from "../base/time.ts";
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

/** How the rule asks about time (moments in ms since the epoch). */
interface RuleClock {
  /** Is it `moment` or later? */
  atOrAfter(moment: number): boolean;
  /** Is it later than `moment`? */
  after(moment: number): boolean;
}

/** The first status of CONTRACT §5's list that applies, and why. */
function rule(record: StatusInput, clock: RuleClock): { status: CertificateStatus; statusReason: StatusReason | null } {
  const { notBefore, notAfter } = record.details;
  // daysUntilExpiry = floor((notAfter − now) / day) ≤ horizon  ⇔  now > notAfter − (horizon + 1) days.
  const expiringAfter = notAfter - (expiringHorizon(record.alertThresholds) + 1) * DAY;
  if (clock.after(notAfter)) return { status: "expired", statusReason: "expired" };
  if (record.details.revocation?.status === "revoked") return { status: "revoked", statusReason: "revoked" };
  if (record.failure) return { status: "unreachable", statusReason: record.failure };
  if (!clock.atOrAfter(notBefore)) return { status: "invalid", statusReason: "not_yet_valid" };
  if (record.problem) return { status: "invalid", statusReason: record.problem };
  if (clock.after(expiringAfter)) return { status: "expiring", statusReason: "expiring_soon" };
  return { status: "valid", statusReason: null };
}

/** The status of `record` at `now`, why, and the whole days left. */
export function certificateStatus(
  record: StatusInput,
  now: number,
): { status: CertificateStatus; statusReason: StatusReason | null; daysUntilExpiry: number } {
  const clock = { atOrAfter: (moment: number) => now >= moment, after: (moment: number) => now > moment };
  return { ...rule(record, clock), daysUntilExpiry: daysUntil(record.details.notAfter, now) };
}

/** The bounds of all time in a timeline (safe integers, so SQL compares them exactly). */
export const TIMELINE_START = Number.MIN_SAFE_INTEGER;
export const TIMELINE_END = Number.MAX_SAFE_INTEGER;

/** A stretch of time, `from` (inclusive) to `until` (exclusive), during which the status stays `status`. */
export interface StatusPeriod {
  from: number;
  until: number;
  status: CertificateStatus;
  statusReason: StatusReason | null;
}

/**
 * The status of `record` over all time, as periods in order from {@link TIMELINE_START} to
 * {@link TIMELINE_END}, each status change a new period: what a store keeps to filter by status.
 * Valid until the record's details, problem, failure or thresholds change (a check or a patch).
 *
 * @example
 * statusTimeline(record).find((p) => p.from <= now && now < p.until)!.status === certificateStatus(record, now).status;
 */
export function statusTimeline(record: StatusInput): StatusPeriod[] {
  const periods: StatusPeriod[] = [];
  let from = TIMELINE_START;
  for (;;) {
    // The rule's answer at `from` holds until the first moment after `from` that it compared with:
    // until then every comparison it made comes out the same, so it takes the same path.
    let until = TIMELINE_END;
    const atOrAfter = (moment: number) => {
      if (moment > from && moment < until) until = moment;
      return from >= moment;
    };
    // Periods start at whole milliseconds, the clock's unit: later than `moment` is from the next one on.
    const { status, statusReason } = rule(record, { atOrAfter, after: (moment) => atOrAfter(Math.floor(moment) + 1) });
    const last = periods.at(-1);
    if (last && last.status === status && last.statusReason === statusReason) last.until = until;
    else periods.push({ from, until, status, statusReason });
    if (until === TIMELINE_END) return periods;
    from = until;
  }
}
