/**
 * Per-key rate limits over fixed 60-second windows (CONTRACT §8). A window opens with a key's first
 * request and resets 60 s later, so a client that waits Retry-After seconds is always served again.
 * Counted in memory for a single process, in the store when processes share a database.
 */
import { CLOCK_STEP_SLACK_MS, MINUTE } from "../base/time.ts";
import type { RateLimitStore } from "../store/ports.ts";

export const RATE_LIMIT_WINDOW_MS = MINUTE;

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the window resets, ms since the epoch. */
  resetAt: number;
}

export interface RateLimiter {
  hit(keyId: string, limit: number, now: number): Promise<RateLimitState> | RateLimitState;
}

function stateOf(count: number, windowStart: number, limit: number): RateLimitState {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetAt: windowStart + RATE_LIMIT_WINDOW_MS,
  };
}

/**
 * Whether the window that began at `start` is over at `now`: it ran out, or it begins more than a
 * window and {@link CLOCK_STEP_SLACK_MS} ahead (opened on a wall clock since set back, which would
 * otherwise hold a refused key back for the size of the step; processes on one database whose clocks
 * differ by less share their windows).
 */
function windowOver(start: number, now: number): boolean {
  return now >= start + RATE_LIMIT_WINDOW_MS || start > now + RATE_LIMIT_WINDOW_MS + CLOCK_STEP_SLACK_MS;
}

/** Windows in a Map; stale windows are swept as the map grows, so memory tracks active keys only. */
export class MemoryRateLimiter implements RateLimiter {
  #windows = new Map<string, { start: number; count: number }>();
  #nextSweep = 0;

  hit(keyId: string, limit: number, now: number): RateLimitState {
    if (now >= this.#nextSweep) this.#sweep(now);
    let window = this.#windows.get(keyId);
    if (!window || windowOver(window.start, now)) {
      window = { start: now, count: 0 };
      this.#windows.set(keyId, window);
    }
    window.count++;
    return stateOf(window.count, window.start, limit);
  }

  #sweep(now: number) {
    for (const [key, window] of this.#windows) {
      if (windowOver(window.start, now)) this.#windows.delete(key);
    }
    this.#nextSweep = now + RATE_LIMIT_WINDOW_MS;
  }
}

/** Windows in the shared store: the limit holds across every process on one database. */
export class StoreRateLimiter implements RateLimiter {
  constructor(private readonly store: RateLimitStore) {}

  async hit(keyId: string, limit: number, now: number): Promise<RateLimitState> {
    const { count, windowStart } = await this.store.hit(keyId, now, RATE_LIMIT_WINDOW_MS, CLOCK_STEP_SLACK_MS);
    return stateOf(count, windowStart, limit);
  }
}

/** The X-RateLimit-* headers every response to a valid key carries, plus Retry-After when refused. */
export function rateLimitHeaders(state: RateLimitState, now: number): Record<string, string> {
  const headers: Record<string, string> = {
    "x-ratelimit-limit": String(state.limit),
    "x-ratelimit-remaining": String(state.remaining),
    "x-ratelimit-reset": String(Math.ceil(state.resetAt / 1000)),
  };
  if (!state.allowed) headers["retry-after"] = String(Math.max(1, Math.ceil((state.resetAt - now) / 1000)));
  return headers;
}
