/**
 * CONTRACT §8 on one process whose wall clock is set back (NTP correcting a clock that ran ahead): a
 * key refused at its limit is not held back for the size of the step; it is served again.
 */
import { expect, test } from "bun:test";
import { createHarness, expectError } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { HOUR } from "../core/base/time.ts";

test("a key refused at its limit is served again once the clock is set back an hour", async () => {
  const clock = new FakeClock(Date.UTC(2026, 5, 1, 12, 0, 0));
  const own = await createHarness({ clock, limits: { requestsPerMinute: 1 } });
  try {
    expect((await own.request("GET", "/v1/certificates")).status).toBe(200);
    expectError(await own.request("GET", "/v1/certificates"), 429, "rate_limit_exceeded");
    clock.set(clock.now() - HOUR);
    const again = await own.request("GET", "/v1/certificates");
    expect(again.status).toBe(200);
    expect(again.headers.get("x-ratelimit-remaining")).toBe("0");
  } finally {
    await own.close();
  }
});
