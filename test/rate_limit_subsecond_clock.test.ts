/**
 * CONTRACT §8 at a clock that is not on a whole second: Retry-After and X-RateLimit-Reset are rounded
 * up, so a client that waits Retry-After seconds, or until X-RateLimit-Reset, is served again.
 */
import { expect, test } from "bun:test";
import { createHarness, expectError } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";

const START = Date.UTC(2026, 5, 1, 12, 0, 0) + 250;

test("a client that waits Retry-After seconds is served again when the window opened between two seconds", async () => {
  const clock = new FakeClock(START);
  const own = await createHarness({ clock, limits: { requestsPerMinute: 2 } });
  try {
    expect((await own.request("GET", "/v1/certificates")).status).toBe(200);
    expect((await own.request("GET", "/v1/certificates")).status).toBe(200);
    clock.advance(20_500);
    const limited = await own.request("GET", "/v1/certificates");
    expectError(limited, 429, "rate_limit_exceeded");
    // 39.5 s are left in the window: Retry-After says 40, not 39.
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBe(40);
    clock.advance(retryAfter * 1000);
    expect((await own.request("GET", "/v1/certificates")).status).toBe(200);
  } finally {
    await own.close();
  }
});

test("X-RateLimit-Reset is the first whole second at which the window has reset", async () => {
  const clock = new FakeClock(START);
  const own = await createHarness({ clock, limits: { requestsPerMinute: 1 } });
  try {
    const first = await own.request("GET", "/v1/certificates");
    const reset = Number(first.headers.get("x-ratelimit-reset"));
    // The window opened at 12:00:00.250 and resets at 12:01:00.250: the header names 12:01:01.
    expect(reset).toBe(Math.floor(START / 1000) + 61);
    expectError(await own.request("GET", "/v1/certificates"), 429, "rate_limit_exceeded");
    clock.set(reset * 1000);
    expect((await own.request("GET", "/v1/certificates")).status).toBe(200);
  } finally {
    await own.close();
  }
});
