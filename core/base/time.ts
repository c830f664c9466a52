/** Time as a dependency: everything in core that needs "now" or a delay takes a {@link Clock}. */

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock's time, or early when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done, { once: true });
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
    }),
};

/**
 * How far ahead of the wall clock a stored time may be before it was planned on a clock that has since
 * been set back, beyond the longest wait the planner ever chooses: room for clocks a few minutes apart
 * between processes on one database.
 */
export const CLOCK_STEP_SLACK_MS = 10 * MINUTE;

/**
 * The latest end, seen at `now`, of a lease or claim of `lengthMs` that a live holder may hold: one
 * ending later was taken on a wall clock since set back, by a holder that is gone (a live one renews on
 * the new clock), and is taken over. Generous, an hour at least besides the slack: processes set up
 * with longer leases than this one (a rolling change of a time limit, a CLI run without the server's
 * settings) are never taken for gone.
 */
export function latestLiveLease(now: number, lengthMs: number): number {
  return now + Math.max(lengthMs, HOUR) + CLOCK_STEP_SLACK_MS;
}

/**
 * `look(now)` at most once a minute of `clock`'s time, and at once when it has gone back since the last
 * look (a wall clock set back): for finding times stored ahead of a clock that was set back. Returns
 * what to call before each use of stored times; `look`'s failure is left for the next call to retry.
 */
export function clockStepWatch(clock: Clock, look: (now: number) => Promise<unknown>): () => Promise<void> {
  let lastAt = -Infinity;
  return async () => {
    const now = clock.now();
    if (now - lastAt < MINUTE && now >= lastAt) return;
    await look(now);
    lastAt = now;
  };
}

/** Timestamps formatted lately: a certificate's five are shown on every read of it. */
const formatted = new Map<number, string>();
const MAX_FORMATTED = 10_000;

/** `YYYY-MM-DDTHH:mm:ss.sssZ`, the only timestamp format certkeeper emits. */
export function iso(ms: number): string {
  let text = formatted.get(ms);
  if (text === undefined) {
    text = new Date(ms).toISOString();
    if (formatted.size >= MAX_FORMATTED) formatted.clear();
    formatted.set(ms, text);
  }
  return text;
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: DAY };

/** Parses `500ms`, `30s`, `5m`, `6h`, `1d` into milliseconds; throws on anything else. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration: write it like 500ms, 30s, 5m or 6h`);
  return Math.round(Number(match[1]) * UNIT[match[2]!]!);
}

/** Whole days from `now` until `until`, rounded down: negative once `until` has passed. */
export function daysUntil(until: number, now: number): number {
  return Math.floor((until - now) / DAY);
}

/**
 * A {@link daysUntil} count in words, the one way certkeeper says it everywhere (email, chat, the
 * settings area, the CLI): "in 7 days", "in 1 day", "in less than a day", "less than a day ago",
 * "3 days ago". The count is floor((expiresAt − now) / 1 day), so -1 means it passed less than a day
 * ago and -4 that it passed 3 whole days ago (not 4).
 */
export function relativeDays(daysUntilExpiry: number): string {
  if (daysUntilExpiry > 0) return `in ${dayCount(daysUntilExpiry)}`;
  if (daysUntilExpiry === 0) return "in less than a day";
  const ago = daysAgo(daysUntilExpiry);
  return ago === 0 ? "less than a day ago" : `${dayCount(ago)} ago`;
}

/** Whole days since the moment passed, from its {@link daysUntil} count (negative): -1 → 0, -4 → 3. */
export function daysAgo(daysUntilExpiry: number): number {
  return Math.max(0, -daysUntilExpiry - 1);
}

/**
 * {@link relativeDays} for a table cell or a one-line output: "89 days", "1 day", "0 days" while it
 * has not passed, then as relativeDays says it ("less than a day ago", "3 days ago").
 */
export function daysLeft(daysUntilExpiry: number): string {
  return daysUntilExpiry < 0 ? relativeDays(daysUntilExpiry) : dayCount(daysUntilExpiry);
}

/** "1 day", "7 days". */
export function dayCount(days: number): string {
  return days === 1 ? "1 day" : `${days} days`;
}
