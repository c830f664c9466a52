/**
 * The sign-in page and signing out, at their edges (docs/settings.md, "Signing in and out" and
 * "Sessions"): a signed-in browser reloading the sign-in page is in; the sign-in form's token is one
 * the server made; signing out clears the cookie; a notice is only one of the server's own; removing
 * oneself signs one out; a form sent after the session ended goes back only to a page of this site.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { cookieAttributes, SITE, WebClient } from "./support/web_client.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

test("a signed-in browser opening the sign-in page (a reload after a link from another site) is sent to the dashboard", async () => {
  const user = await signedInUser(h, "member");
  const page = await user.browser.get("/sign-in");
  expect({ status: page.status, location: page.headers.get("location") }).toEqual({ status: 303, location: "/" });
});

test("a sign-in cookie the server did not make (wrong shape) is replaced by a new token, never echoed into the form", async () => {
  const page = await new WebClient(h.app).get("/sign-in", { cookie: "certkeeper_signin=planted" });
  expect(page.status).toBe(200);
  expect(page.text).not.toContain('value="planted"');
  const set = page.setCookies.get("certkeeper_signin");
  expect(set).toBeDefined();
  expect(set!).toMatch(/^certkeeper_signin=[0-9A-Za-z]{32};/);
  expect(cookieAttributes(set!)).toMatchObject({ httponly: true, samesite: "Strict" });
});

test("signing out clears the session cookie in the browser as well as ending the session", async () => {
  const user = await signedInUser(h, "member");
  await user.browser.get("/");
  const token = user.browser.cookies.get("certkeeper_session")!;
  const answer = await user.browser.post("/sign-out", {});
  expect({ status: answer.status, location: answer.headers.get("location") }).toEqual({ status: 303, location: "/sign-in?notice=signed-out" });
  const cleared = answer.setCookies.get("certkeeper_session");
  expect(cleared).toBeDefined();
  expect(cookieAttributes(cleared!)["max-age"]).toBe("0");
  const old = await new WebClient(h.app).get("/", { cookie: `certkeeper_session=${token}` });
  expect(old.status).toBe(303);
});

test("a notice name that is not one of the server's (an object's own property names) shows no notice", async () => {
  for (const notice of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
    const page = await new WebClient(h.app).get(`/sign-in?notice=${notice}`);
    expect({ notice, status: page.status }).toEqual({ notice, status: 200 });
    expect(page.text).not.toContain("[object Object]");
    expect(page.text).not.toContain("native code");
    expect(page.text).not.toContain('role="status"');
  }
  // A real notice is shown (as the check above would miss a page that shows none at all).
  const real = await new WebClient(h.app).get("/sign-in?notice=signed-out");
  expect(real.text).toContain("You are signed out.");
});

test("an owner who removes themselves is sent to sign in, signed out", async () => {
  const leaving = await signedInUser(h, "owner");
  await leaving.browser.get(`/settings/members/${leaving.id}/remove`);
  const answer = await leaving.browser.post(`/settings/members/${leaving.id}/remove`, {});
  expect({ status: answer.status, location: answer.headers.get("location") }).toEqual({ status: 303, location: "/sign-in?notice=signed-out" });
  expect(await h.store.users.get(leaving.id)).toBeNull();
  expect((await leaving.browser.get("/settings/account")).status).toBe(303);
});

test("a form sent after the session ended goes back to the page it was on only when that page is this site's", async () => {
  const browser = new WebClient(h.app);
  const own = await browser.post("/settings/api-keys", { name: "x", mode: "live" }, { csrf: "x", referer: `${SITE}/settings/api-keys` });
  expect(own.headers.get("location")).toBe("/sign-in?notice=session-ended&next=%2Fsettings%2Fapi-keys");
  const elsewhere = await browser.post("/settings/api-keys", { name: "x", mode: "live" }, { csrf: "x", referer: "http://evil.example/settings/members" });
  expect(elsewhere.headers.get("location")).toBe("/sign-in?notice=session-ended");
});
