/**
 * With a database shared by several processes the rate limit holds across them together, and their
 * clocks need only be within a few minutes of each other: with two processes two minutes apart, a
 * client whose requests alternate between them (any round-robin load balancer) is still limited.
 */
import { expect, test } from "bun:test";
import { StoreRateLimiter } from "../core/auth/rate_limit.ts";
import { MINUTE } from "../core/base/time.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const T = Date.UTC(2026, 2, 1, 12);
const SKEW = 2 * MINUTE; // "within a few minutes"

async function alternate(limiter: StoreRateLimiter): Promise<number> {
  const limit = 3;
  let allowed = 0;
  for (let i = 0; i < 20; i++) {
    // Process A's clock is SKEW ahead of process B's; the requests alternate, 100 ms apart.
    const now = (i % 2 === 0 ? T + SKEW : T) + i * 100;
    if ((await limiter.hit("key_skew", limit, now)).allowed) allowed++;
  }
  return allowed;
}

test("shared-store rate limit (memory store): two processes two minutes apart still hold the limit together", async () => {
  const store = createMemoryStore();
  expect(await alternate(new StoreRateLimiter(store.rateLimits))).toBeLessThanOrEqual(2 * 3);
});

test("shared-store rate limit (libSQL): two processes two minutes apart still hold the limit together", async () => {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-rate-skew-"));
  const store = await openLibsqlStore({ url: `file:${join(dir, "t.db")}` });
  try {
    expect(await alternate(new StoreRateLimiter(store.rateLimits))).toBeLessThanOrEqual(2 * 3);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
