/**
 * With a database shared by several processes (sqld), the rate limit is counted
 * in the `rate_limits` table, one row per API key and one per signed-in user (`session:<userId>`, the
 * settings area's pages). Nothing ever deletes a row of that table: a revoked key's row, and a removed
 * user's, stay for as long as the database lives, although the window they hold ended a minute after
 * their last request and the key can never be served again (401 expired_api_key before any count).
 * An automation that creates a key per deployment and revokes it afterwards leaves one row a day,
 * forever; small, but an orphan of a removal that nothing reclaims.
 *
 * Expected: the hourly retention (the one place every process prunes what grows with time) deletes
 * rate-limit rows whose window is long over, at least those of revoked keys.
 */
import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { DAY } from "../core/base/time.ts";
import { StoreRateLimiter } from "../core/auth/rate_limit.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

test("libsql: the rate-limit rows of revoked keys are deleted by the hourly retention once their window is long over", async () => {
  const clock = new FakeClock();
  h = await createHarness({ store: "libsql", clock });
  // As a shared store counts: one row per key that made a request (see StoreRateLimiter).
  const limiter = new StoreRateLimiter(h.store.rateLimits);
  const revoked: string[] = [];
  for (let day = 0; day < 30; day++) {
    const key = await h.makeKey("admin"); // a deployment's key, used, then revoked
    await limiter.hit(key.id, 100, clock.now());
    await h.core.services.admin.revokeApiKey(key.id);
    revoked.push(key.id);
    clock.advance(DAY);
    await h.core.services.retention.runOnce();
  }
  const db = new Database(join(h.dir!, "test.db"), { readonly: true });
  try {
    const rows = db.query(`SELECT COUNT(*) AS n FROM rate_limits WHERE key_id IN (${revoked.map(() => "?").join(",")})`).get(...revoked) as { n: number };
    expect(rows.n).toBe(0);
  } finally {
    db.close();
  }
}, 60_000);
