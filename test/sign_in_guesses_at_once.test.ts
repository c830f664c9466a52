/**
 * The sign-in slowdown holds against guesses sent at once: per email address, 5 free failures, then
 * each attempt waits (429, the password not looked at). A password being verified counts as a failure
 * until it is known not to be one, so twenty guesses sent together get five verified, not twenty; the
 * Account tab's current-password check counts under the same email. Failures whose hour has passed
 * stay forgotten while attempts are under way.
 */
import { expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness } from "./support/harness.ts";
import { WebClient } from "./support/web_client.ts";
import { PASSWORD, signedInUser } from "./support/web_users.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { HOUR, SECOND } from "../core/base/time.ts";
import { AttemptsInFlight, emailThrottleKey, SIGN_IN_THROTTLE, waitFor } from "../core/accounts/sign_in_throttle.ts";

test("guesses for one email sent at once get no more than the 5 free failures verified; the others wait (429)", async () => {
  const h = await createHarness({ passwords: quickPasswords });
  try {
    const { email } = await signedInUser(h, "owner");
    const browsers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const browser = new WebClient(h.app);
        await browser.get("/sign-in");
        return browser;
      }),
    );
    const answers = await Promise.all(browsers.map((browser, i) => browser.post("/sign-in", { email, password: `wrong guess ${i}` })));
    const verified = answers.filter((answer) => answer.status === 401).length;
    const held = answers.filter((answer) => answer.status === 429).length;
    expect({ verified, held }).toEqual({ verified: 5, held: 15 });
    // And the right password is held too now.
    expect((await new WebClient(h.app).signIn(email, PASSWORD)).status).toBe(429);
  } finally {
    await h.close();
  }
});

test("current passwords guessed at once on the Account tab get no more than the 5 free failures verified", async () => {
  const h = await createHarness({ passwords: quickPasswords });
  try {
    const user = await signedInUser(h, "owner");
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => user.browser.post("/settings/account/password", { current: `guess-number-${i}`, next: "x".repeat(12), confirm: "x".repeat(12) })),
    );
    const statuses = answers.map((answer) => answer.status);
    expect({ verified: statuses.filter((s) => s === 400).length, held: statuses.filter((s) => s === 429).length }).toEqual({ verified: 5, held: 7 });
  } finally {
    await h.close();
  }
});

test("an attempt under way over a count whose hour has passed is one failure, not the old count plus one", () => {
  const now = Date.UTC(2031, 0, 1);
  const stored = { failures: 12, lastFailureAt: now - 2 * HOUR };
  expect(waitFor(stored, SIGN_IN_THROTTLE.email, now)).toBe(0);
  const inFlight = new AttemptsInFlight();
  inFlight.begin(["k"]);
  expect(waitFor(inFlight.withPending("k", { stored, policy: SIGN_IN_THROTTLE.email, now }), SIGN_IN_THROTTLE.email, now)).toBe(0);
  // Under way beside a standing count, it adds to it.
  const fresh = { failures: 5, lastFailureAt: now - 1 };
  expect(waitFor(inFlight.withPending("k", { stored: fresh, policy: SIGN_IN_THROTTLE.email, now }), SIGN_IN_THROTTLE.email, now)).toBe(4000);
});

test("two sign-ins with the right password sent at once, the email's failures of two hours ago not yet pruned: neither waits", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  const h = await createHarness({ passwords: quickPasswords, clock });
  try {
    const { email } = await signedInUser(h, "owner");
    for (let i = 0; i < 12; i++) await h.store.signInAttempts.fail(emailThrottleKey(email), { now: clock.now(), windowMs: HOUR });
    clock.advance(2 * HOUR + SECOND);
    const answers = await Promise.all([new WebClient(h.app).signIn(email, PASSWORD), new WebClient(h.app).signIn(email, PASSWORD)]);
    expect(answers.map((a) => a.status)).not.toContain(429);
  } finally {
    await h.close();
  }
});
