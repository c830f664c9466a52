/**
 * The shared rate limit (several processes on one libSQL server): the store's count decides, unless
 * the store does not answer within the wait (a peer killed holding the write lock); then this process's
 * own count of the key's window does, and the shared count is still added when the store answers.
 */
import { describe, expect, test } from "bun:test";
import { StoreRateLimiter } from "../core/auth/mod.ts";
import type { RateLimitStore } from "../core/store/ports.ts";

/** A store whose answers the test releases: `hit` records each call and waits for `release`. */
function heldStore() {
  const calls: Array<{ keyId: string; now: number; answer: (count: number) => void }> = [];
  const store: RateLimitStore = {
    hit: (keyId, now) => new Promise((resolve) => calls.push({ keyId, now, answer: (count) => resolve({ count, windowStart: now }) })),
  } as RateLimitStore;
  return { store, calls };
}

describe("the shared rate limit", () => {
  test("the store's count decides when it answers in time, whatever this process counted", async () => {
    const store = { hit: async (_key: string, now: number) => ({ count: 7, windowStart: now }) } as unknown as RateLimitStore;
    const limiter = new StoreRateLimiter(store, 1_000);
    const state = await limiter.hit("key_a", 6, 1_000_000);
    expect(state).toEqual({ allowed: false, limit: 6, remaining: 0, resetAt: 1_000_000 + 60_000 });
  });

  test("a store that does not answer within the wait: this process's own count decides, and every request is still counted in the store", async () => {
    const { store, calls } = heldStore();
    const limiter = new StoreRateLimiter(store, 50);
    const states = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      states.push(await limiter.hit("key_a", 2, 1_000_000 + i));
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    expect(states.map((state) => [state.allowed, state.remaining])).toEqual([
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    // The store was asked for each of them; its late answers are taken without a failure.
    expect(calls.map((call) => call.keyId)).toEqual(["key_a", "key_a", "key_a"]);
    for (const [i, call] of calls.entries()) call.answer(i + 1);
    // Once it answers again, its count decides again.
    const late = limiter.hit("key_a", 2, 1_000_010);
    calls.at(-1)!.answer(1);
    expect((await late).allowed).toBe(true);
  });

  test("a store that fails fails the request, as before", async () => {
    const store = { hit: async () => Promise.reject(new Error("the database is gone")) } as unknown as RateLimitStore;
    await expect(new StoreRateLimiter(store, 1_000).hit("key_a", 6, 1_000_000)).rejects.toThrow("the database is gone");
  });
});
