/**
 * Per-key rate limits over fixed 60-second windows (CONTRACT §8). A window opens with a key's first
 * request and resets 60 s later, so a client that waits Retry-After seconds is always served again.
 * Counted in memory for a single process, in the store when processes share a database.
 */
import { MINUTE } from "../base/time.ts";
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

/** Windows in a Map; stale windows are swept as the map grows, so memory tracks active keys only. */
export class MemoryRateLimiter implements RateLimiter {
  #windows = new Map<string, { start: number; count: number }>();
  #nextSweep = 0;

  hit(keyId: string, limit: number, now: number): RateLimitState {
    if (now >= this.#nextSweep) this.#sweep(now);
    let window = this.#windows.get(keyId);
    if (!window || now >= window.start + RATE_LIMIT_WINDOW_MS) {
      window = { start: now, count: 0 };
      this.#windows.set(keyId, window);
    }
    window.count++;
    return stateOf(window.count, window.start, limit);
  }

  #sweep(now: number) {
    for (const [key, window] of this.#windows) {
      if (now >= window.start + RATE_LIMIT_WINDOW_MS) this.#windows.delete(key);
    }
    this.#nextSweep = now + RATE_LIMIT_WINDOW_MS;
  }
}

/**
 * Windows in the shared store: the limit holds across every process on one database.
 *
 * A request waits at most `waitMs` (default 1 s) for the shared count. A process killed inside a write
 * transaction on sqld holds its write lock until sqld gives up on it, about 5 s: every other process's
 * requests would wait that long. Past the wait, the request is judged by this process's own count of
 * the key's window (which never exceeds the shared one, so it refuses no request the shared count
 * would allow), and the shared count is still added when the store answers.
 */
export class StoreRateLimiter implements RateLimiter {
  readonly #local = new MemoryRateLimiter();

  constructor(
    private readonly store: RateLimitStore,
    private readonly waitMs = 1_000,
  ) {}

  async hit(keyId: string, limit: number, now: number): Promise<RateLimitState> {
    const local = this.#local.hit(keyId, limit, now);
    const shared = this.store.hit(keyId, now, RATE_LIMIT_WINDOW_MS);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(resolve, this.waitMs, null)));
    try {
      const counted = await Promise.race([shared, late]);
      if (counted) return stateOf(counted.count, counted.windowStart, limit);
      // Still counted once the store answers; a failure then has no request left to fail.
      shared.catch(() => {});
      return local;
    } finally {
      clearTimeout(timer);
    }
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
