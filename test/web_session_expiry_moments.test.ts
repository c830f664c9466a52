/**
 * Session expiry at its edges (docs/settings.md, "Signing in and out": a session lasts until 12 hours
 * after it was last used, or 7 days after sign-in): a session never used after sign-in ends 12 hours
 * later, and one whose 12 hours are up to the millisecond has ended.
 */
import { expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { signedInUser } from "./support/web_users.ts";
import { HOUR, SECOND } from "../core/base/time.ts";

test("a session not used after signing in ends 12 hours later, not 7 days later", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  const timed = await createHarness({ passwords: quickPasswords, clock });
  try {
    const user = await signedInUser(timed, "owner");
    clock.advance(12 * HOUR + SECOND);
    const page = await user.browser.get("/settings/account");
    expect({ status: page.status, location: page.headers.get("location") }).toEqual({ status: 303, location: "/sign-in?next=%2Fsettings%2Faccount" });
  } finally {
    await timed.close();
  }
});

test("a session last used exactly 12 hours ago has ended; a millisecond earlier it had not", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  const timed = await createHarness({ passwords: quickPasswords, clock });
  try {
    const early = await signedInUser(timed, "owner");
    const late = await signedInUser(timed, "owner");
    clock.advance(12 * HOUR - 1);
    expect((await early.browser.get("/settings/account")).status).toBe(200);
    // `late` was last used (signing in) exactly 12 hours before the next millisecond.
    clock.advance(1);
    const page = await late.browser.get("/settings/account");
    expect({ status: page.status, location: page.headers.get("location") }).toEqual({ status: 303, location: "/sign-in?next=%2Fsettings%2Faccount" });
  } finally {
    await timed.close();
  }
});
