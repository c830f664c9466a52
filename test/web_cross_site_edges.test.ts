/**
 * Where form posts may come from and where signing in may lead (docs/settings.md, "CSRF", "Signing in
 * and out"): a Referer standing in for a missing Origin must be this site's origin, not an address that
 * merely starts like it; a change is read only as a form; signing in never leads to another site.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { SITE, WebClient } from "./support/web_client.ts";
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

const keyCount = async () => (await h.store.apiKeys.list(h.org.id)).length;

test("without an Origin, a Referer of another site that begins like this one is refused (403) and nothing is created", async () => {
  await owner.browser.get("/settings/api-keys");
  const before = await keyCount();
  for (const referer of [`${SITE}.evil.example/settings/api-keys`, `${SITE}:8080/settings/api-keys`, `${SITE}@evil.example/`]) {
    const answer = await owner.browser.post("/settings/api-keys", { name: "Planted", mode: "live" }, { origin: null, referer });
    expect({ referer, status: answer.status }).toEqual({ referer, status: 403 });
    expect(answer.text).toContain("Request refused");
  }
  expect(await keyCount()).toBe(before);
  // This site's own page as Referer is still accepted.
  const own = await owner.browser.post("/settings/api-keys", { name: "Own", mode: "live" }, { origin: null, referer: `${SITE}/settings/api-keys` });
  expect(own.status).toBe(200);
  expect(await keyCount()).toBe(before + 1);
});

test("the sign-in form refuses a Referer of a look-alike site too", async () => {
  const browser = new WebClient(h.app);
  await browser.get("/sign-in");
  const answer = await browser.post("/sign-in", { email: owner.email, password: PASSWORD }, { origin: null, referer: `${SITE}.evil.example/` });
  expect(answer.status).toBe(403);
  expect(answer.setCookies.has("certkeeper_session")).toBe(false);
});

test("a change not sent as a form (text/plain, as a cross-site page can send) is not read: nothing is created", async () => {
  await owner.browser.get("/settings/api-keys");
  const before = await keyCount();
  const answer = await owner.browser.post("/settings/api-keys", { name: "Plain", mode: "live" }, { headers: { "content-type": "text/plain" } });
  expect(answer.status).toBe(400);
  expect(answer.text).toContain("The form could not be read");
  expect(await keyCount()).toBe(before);
});

test("signing in with a next address of another site (//host, /\\host) leads home, never off this site", async () => {
  for (const next of ["//evil.example/", "//evil.example", "/\\evil.example", "///evil.example"]) {
    const browser = new WebClient(h.app);
    await browser.get(`/sign-in?next=${encodeURIComponent(next)}`);
    const answer = await browser.post("/sign-in", { email: owner.email, password: PASSWORD, next });
    expect({ next, status: answer.status, location: answer.headers.get("location") }).toEqual({ next, status: 303, location: "/" });
  }
});

test("the sign-in page does not carry a next address of another site into its form", async () => {
  const page = await new WebClient(h.app).get(`/sign-in?next=${encodeURIComponent("//evil.example/")}`);
  expect(page.status).toBe(200);
  expect(page.text).not.toContain("evil.example");
});

test("a form token of another length than the session's is refused (403), not an error page, and nothing is created", async () => {
  await owner.browser.get("/settings/api-keys");
  const before = await keyCount();
  for (const csrf of ["x", "ft_short", "ft_" + "A".repeat(100), ""]) {
    const answer = await owner.browser.post("/settings/api-keys", { name: "Planted", mode: "live" }, { csrf });
    expect({ csrf, status: answer.status }).toEqual({ csrf, status: 403 });
    expect(answer.text).toContain("Request refused");
  }
  expect(await keyCount()).toBe(before);
  const browser = new WebClient(h.app);
  await browser.get("/sign-in");
  const signIn = await browser.post("/sign-in", { email: owner.email, password: PASSWORD }, { csrf: "short" });
  expect(signIn.status).toBe(403);
  expect(signIn.setCookies.has("certkeeper_session")).toBe(false);
});
