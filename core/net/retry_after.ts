/**
 * Retry-After (RFC 9110 §10.2.3), as every server certkeeper talks to sends it: a CT log or service,
 * a CA's ARI, a notification receiver. Each caller applies its own bounds and default.
 */

/** The three forms of an HTTP-date a recipient reads (RFC 9110 §5.6.7): IMF-fixdate, RFC 850's, asctime's. */
const DAY_NAME = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "\\d{2}:\\d{2}:\\d{2}";
const HTTP_DATE = new RegExp(
  `^(?:${DAY_NAME}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT` +
    `|(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} ${TIME} GMT` +
    `|${DAY_NAME} ${MONTH} [ \\d]\\d ${TIME} \\d{4})$`,
);

/**
 * A Retry-After value in ms from `now` (0 for a date already past); null when absent or unreadable:
 * neither delay-seconds (`1*DIGIT`, however many; with `fractions`, also `1.25`, as some chat
 * services send) nor an HTTP-date. "-1", "+60" or "tomorrow" are not guessed at.
 */
export function retryAfterMs(value: string | readonly string[] | undefined, now: number, options: { fractions?: boolean } = {}): number | null {
  const text = (typeof value === "string" ? value : value?.[0])?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text) || (options.fractions !== false && /^\d+\.\d+$/.test(text))) return Math.ceil(Number(text) * 1000);
  if (!HTTP_DATE.test(text)) return null;
  // Every form is GMT; asctime's does not say so, and Date.parse would read it in local time.
  const at = Date.parse(text.endsWith("GMT") ? text : `${text} GMT`);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}
