/**
 * The renewal deadline of a served leaf and its renewal state (CONTRACT §18): the end of the CA's
 * suggested renewal window when ARI gave one, otherwise the moment three quarters of the lifetime
 * have passed (two thirds under 10 days). A healthy ACME client renews at two thirds of the lifetime,
 * at half for the shortest; the deadline leaves it the rest of that margin.
 */
import { DAY } from "../base/time.ts";
import type { CertificateDetails, RenewalState } from "../base/records.ts";

/** Lifetimes under this use the two-thirds rule. */
export const SHORT_LIFETIME = 10 * DAY;

export interface RenewalDeadline {
  /** When the leaf should have been replaced (ms). */
  deadline: number;
  source: "ari" | "lifetime";
  window: { start: number; end: number } | null;
}

type Leaf = Pick<CertificateDetails, "notBefore" | "notAfter" | "renewalInfo">;

/**
 * @example
 * renewalDeadline({ notBefore: 0, notAfter: 90 * DAY }).deadline === 67.5 * DAY;
 */
export function renewalDeadline(leaf: Leaf): RenewalDeadline {
  const window = leaf.renewalInfo?.window ?? null;
  // core/ari refuses a window that ends at or after the expiry; one kept from before still ends at the expiry.
  if (window) return { deadline: Math.min(window.end, leaf.notAfter), source: "ari", window };
  const lifetime = leaf.notAfter - leaf.notBefore;
  const share = lifetime < SHORT_LIFETIME ? 2 / 3 : 3 / 4;
  return { deadline: leaf.notBefore + Math.ceil(lifetime * share), source: "lifetime", window: null };
}

/** Whether the CA asked for this leaf to be replaced early (CONTRACT §19): until a new leaf is served. */
export function renewalRequested(leaf: Pick<CertificateDetails, "renewalInfo">): boolean {
  return (leaf.renewalInfo?.requestedEnd ?? null) !== null;
}

/** How the rule asks about time; core/certificates' ClockAt notes each moment it is asked about. */
export interface DeadlineClock {
  atOrAfter(moment: number): boolean;
}

/**
 * `renewal.state` of a leaf: requested when the CA asked for early replacement, else overdue once the
 * deadline has come while an endpoint still serves it (`answering`: the last check reached one), else
 * not_due.
 */
export function renewalState(leaf: Leaf, answering: boolean, clock: DeadlineClock): RenewalState {
  if (renewalRequested(leaf)) return "requested";
  if (answering && clock.atOrAfter(renewalDeadline(leaf).deadline)) return "overdue";
  return "not_due";
}

/**
 * How often a leaf is re-checked at least (CONTRACT §18): a twelfth of its lifetime, so a 24-hour
 * certificate every 2 hours, and never less often than `intervalMs`. The rule is there so that each
 * renewal is seen in time; it holds for a leaf whose chain is trusted (`trusted`), which a CA the
 * operator trusts issued, and while it has not expired. Once expired, the wait grows with the time
 * since the expiry (doubling until it is at least a twelfth of it): a replacement is still seen soon after the expiry, and a leaf
 * that expired long ago, or a server that makes up a new untrusted leaf of seconds at every
 * handshake, is not checked every second.
 *
 * @example
 * checkIntervalFor({ notBefore: 0, notAfter: DAY }, 6 * HOUR, HOUR, true) === 2 * HOUR;
 */
export function checkIntervalFor(leaf: Pick<CertificateDetails, "notBefore" | "notAfter">, intervalMs: number, now: number, trusted: boolean): number {
  const twelfth = Math.floor((leaf.notAfter - leaf.notBefore) / 12);
  // A leaf with no lifetime to speak of (notAfter at or before notBefore) keeps the interval.
  if (!trusted || twelfth <= 0) return intervalMs;
  // Doubling steps, not a wait that changes at every check: each step keeps its phase for a while
  // (core/monitor/check_phase.ts), so checks stay that far apart.
  let period = Math.max(twelfth, MIN_CHECK_INTERVAL);
  const sinceExpiry = now - leaf.notAfter;
  while (period < sinceExpiry / 12 && period < intervalMs) period *= 2;
  return Math.min(intervalMs, period);
}

const MIN_CHECK_INTERVAL = 1000;
