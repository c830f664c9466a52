/**
 * The sign-in slowdown's counts (`sign_in_attempts`, one row per email address
 * tried and one per client address or IPv6 /64) are written by every failed sign-in from anyone who
 * can reach the sign-in form, and deleted only by `SignIn.#housekeeping`, which runs after a
 * *successful* sign-in. An installation whose users work through the API and the CLI (nobody signs in
 * to the settings area for months), or one whose form is hammered by credential stuffing from many
 * addresses, keeps every row ever written: nothing on the hourly retention touches them.
 *
 * docs/settings.md: "Counts are forgotten an hour after the last failure"; the hourly retention
 * (core/notify/retention.ts) is where every other table that grows with time is pruned. Expected: a
 * count whose last failure is older than the slowdown's window (an hour) is deleted by the hourly
 * retention, whether or not anybody signs in successfully afterwards.
 */
import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { DAY } from "../core/base/time.ts";
import { emailThrottleKey, addressThrottleKey } from "../core/accounts/sign_in_throttle.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { quickPasswords } from "./support/passwords.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function signInRows(dir: string): number {
  const db = new Database(join(dir, "test.db"), { readonly: true });
  try {
    return (db.query("SELECT COUNT(*) AS n FROM sign_in_attempts").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Failed sign-ins as a credential-stuffing run makes them: a new email each time, from many /64s. */
async function stuff(harness: Harness, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const result = await harness.core.accounts.signIn.attempt({
      email: `victim-${i}@stuffed.example`,
      password: "hunter2",
      clientAddress: `2001:db8:${(i >> 4).toString(16)}:${(i & 15).toString(16)}::1`,
    });
    expect(result.ok).toBe(false);
  }
}

for (const kind of ["libsql", "memory"] as const) {
  test(`${kind}: failed sign-ins' counts are deleted by the hourly retention once their hour is over, without waiting for someone to sign in`, async () => {
    const clock = new FakeClock();
    h = await createHarness({ store: kind, clock, passwords: quickPasswords });
    await stuff(h, 200);
    if (h.dir) expect(signInRows(h.dir)).toBe(400); // one row per email, one per /64: 2 per attempt

    // Two days later, nobody has signed in successfully; the hourly retention has run.
    clock.advance(2 * DAY);
    await h.core.services.retention.runOnce();

    if (h.dir) expect(signInRows(h.dir)).toBe(0);
    expect(await h.store.signInAttempts.get(emailThrottleKey("victim-0@stuffed.example"))).toBeNull();
    expect(await h.store.signInAttempts.get(addressThrottleKey("2001:db8:0:0::1"))).toBeNull();
  }, 60_000);
}
