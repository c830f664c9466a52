/**
 * The sign-in slowdown holds against guesses sent at once: per email address, 5 free failures, then
 * each attempt waits (429, the password not looked at). A password being verified counts as a failure
 * until it is known not to be one, so twenty guesses sent together get five verified, not twenty; the
 * Account tab's current-password check counts under the same email.
 */
import { expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness } from "./support/harness.ts";
import { WebClient } from "./support/web_client.ts";
import { PASSWORD, signedInUser } from "./support/web_users.ts";

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
