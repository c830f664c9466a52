/**
 * Past the rate limit the console's pages of certificates, channels and watches answer 429 with
 * Retry-After, and the 429 page says which pages wait; the Account, API Keys and Members tabs are not
 * counted and still open, so an owner can revoke a key whatever the count.
 */
import { afterAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { signedInUser } from "./support/web_users.ts";

let h: Harness | undefined;
afterAll(async () => {
  await h?.close();
});

test("past the limit the dashboard, channels and watches wait; the settings tabs open and are not counted", async () => {
  h = await createHarness({ passwords: quickPasswords, clock: new FakeClock(Date.now()), limits: { requestsPerMinute: 5 } });
  const user = await signedInUser(h, "owner"); // signing in shows the dashboard: 1 of the 5
  // The settings tabs, however often shown, leave the count where it is.
  for (let i = 0; i < 10; i++) expect((await user.browser.get("/settings/account")).status).toBe(200);
  for (let i = 0; i < 4; i++) expect((await user.browser.get("/")).status).toBe(200);
  const refused = await user.browser.get("/");
  expect({ status: refused.status, retryAfter: Number(refused.headers.get("retry-after")) > 0 }).toEqual({ status: 429, retryAfter: true });
  expect(refused.text).toContain("The pages of certificates, channels and watches are refused until then");
  for (const path of ["/channels", "/watches"]) expect([path, (await user.browser.get(path)).status]).toEqual([path, 429]);
  for (const path of ["/settings/api-keys", "/settings/members", "/settings/account"]) {
    expect([path, (await user.browser.get(path)).status]).toEqual([path, 200]);
  }
});
