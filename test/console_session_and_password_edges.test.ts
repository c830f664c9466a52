/**
 * The settings area's sessions and password change at their edges (docs/settings.md): a session used
 * exactly 5 minutes after its last recorded use has that use recorded (its 12 idle hours start again
 * there); a new password whose confirmation differs changes nothing.
 */
import { expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { WebClient } from "./support/web_client.ts";
import { PASSWORD, signedInUser } from "./support/web_users.ts";
import { HOUR, MINUTE } from "../core/base/time.ts";

test("a session used 5 minutes after sign-in lasts until 12 hours after that use", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  const timed = await createHarness({ passwords: quickPasswords, clock });
  try {
    const user = await signedInUser(timed, "owner");
    clock.advance(5 * MINUTE);
    expect((await user.browser.get("/settings/account")).status).toBe(200);
    // 12 hours after sign-in, but less than 12 hours after the use above: still signed in.
    clock.advance(12 * HOUR - MINUTE);
    expect((await user.browser.get("/settings/account")).status).toBe(200);
  } finally {
    await timed.close();
  }
});

test("the Account tab refuses a new password whose confirmation differs: nothing changes", async () => {
  const h = await createHarness({ passwords: quickPasswords });
  try {
    const user = await signedInUser(h, "member");
    await user.browser.get("/settings/account");
    const refused = await user.browser.post("/settings/account/password", { current: PASSWORD, next: "a-brand-new-passw0rd", confirm: "another-new-passw0rd" });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("The two new passwords differ; nothing was changed.");
    expect((await new WebClient(h.app).signIn(user.email, "a-brand-new-passw0rd")).status).toBe(401);
    expect((await new WebClient(h.app).signIn(user.email, PASSWORD)).status).toBe(303);
    expect((await user.browser.get("/settings/account")).status).toBe(200);
  } finally {
    await h.close();
  }
});
