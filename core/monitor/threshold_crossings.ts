/**
 * Alert thresholds as moments in time. Threshold T is crossed once daysUntilExpiry ≤ T, that is once
 * now > notAfter − (T + 1) days. Each threshold is announced at most once per certificate serial;
 * when several are crossed at once (a certificate added 5 days before expiry), only the lowest is.
 */
import { DAY, daysUntil } from "../base/time.ts";

/** The moment threshold `t` is crossed: the first millisecond at which daysUntilExpiry ≤ t. */
export function crossingAt(notAfter: number, threshold: number): number {
  return notAfter - (threshold + 1) * DAY + 1;
}

/**
 * The threshold to announce now, or null. `alerted` is the lowest threshold already announced for
 * this serial: only thresholds below it are still armed, so raising the thresholds later never
 * announces a stage the certificate has already passed.
 */
export function thresholdToAnnounce(
  thresholds: readonly number[],
  notAfter: number,
  alerted: number | null,
  now: number,
): number | null {
  const days = daysUntil(notAfter, now);
  let lowest: number | null = null;
  for (const t of thresholds) {
    if (days <= t && (alerted === null || t < alerted) && (lowest === null || t < lowest)) lowest = t;
  }
  return lowest;
}

/**
 * The next moment after `now` at which something about this certificate becomes due: an armed
 * threshold crossing, or expiry itself. Null when nothing is left to announce for this serial.
 */
export function nextAlertAt(
  thresholds: readonly number[],
  notAfter: number,
  alerted: number | null,
  expiryAlerted: boolean,
  now: number,
): number | null {
  let next: number | null = null;
  const consider = (at: number) => {
    if (at > now && (next === null || at < next)) next = at;
  };
  for (const t of thresholds) if (alerted === null || t < alerted) consider(crossingAt(notAfter, t));
  if (!expiryAlerted) consider(notAfter + 1);
  return next;
}
