/** The store conformance suite's part for rate limits. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import { newId } from "../../../core/base/ids.ts";
import { MINUTE } from "../../../core/base/time.ts";
import { NOW } from "./factories.ts";

/** How far ahead a window may begin before it counts as opened on a clock since set back. */
const AHEAD = 10 * MINUTE;

export function describeRateLimits(get: () => Store) {
  describe("rate limits", () => {
    test("hit() counts requests in fixed windows per key", async () => {
      const store = get();
      const key = newId("key");
      const other = newId("key");
      const window = MINUTE;
      expect(await store.rateLimits.hit(key, NOW, window, AHEAD)).toEqual({ count: 1, windowStart: NOW });
      expect(await store.rateLimits.hit(key, NOW + 10, window, AHEAD)).toEqual({ count: 2, windowStart: NOW });
      expect(await store.rateLimits.hit(other, NOW + 20, window, AHEAD)).toEqual({ count: 1, windowStart: NOW + 20 });
      expect(await store.rateLimits.hit(key, NOW + window - 1, window, AHEAD)).toEqual({ count: 3, windowStart: NOW });
      expect(await store.rateLimits.hit(key, NOW + window, window, AHEAD)).toEqual({ count: 1, windowStart: NOW + window });
      expect(await store.rateLimits.hit(key, NOW + window + 5, window, AHEAD)).toEqual({ count: 2, windowStart: NOW + window });
      expect(await store.rateLimits.hit(key, NOW + 5 * window, window, AHEAD)).toEqual({ count: 1, windowStart: NOW + 5 * window });
      expect(await store.rateLimits.hit(other, NOW + 30, window, AHEAD)).toEqual({ count: 2, windowStart: NOW + 20 });
    });

    test("hit() opens a new window when the current one begins more than a window and `aheadMs` later (a clock since set back), not before", async () => {
      const store = get();
      const key = newId("key");
      const window = MINUTE;
      expect(await store.rateLimits.hit(key, NOW, window, AHEAD)).toEqual({ count: 1, windowStart: NOW });
      // Another process's clock a few minutes behind: the same window.
      expect(await store.rateLimits.hit(key, NOW - 5 * MINUTE, window, AHEAD)).toEqual({ count: 2, windowStart: NOW });
      expect(await store.rateLimits.hit(key, NOW - window - AHEAD, window, AHEAD)).toEqual({ count: 3, windowStart: NOW });
      // Set back a day: a window of its own.
      expect(await store.rateLimits.hit(key, NOW - 24 * 60 * MINUTE, window, AHEAD)).toEqual({ count: 1, windowStart: NOW - 24 * 60 * MINUTE });
    });

    test("prune() deletes the windows opened before a time, and a key pruned counts from 1 again", async () => {
      const store = get();
      const old = newId("key");
      const recent = newId("key");
      await store.rateLimits.hit(old, NOW - 2 * 60 * MINUTE, MINUTE, AHEAD);
      await store.rateLimits.hit(recent, NOW - MINUTE / 2, MINUTE, AHEAD);
      await store.rateLimits.hit(recent, NOW - MINUTE / 2 + 1, MINUTE, AHEAD);
      // This test's old window, and any other test's opened as long before (a clock set back a day).
      expect(await store.rateLimits.prune(NOW - 60 * MINUTE)).toBeGreaterThanOrEqual(1);
      expect(await store.rateLimits.hit(recent, NOW - MINUTE / 2 + 2, MINUTE, AHEAD)).toEqual({ count: 3, windowStart: NOW - MINUTE / 2 });
      expect(await store.rateLimits.hit(old, NOW, MINUTE, AHEAD)).toEqual({ count: 1, windowStart: NOW });
    });

    test("hit() counts concurrent requests of one key exactly", async () => {
      const store = get();
      const key = newId("key");
      const results = await Promise.all(Array.from({ length: 10 }, () => store.rateLimits.hit(key, NOW, MINUTE, AHEAD)));
      expect(results.map((r) => r.count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });
  });
}
