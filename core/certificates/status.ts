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
import type { AlertPolicy, CertificateDetails, CertificateRecord, CertificateStatus, ChainProblem, EndpointRecord, RenewalState, StatusReason } from "../base/records.ts";
import { caaBlocksRenewal, renewalDeadline, renewalRequested, renewalState } from "../renewal/mod.ts";
export { CERTIFICATE_STATUSES, type CertificateStatus, type StatusReason } from "../base/records.ts";

/** With no alert thresholds, a certificate counts as expiring within this many days. */
export const DEFAULT_EXPIRING_DAYS = 30;
export const DEFAULT_ALERT_THRESHOLDS = [30, 14, 7, 3, 1];

/** The days-until-expiry at or below which a certificate is `expiring`. */
export function expiringHorizon(alertThresholds: readonly number[]): number {
  if (alertThresholds.length === 0) return DEFAULT_EXPIRING_DAYS;
  let horizon = alertThresholds[0]!;
  for (const threshold of alertThresholds) if (threshold > horizon) horizon = threshold;
  return horizon;
}

export type StatusInput = Pick<CertificateRecord, "details" | "problem" | "failure" | "alertThresholds"> & {
  /** Every address at the last check (CONTRACT §11); absent or empty: the certificate-level fields only. */
  endpoints?: readonly EndpointRecord[];
  /** Absent: `days` (certificates stored before alert policies existed). */
  alertPolicy?: AlertPolicy;
  /** What DNS said at the last checks: a CAA set that forbids the issuer blocks the renewal (CONTRACT §22). */
  dns?: CertificateRecord["dns"];
};

/** How a leaf is judged: its thresholds, the alert policy (CONTRACT §18), and the certificate whose CAA verdict may block its renewal (§22). */
interface Judging {
  alertThresholds: readonly number[];
  alertPolicy: AlertPolicy;
  caa: Pick<StatusInput, "dns" | "details">;
}

type Judged = { status: CertificateStatus; statusReason: StatusReason | null };

/** Worst first, over the answering endpoints (CONTRACT §11). */
const RANK: Record<CertificateStatus, number> = { expired: 0, revoked: 1, unreachable: 2, invalid: 3, expiring: 4, valid: 5 };

/** How the rule asks about time (moments in ms since the epoch). */
interface RuleClock {
  /** Is it `moment` or later? */
  atOrAfter(moment: number): boolean;
  /** Is it later than `moment`? */
  after(moment: number): boolean;
}

/**
 * The first status of CONTRACT §5's list that applies, and why: over the certificate-level fields
 * (the earliest-expiring leaf) and every answering endpoint (CONTRACT §11), the worst first.
 */
function rule(record: StatusInput, clock: RuleClock): Judged {
  if (clock.after(record.details.notAfter)) return { status: "expired", statusReason: "expired" };
  if (record.details.revocation?.status === "revoked") return { status: "revoked", statusReason: "revoked" };
  if (record.failure) return { status: "unreachable", statusReason: record.failure };
  const judging: Judging = { alertThresholds: record.alertThresholds, alertPolicy: record.alertPolicy ?? "days", caa: record };
  let worst = leafRule(record.details, record.problem, judging, clock);
  for (const endpoint of record.endpoints ?? []) {
    // The endpoint the certificate-level fields describe (every endpoint, for one address) adds nothing.
    if (!endpoint.details || sameLeaf(endpoint.details, endpoint.problem, record.details, record.problem)) continue;
    const judged = leafRule(endpoint.details, endpoint.problem, judging, clock);
    if (RANK[judged.status] < RANK[worst.status]) worst = judged;
  }
  return worst;
}

/** The same leaf judged the same way: its status follows from the same fields. */
function sameLeaf(a: CertificateDetails, aProblem: ChainProblem | null, b: CertificateDetails, bProblem: ChainProblem | null): boolean {
  return (
    a === b ||
    (a.serialNumber === b.serialNumber &&
      a.notBefore === b.notBefore &&
      a.notAfter === b.notAfter &&
      aProblem === bProblem &&
      a.revocation?.status === b.revocation?.status &&
      (a.chainExpiry?.notAfter ?? null) === (b.chainExpiry?.notAfter ?? null) &&
      a.renewalInfo?.window?.end === b.renewalInfo?.window?.end &&
      a.renewalInfo?.requestedEnd === b.renewalInfo?.requestedEnd)
  );
}

/**
 * The status of one retrieved chain, as if it were the only one. Under the `renewal` policy a leaf is
 * not `expiring` for its days left, only once its renewal deadline has come (CONTRACT §18); under
 * both, a CA's request for early replacement makes it `expiring` (§19).
 */
function leafRule(details: CertificateDetails, problem: ChainProblem | null, judging: Judging, clock: RuleClock): Judged {
  const { notBefore, notAfter } = details;
  const horizon = expiringHorizon(judging.alertThresholds);
  // daysUntilExpiry = floor((notAfter − now) / day) ≤ horizon  ⇔  now > notAfter − (horizon + 1) days.
  const expiringAfter = notAfter - (horizon + 1) * DAY;
  if (clock.after(notAfter)) return { status: "expired", statusReason: "expired" };
  if (details.revocation?.status === "revoked") return { status: "revoked", statusReason: "revoked" };
  if (!clock.atOrAfter(notBefore)) return { status: "invalid", statusReason: "not_yet_valid" };
  if (problem) return { status: "invalid", statusReason: problem };
  if (renewalRequested(details)) return { status: "expiring", statusReason: "renewal_requested" };
  if (judging.alertPolicy === "renewal") {
    // Past the deadline, a renewal that CAA will refuse (from this leaf's CA) is named as such: it is why the leaf is still served.
    if (clock.atOrAfter(renewalDeadline(details).deadline)) return { status: "expiring", statusReason: caaBlocksRenewal(judging.caa, details) ? "renewal_blocked" : "renewal_overdue" };
  } else if (clock.after(expiringAfter)) {
    return { status: "expiring", statusReason: "expiring_soon" };
  }
  // A certificate above the leaf that expires before it, within the horizon (CONTRACT §13).
  const above = details.chainExpiry;
  if (above && above.notAfter < notAfter && clock.after(above.notAfter - (horizon + 1) * DAY)) {
    return { status: "expiring", statusReason: "chain_expiring" };
  }
  return { status: "valid", statusReason: null };
}

/** The status of one endpoint at `at` (a time, or a {@link ClockAt}): unreachable with its reason, or its chain's status. */
export function endpointStatus(
  endpoint: EndpointRecord,
  judging: Pick<StatusInput, "alertThresholds" | "alertPolicy" | "dns" | "details">,
  at: number | ClockAt,
): Judged {
  if (!endpoint.details) return { status: "unreachable", statusReason: endpoint.failure ?? "tls_error" };
  const rules: Judging = { alertThresholds: judging.alertThresholds, alertPolicy: judging.alertPolicy ?? "days", caa: judging };
  return leafRule(endpoint.details, endpoint.problem, rules, clockAt(at));
}

/**
 * `renewal.state` of the certificate-level leaf at `at`: the same under both alert policies. Overdue
 * needs an endpoint that answered the last check: an unreachable certificate is not known to serve it.
 */
export function certificateRenewalState(record: Pick<StatusInput, "details" | "failure">, at: number | ClockAt): RenewalState {
  return renewalState(record.details, record.failure === null || record.failure === undefined, clockAt(at));
}

/** Whether a trust, hostname or validity-start problem makes the certificate invalid now (expiry aside). */
export function isInvalid(record: StatusInput, now: number): boolean {
  const bad = (details: CertificateDetails, problem: ChainProblem | null) => problem !== null || now < details.notBefore;
  return bad(record.details, record.problem) || (record.endpoints ?? []).some((e) => e.details !== null && bad(e.details, e.problem));
}

const clockAt = (at: number | ClockAt): ClockAt => (typeof at === "number" ? new ClockAt(at) : at);

/**
 * The rule's clock at one moment (one small object, its methods on the prototype), which also notes
 * the first later moment at which any answer it gave would change: until then, whatever was judged
 * with it (statuses, whole days left) stays the same, so a rendering of it can be reused.
 */
export class ClockAt implements RuleClock {
  /** The first moment after `now` at which an answer given so far changes (whole milliseconds). */
  changesAt = TIMELINE_END;

  constructor(readonly now: number) {}

  atOrAfter(moment: number): boolean {
    if (moment > this.now && moment < this.changesAt) this.changesAt = moment;
    return this.now >= moment;
  }

  after(moment: number): boolean {
    // Later than `moment` is, in whole milliseconds, from the next one on.
    const next = Math.floor(moment) + 1;
    if (next > this.now && next < this.changesAt) this.changesAt = next;
    return this.now > moment;
  }

  /** {@link daysUntil}(until, now): it drops by one as soon as less than that many whole days are left. */
  daysUntil(until: number): number {
    const days = daysUntil(until, this.now);
    this.after(until - days * DAY);
    return days;
  }
}

/** The status of `record` at `at` (a time, or a {@link ClockAt}), why, and the whole days left. */
export function certificateStatus(
  record: StatusInput,
  at: number | ClockAt,
): { status: CertificateStatus; statusReason: StatusReason | null; daysUntilExpiry: number } {
  // Asked for every certificate of every read: no closures, no spread.
  const clock = clockAt(at);
  const { status, statusReason } = rule(record, clock);
  return { status, statusReason, daysUntilExpiry: clock.daysUntil(record.details.notAfter) };
}

/** The bounds of all time in a timeline (safe integers, so SQL compares them exactly). */
export const TIMELINE_START = Number.MIN_SAFE_INTEGER;
export const TIMELINE_END = Number.MAX_SAFE_INTEGER;

/**
 * A stretch of time, `from` (inclusive) to `until` (exclusive), during which the status stays `status`
 * and the renewal state `renewal`.
 */
export interface StatusPeriod {
  from: number;
  until: number;
  status: CertificateStatus;
  statusReason: StatusReason | null;
  renewal: RenewalState;
}

/**
 * The status of `record` over all time, as periods in order from {@link TIMELINE_START} to
 * {@link TIMELINE_END}, each change of status or renewal state a new period: what a store keeps to
 * filter by them. Valid until the record's details, problem, failure, thresholds or alert policy change
 * (a check or a patch).
 *
 * @example
 * statusTimeline(record).find((p) => p.from <= now && now < p.until)!.status === certificateStatus(record, now).status;
 */
export function statusTimeline(record: StatusInput): StatusPeriod[] {
  const periods: StatusPeriod[] = [];
  let from = TIMELINE_START;
  for (;;) {
    // The rule's answer at `from` holds until the first moment after `from` that it compared with
    // (the clock notes it): until then every comparison it made comes out the same, so it takes the
    // same path. Periods start at whole milliseconds, the clock's unit.
    const clock = new ClockAt(from);
    const { status, statusReason } = rule(record, clock);
    const renewal = certificateRenewalState(record, clock);
    const until = clock.changesAt;
    const last = periods.at(-1);
    if (last && last.status === status && last.statusReason === statusReason && last.renewal === renewal) last.until = until;
    else periods.push({ from, until, status, statusReason, renewal });
    if (until === TIMELINE_END) return periods;
    from = until;
  }
}
