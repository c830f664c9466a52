/**
 * The settings area's defences, in-process: cookie attributes, only a hash of a session stored, the
 * sign-in slowdown per email and per address, CSRF (origin and form token) on every change, roles
 * (403 pages), the last owner, a key shown once, escaping and the Content-Security-Policy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { createHarness, expectError, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { cookieAttributes, SITE, WebClient } from "./support/web_client.ts";
import { PASSWORD, shownKey, signedInUser, type WebUser } from "./support/web_users.ts";
import { HOUR, SECOND } from "../core/time.ts";

let h: Harness;
let owner: WebUser;

beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords });
  owner = await signedInUser(h, "owner");
});

afterAll(async () => {
  await h?.close();
});

const keyCount = async () => (await h.store.apiKeys.list(h.org.id)).length;

describe("session cookie", () => {
  test("is HttpOnly, SameSite=Strict, Path=/ and not Secure over plain HTTP; the sign-in form's cookie too", async () => {
    const browser = new WebClient(h.app);
    const form = await browser.get("/sign-in");
    expect(cookieAttributes(form.setCookies.get("certkeeper_signin")!)).toEqual({ path: "/", httponly: true, samesite: "Strict", "max-age": "86400" });
    const answer = await browser.post("/sign-in", { email: owner.email, password: PASSWORD });
    expect(cookieAttributes(answer.setCookies.get("certkeeper_session")!)).toEqual({ path: "/", httponly: true, samesite: "Strict", "max-age": "604800" });
    expect(cookieAttributes(answer.setCookies.get("certkeeper_signin")!)["max-age"]).toBe("0");
  });

  test("is Secure when the request came over HTTPS, through a proxy (X-Forwarded-Proto) or directly", async () => {
    const proxied = new WebClient(h.app, "http://localhost");
    const headers = { "x-forwarded-proto": "https" };
    // Behind a TLS proxy the browser is on https://localhost: a post from http://localhost is another origin.
    expect((await proxied.signIn(owner.email, PASSWORD, headers)).status).toBe(403);
    await proxied.get("/sign-in", headers);
    const viaProxy = await proxied.post("/sign-in", { email: owner.email, password: PASSWORD }, { headers, origin: "https://localhost" });
    expect(viaProxy.status).toBe(303);
    expect(cookieAttributes(viaProxy.setCookies.get("certkeeper_session")!)).toMatchObject({ secure: true, httponly: true, samesite: "Strict" });

    const direct = new WebClient(h.app, "https://localhost");
    const answerDirect = await direct.signIn(owner.email, PASSWORD);
    expect(answerDirect.status).toBe(303);
    expect(cookieAttributes(answerDirect.setCookies.get("certkeeper_session")!)).toMatchObject({ secure: true });
  });

  test("the store holds only the SHA-256 of the session token", async () => {
    const user = await signedInUser(h, "member");
    const token = user.browser.cookies.get("certkeeper_session")!;
    expect(token).toMatch(/^[0-9A-Za-z]{43}$/);
    expect(await h.store.sessions.get(token)).toBeNull();
    const session = await h.store.sessions.get(createHash("sha256").update(token).digest("hex"));
    expect(session).toMatchObject({ userId: user.id, organizationId: h.org.id });
    expect(JSON.stringify(session)).not.toContain(token);
  });

  test("a session ends after 12 hours unused, and 7 days after sign-in however much it is used", async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 1));
    const timed = await createHarness({ passwords: bunPasswords, clock });
    try {
      const user = await signedInUser(timed, "owner");
      clock.advance(11 * HOUR);
      expect((await user.browser.get("/")).status).toBe(200);
      clock.advance(11 * HOUR);
      expect((await user.browser.get("/")).status).toBe(200);
      clock.advance(12 * HOUR + SECOND);
      expect((await user.browser.get("/")).headers.get("location")).toBe("/sign-in");

      const busy = await signedInUser(timed, "owner");
      for (let hours = 0; hours < 7 * 24 - 10; hours += 10) {
        clock.advance(10 * HOUR);
        expect((await busy.browser.get("/")).status).toBe(200);
      }
      clock.advance(10 * HOUR);
      expect((await busy.browser.get("/")).headers.get("location")).toBe("/sign-in");
    } finally {
      await timed.close();
    }
  });
});

describe("sign-in failures and the slowdown", () => {
  test("a wrong password and an unknown email get the same answer, and no session", async () => {
    const wrongPassword = await new WebClient(h.app).signIn(owner.email, "not the password at all");
    const unknownEmail = await new WebClient(h.app).signIn(`nobody-${crypto.randomUUID()}@acme.test`, PASSWORD);
    for (const answer of [wrongPassword, unknownEmail]) {
      expect(answer.status).toBe(401);
      expect(answer.text).toContain('<div class="error" role="alert">The email address or the password is wrong.</div>');
      expect(answer.setCookies.has("certkeeper_session")).toBe(false);
    }
    // A user made without a password (keys only) cannot sign in either.
    const keysOnly = await h.core.services.admin.createUser({ organizationId: h.org.id, email: `keys-${crypto.randomUUID()}@acme.test`, role: "owner" });
    expect((await new WebClient(h.app).signIn(keysOnly.email, "")).status).toBe(401);
  });

  test("per email: after 5 failures the next attempt must wait, twice as long after each further failure, even with the right password", async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 1));
    const timed = await createHarness({ passwords: bunPasswords, clock });
    try {
      const { email } = await signedInUser(timed, "owner");
      // A fresh browser each time, as a guesser would use.
      const attempt = (password: string, address = "198.51.100.7") =>
        new WebClient(timed.app).signIn(email, password, { "x-forwarded-for": address });
      for (let i = 0; i < 5; i++) expect((await attempt("wrong password!")).status).toBe(401);

      const held = await attempt(PASSWORD);
      expect(held.status).toBe(429);
      expect(held.headers.get("retry-after")).toBe("2");
      expect(held.text).toContain("Too many failed sign-ins for this email address or from your network. Wait 2 seconds");
      expect(held.setCookies.has("certkeeper_session")).toBe(false);
      // From another address too: the count is the email's.
      expect((await attempt(PASSWORD, "203.0.113.9")).status).toBe(429);

      clock.advance(2 * SECOND);
      expect((await attempt("wrong password!")).status).toBe(401);
      const longer = await attempt(PASSWORD);
      expect({ status: longer.status, retryAfter: longer.headers.get("retry-after") }).toEqual({ status: 429, retryAfter: "4" });

      // Another user is not slowed down.
      const other = await signedInUser(timed, "member");
      expect(other.browser.cookies.has("certkeeper_session")).toBe(true);

      clock.advance(4 * SECOND);
      expect((await attempt(PASSWORD)).status).toBe(303);
      // Success forgets the email's failures.
      for (let i = 0; i < 5; i++) expect((await attempt("wrong password!")).status).toBe(401);
    } finally {
      await timed.close();
    }
  });

  test("per client address: after 20 failures from one address, any email from it must wait; other addresses are not held", async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 1));
    const timed = await createHarness({ passwords: bunPasswords, clock });
    try {
      const { email } = await signedInUser(timed, "owner");
      const from = (address: string) => ({ "x-forwarded-for": `10.9.8.7, ${address}` });
      const browser = new WebClient(timed.app);
      for (let i = 0; i < 20; i++) {
        expect((await browser.signIn(`guess-${i}@acme.test`, "wrong password!", from("192.0.2.50"))).status).toBe(401);
      }
      expect((await browser.signIn(email, PASSWORD, from("192.0.2.50"))).status).toBe(429);
      expect((await new WebClient(timed.app).signIn(email, PASSWORD, from("192.0.2.51"))).status).toBe(303);
      clock.advance(HOUR);
      expect((await new WebClient(timed.app).signIn(email, PASSWORD, from("192.0.2.50"))).status).toBe(303);
    } finally {
      await timed.close();
    }
  });
});

describe("CSRF: every change needs this site's origin and the session's form token", () => {
  test("a cross-site form post is refused with 403 and changes nothing", async () => {
    await owner.browser.get("/settings/api-keys");
    const before = await keyCount();
    for (const origin of ["http://evil.example", "null", "http://localhost:1234", "https://localhost"]) {
      const answer = await owner.browser.post("/settings/api-keys", { name: "Planted", mode: "live" }, { origin });
      expect({ origin, status: answer.status }).toEqual({ origin, status: 403 });
      expect(answer.text).toContain("Request refused");
    }
    const fetchSite = await owner.browser.post("/settings/api-keys", { name: "Planted", mode: "live" }, { headers: { "sec-fetch-site": "cross-site" } });
    expect(fetchSite.status).toBe(403);
    expect(await keyCount()).toBe(before);
  });

  test("a post without the form token, with another session's token, or with no Origin nor Referer is refused", async () => {
    const other = await signedInUser(h, "owner");
    await owner.browser.get("/settings/members");
    const before = await h.store.users.list(h.org.id);
    const form = { email: `planted-${crypto.randomUUID()}@acme.test`, role: "owner", password: "a long enough password" };
    expect((await owner.browser.post("/settings/members", form, { csrf: null })).status).toBe(403);
    expect((await owner.browser.post("/settings/members", form, { csrf: other.browser.formToken })).status).toBe(403);
    expect((await owner.browser.post("/settings/members", form, { csrf: "ft_" + "A".repeat(43) })).status).toBe(403);
    expect((await owner.browser.post("/settings/members", form, { origin: null })).status).toBe(403);
    expect(await h.store.users.list(h.org.id)).toEqual(before);
    // A Referer of this site stands in for a missing Origin.
    const withReferer = await owner.browser.post("/settings/members", form, { origin: null, referer: `${SITE}/settings/members` });
    expect(withReferer.status).toBe(303);
  });

  test("revoking, removing a member, adding a certificate and signing out are protected alike", async () => {
    const member = await signedInUser(h, "member");
    const key = (await h.store.apiKeys.list(h.org.id))[0]!;
    await owner.browser.get("/");
    const evil = { origin: "http://evil.example" };
    expect((await owner.browser.post(`/settings/api-keys/${key.id}/revoke`, {}, evil)).status).toBe(403);
    expect((await owner.browser.post(`/settings/members/${member.id}/remove`, {}, evil)).status).toBe(403);
    expect((await owner.browser.post(`/settings/members/${member.id}/role`, { role: "owner" }, { csrf: null })).status).toBe(403);
    expect((await owner.browser.post("/dashboard/certificates", { mode: "live", domain: "example.com" }, evil)).status).toBe(403);
    expect((await owner.browser.post("/sign-out", {}, evil)).status).toBe(403);
    expect((await h.store.apiKeys.get(key.id))?.revokedAt).toBe(key.revokedAt);
    expect((await h.store.users.get(member.id))?.role).toBe("member");
    expect((await owner.browser.get("/")).status).toBe(200);
  });

  test("the sign-in form is protected too (login CSRF): another site's post, or one without the form's cookie token, is refused", async () => {
    const browser = new WebClient(h.app);
    await browser.get("/sign-in");
    expect((await browser.post("/sign-in", { email: owner.email, password: PASSWORD }, { origin: "http://evil.example" })).status).toBe(403);
    expect((await browser.post("/sign-in", { email: owner.email, password: PASSWORD }, { csrf: "0".repeat(32) })).status).toBe(403);
    const fresh = new WebClient(h.app);
    expect((await fresh.post("/sign-in", { email: owner.email, password: PASSWORD }, { csrf: "0".repeat(32) })).status).toBe(403);
  });

  test("a session cookie does not authenticate the API: only keys do", async () => {
    const answer = await h.app.handle(
      new Request("http://localhost/v1/certificates", { headers: { cookie: `certkeeper_session=${owner.browser.cookies.get("certkeeper_session")}` } }),
    );
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as any).error.code).toBe("missing_api_key");
  });
});

describe("roles", () => {
  test("a member cannot create or revoke keys: 403 pages, and nothing changes", async () => {
    const member = await signedInUser(h, "member");
    const before = await keyCount();
    const create = await member.browser.post("/settings/api-keys", { name: "Sneaky", mode: "live" });
    expect(create.status).toBe(403);
    expect(create.text).toContain("<h1>Not allowed</h1>");
    expect(await keyCount()).toBe(before);

    const key = (await h.store.apiKeys.list(h.org.id)).find((k) => k.revokedAt === null)!;
    expect((await member.browser.get(`/settings/api-keys/${key.id}/revoke`)).status).toBe(403);
    expect((await member.browser.post(`/settings/api-keys/${key.id}/revoke`, {})).status).toBe(403);
    expect((await h.store.apiKeys.get(key.id))?.revokedAt).toBeNull();
  });

  test("a member cannot open or use the Members tab, nor add or remove certificates", async () => {
    const member = await signedInUser(h, "member");
    expect((await member.browser.get("/settings/members")).status).toBe(403);
    const form = { email: `x-${crypto.randomUUID()}@acme.test`, role: "member", password: "a long enough password" };
    expect((await member.browser.post("/settings/members", form)).status).toBe(403);
    expect((await member.browser.post(`/settings/members/${member.id}/role`, { role: "owner" })).status).toBe(403);
    expect((await h.store.users.get(member.id))?.role).toBe("member");
    const dashboard = await member.browser.get("/");
    expect(dashboard.text).not.toContain('action="/dashboard/certificates"');
    expect((await member.browser.post("/dashboard/certificates", { mode: "live", domain: "example.com" })).status).toBe(403);
    expect((await member.browser.post(`/dashboard/certificates/cert_${"x".repeat(20)}/remove`, { mode: "live" })).status).toBe(403);
  });

  test("an admin cannot add an owner, make someone owner, or change or remove an owner", async () => {
    const admin = await signedInUser(h, "admin");
    const colleague = await signedInUser(h, "member");
    const page = await admin.browser.get("/settings/members");
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<option value="owner"');
    const form = { email: `boss-${crypto.randomUUID()}@acme.test`, role: "owner", password: "a long enough password" };
    expect((await admin.browser.post("/settings/members", form)).status).toBe(403);
    expect((await admin.browser.post(`/settings/members/${colleague.id}/role`, { role: "owner" })).status).toBe(403);
    expect((await admin.browser.post(`/settings/members/${owner.id}/role`, { role: "member" })).status).toBe(403);
    expect((await admin.browser.post(`/settings/members/${owner.id}/remove`, {})).status).toBe(403);
    expect((await h.store.users.get(owner.id))?.role).toBe("owner");
    // What admins may do: manage members and admins.
    expect((await admin.browser.post(`/settings/members/${colleague.id}/role`, { role: "admin" })).status).toBe(303);
  });

  test("the last owner can be neither removed nor demoted; with a second owner, they can", async () => {
    const solo = await createHarness({ passwords: bunPasswords });
    try {
      // An organization of its own: the harness's has owners already.
      const org = await solo.core.services.admin.createOrganization({ name: "Solo" });
      const only = await signedInUser(solo, "owner", org.id);
      for (const role of ["admin", "member"]) {
        const demoted = await only.browser.post(`/settings/members/${only.id}/role`, { role });
        expect(demoted.status).toBe(400);
        expect(demoted.text).toContain(`is the organization&#39;s last owner and cannot be demoted: make another user an owner first.`);
      }
      const removed = await only.browser.post(`/settings/members/${only.id}/remove`, {});
      expect(removed.status).toBe(400);
      expect(removed.text).toContain("last owner and cannot be removed");
      expect((await solo.store.users.get(only.id))?.role).toBe("owner");

      const second = await signedInUser(solo, "owner", org.id);
      expect((await second.browser.post(`/settings/members/${only.id}/role`, { role: "admin" })).status).toBe(303);
      expect((await second.browser.post(`/settings/members/${second.id}/remove`, {})).status).toBe(400);
      expect((await solo.store.users.get(only.id))?.role).toBe("admin");
    } finally {
      await solo.close();
    }
  });

  test("another organization's keys, users and certificates are not found (404), never touched", async () => {
    const otherOrg = await h.core.services.admin.createOrganization({ name: "Other" });
    const stranger = await h.core.services.admin.createUser({ organizationId: otherOrg.id, email: `s-${crypto.randomUUID()}@other.test`, role: "owner" });
    const strangersKey = await h.core.services.admin.createApiKey({ userId: stranger.id, name: "theirs", mode: "live" });
    await owner.browser.get("/settings/api-keys");
    expect((await owner.browser.get(`/settings/api-keys/${strangersKey.record.id}/revoke`)).status).toBe(404);
    expect((await owner.browser.post(`/settings/api-keys/${strangersKey.record.id}/revoke`, {})).status).toBe(404);
    expect((await owner.browser.post(`/settings/members/${stranger.id}/remove`, {})).status).toBe(404);
    expect((await owner.browser.post(`/settings/members/${stranger.id}/role`, { role: "member" })).status).toBe(404);
    expect((await h.store.apiKeys.get(strangersKey.record.id))?.revokedAt).toBeNull();
    expect((await h.store.users.get(stranger.id))?.role).toBe("owner");
    expect((await owner.browser.get("/settings/api-keys")).text).not.toContain("theirs");
  });
});

describe("pages", () => {
  test("a new key is shown once: on the page that creates it, on no later page", async () => {
    await owner.browser.get("/settings/api-keys");
    const created = await owner.browser.post("/settings/api-keys", { name: "Shown once", mode: "live" });
    const key = shownKey(created.text);
    const secret = key.slice("ck_live_".length, -4);
    const id = (await h.store.apiKeys.list(h.org.id)).find((k) => k.name === "Shown once")!.id;
    for (const path of ["/settings/api-keys", "/", "/?mode=test", "/settings/members", `/settings/api-keys/${id}/revoke`]) {
      const page = await owner.browser.get(path);
      expect({ path, status: page.status }).toEqual({ path, status: 200 });
      expect(page.text).not.toContain(secret);
    }
    expect(JSON.stringify(await h.store.apiKeys.get(id))).not.toContain(secret);
  });

  test("what users type is escaped, and pages allow no outside or inline code", async () => {
    await owner.browser.get("/settings/api-keys");
    const created = await owner.browser.post("/settings/api-keys", { name: `<script>alert("x")</script>`, mode: "live" });
    expect(created.text).not.toContain("<script>alert");
    expect(created.text).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    const csp = created.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(created.headers.get("x-frame-options")).toBe("DENY");
    // No inline script, no style attribute, no event handler attribute, no outside address.
    expect(created.text).not.toMatch(/<script>|\sstyle=|\son[a-z]+=|https?:\/\//);
    for (const asset of ["/assets/certkeeper.css", "/assets/certkeeper.js"]) {
      const answer = await h.app.handle(new Request(SITE + asset));
      expect(answer.status).toBe(200);
      expect(await answer.text()).not.toMatch(/https?:\/\//);
    }
  });

  test("pages of signed-out visitors redirect to sign in; the API's unknown paths are still its JSON 404", async () => {
    const visitor = new WebClient(h.app);
    for (const path of ["/", "/settings/api-keys", "/settings/members"]) {
      expect((await visitor.get(path)).status).toBe(303);
    }
    const posted = await visitor.post("/settings/api-keys", { name: "x", mode: "live" }, { csrf: "x" });
    expect(posted.headers.get("location")).toStartWith("/sign-in");
    expectError(await h.request("GET", "/v1/nothing-here", { key: null }), 404, "not_found");
    expectError(await h.request("GET", "/nothing-here", { key: null }), 404, "not_found");
  });
});
