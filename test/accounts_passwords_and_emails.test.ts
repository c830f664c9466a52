/**
 * Passwords and email addresses at their edges (docs/settings.md): a password has at least 10
 * characters, on the Account tab and on the Members tab's Add a user; a new password must differ from
 * the current one; a password change's slowdown answers with Retry-After like sign-in's; an email
 * address is one account whatever its case (sign-in is "with your email address (any case)").
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { WebClient } from "./support/web_client.ts";
import { PASSWORD, signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

test("the Account tab refuses a new password of 9 characters and accepts one of 10", async () => {
  const user = await signedInUser(h, "member");
  await user.browser.get("/settings/account");
  const nine = "123456789";
  const short = await user.browser.post("/settings/account/password", { current: PASSWORD, next: nine, confirm: nine });
  expect(short.status).toBe(400);
  expect(short.text).toContain("The new password must have 10 to 1024 characters; nothing was changed.");
  expect((await new WebClient(h.app).signIn(user.email, nine)).status).toBe(401);
  const ten = "1234567890";
  const changed = await user.browser.post("/settings/account/password", { current: PASSWORD, next: ten, confirm: ten });
  expect(changed.status).toBe(303);
  expect((await new WebClient(h.app).signIn(user.email, ten)).status).toBe(303);
});

test("the Account tab refuses the current password as the new one, and the other sessions go on", async () => {
  const user = await signedInUser(h, "member");
  const elsewhere = new WebClient(h.app);
  expect((await elsewhere.signIn(user.email, PASSWORD)).status).toBe(303);
  await user.browser.get("/settings/account");
  const same = await user.browser.post("/settings/account/password", { current: PASSWORD, next: PASSWORD, confirm: PASSWORD });
  expect(same.status).toBe(400);
  expect(same.text).toContain("The new password is the current one; choose another.");
  expect(same.setCookies.has("certkeeper_session")).toBe(false);
  expect((await elsewhere.get("/settings/account")).status).toBe(200);
});

test("guessing the current password past the free failures is answered 429 with a Retry-After header", async () => {
  const user = await signedInUser(h, "member");
  await user.browser.get("/settings/account");
  const wrong = { current: "not the password", next: "a-brand-new-passw0rd", confirm: "a-brand-new-passw0rd" };
  for (let i = 0; i < 5; i++) expect((await user.browser.post("/settings/account/password", wrong)).status).toBe(400);
  const held = await user.browser.post("/settings/account/password", { ...wrong, current: PASSWORD });
  expect(held.status).toBe(429);
  const seconds = Number(held.headers.get("retry-after"));
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(2);
  expect(held.text).toContain(`Wait ${seconds} second`);
  expect((await new WebClient(h.app).signIn(user.email, PASSWORD)).status).toBe(429);
});

test("Add a user refuses an initial password of 9 characters: no user is made", async () => {
  await owner.browser.get("/settings/members");
  const email = `short-${crypto.randomUUID().slice(0, 8)}@acme.test`;
  const answer = await owner.browser.post("/settings/members", { email, role: "member", password: "123456789" });
  expect(answer.status).toBe(400);
  expect(answer.text).toContain("A password must have 10 to 1024 characters.");
  expect(await h.store.users.findByEmail(email)).toBeNull();
});

test("a user added with capitals in their email address signs in with it in any case, and the address is taken in any case", async () => {
  await owner.browser.get("/settings/members");
  const local = `Mixed.Case-${crypto.randomUUID().slice(0, 8)}`;
  const added = await owner.browser.post("/settings/members", { email: `${local}@Acme.TEST`, role: "member", password: "a long enough password" });
  expect({ status: added.status, location: added.headers.get("location") }).toEqual({ status: 303, location: "/settings/members?notice=member-added" });
  expect((await new WebClient(h.app).signIn(`${local.toLowerCase()}@acme.test`, "a long enough password")).status).toBe(303);
  expect((await new WebClient(h.app).signIn(`${local}@Acme.TEST`, "a long enough password")).status).toBe(303);
  const again = await owner.browser.post("/settings/members", { email: `${local.toLowerCase()}@acme.test`, role: "member", password: "a long enough password" });
  expect(again.status).toBe(400);
  expect(again.text).toContain("already exists");
});

test("Create API Key refuses a mode other than live or test (a crafted post): no key is made", async () => {
  await owner.browser.get("/settings/api-keys");
  const before = (await h.store.apiKeys.list(h.org.id)).length;
  const answer = await owner.browser.post("/settings/api-keys", { name: "Odd mode", mode: "prod" });
  expect(answer.status).toBe(400);
  expect(answer.text).toContain("Mode");
  expect(answer.text).not.toMatch(/ck_(live|test|prod)_[0-9A-Za-z]{38}/);
  expect((await h.store.apiKeys.list(h.org.id)).length).toBe(before);
});
