/**
 * Per-key rate-limit windows and the sign-in slowdown are kept as wall-clock moments. After the wall
 * clock is set back a day (NTP correcting a clock that ran ahead), a refused key is served again after
 * one window of the corrected clock (a client that waits Retry-After is served again), and a person
 * slowed down at sign-in waits at most the slowdown's 15 minutes, not a day. Processes whose clocks
 * differ by less than a window still count into one window.
 */
import { expect, test } from "bun:test";
import { MemoryRateLimiter, rateLimitHeaders, StoreRateLimiter, type RateLimiter } from "../core/auth/rate_limit.ts";
import { SIGN_IN_THROTTLE, waitFor } from "../core/accounts/sign_in_throttle.ts";
import { DAY, MINUTE, SECOND } from "../core/base/time.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const T = Date.UTC(2026, 2, 1, 12);

async function limiterCase(limiter: RateLimiter) {
  const limit = 3;
  for (let i = 0; i < limit; i++) expect((await limiter.hit("key_1", limit, T + i)).allowed).toBe(true);
  const refused = await limiter.hit("key_1", limit, T + 10);
  expect(refused.allowed).toBe(false);
  // NTP: the clock had run a day ahead. The client waits more than a window.
  const now = T - DAY + MINUTE + SECOND;
  const after = await limiter.hit("key_1", limit, now);
  return { after, retryAfter: rateLimitHeaders(after, now)["retry-after"] };
}

test("in-memory rate limit: after the clock steps back a day, a key is served again after one window", async () => {
  const { after, retryAfter } = await limiterCase(new MemoryRateLimiter());
  expect({ allowed: after.allowed, retryAfter }).toEqual({ allowed: true, retryAfter: undefined });
});

test("shared-store rate limit (memory store): after the clock steps back a day, a key is served again after one window", async () => {
  const store = createMemoryStore();
  const { after, retryAfter } = await limiterCase(new StoreRateLimiter(store.rateLimits));
  expect({ allowed: after.allowed, retryAfter }).toEqual({ allowed: true, retryAfter: undefined });
});

test("shared-store rate limit (libSQL): after the clock steps back a day, a key is served again after one window", async () => {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-clock-limits-"));
  const store = await openLibsqlStore({ url: `file:${join(dir, "t.db")}` });
  try {
    const { after, retryAfter } = await limiterCase(new StoreRateLimiter(store.rateLimits));
    expect({ allowed: after.allowed, retryAfter }).toEqual({ allowed: true, retryAfter: undefined });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sign-in slowdown: after the clock steps back a day, the wait is at most the slowdown's 15 minutes, not a day", () => {
  // Seven failures for one email: the next attempt waits 8 s after the last one.
  const failures = { failures: 7, lastFailureAt: T };
  expect(waitFor(failures, SIGN_IN_THROTTLE.email, T)).toBe(8 * SECOND);
  const wait = waitFor(failures, SIGN_IN_THROTTLE.email, T - DAY);
  expect(wait).toBeLessThanOrEqual(SIGN_IN_THROTTLE.email.maxDelayMs);
});

test("processes whose clocks differ by less than a window count into one window (shared store)", async () => {
  const store = createMemoryStore();
  const limiter = new StoreRateLimiter(store.rateLimits);
  // One process 30 s ahead of another: the window the first began holds for the second.
  expect((await limiter.hit("key_2", 2, T + 30 * SECOND)).allowed).toBe(true);
  expect((await limiter.hit("key_2", 2, T)).allowed).toBe(true);
  expect((await limiter.hit("key_2", 2, T + 1)).allowed).toBe(false);
});
