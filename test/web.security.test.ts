/**
 * The settings area's defences, in-process: cookie attributes, only a hash of a session stored, the
 * sign-in slowdown per email and per address, CSRF (origin and form token) on every change, roles
 * (403 pages), the last owner, a key shown once, escaping and the Content-Security-Policy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { cookieAttributes, listening, SITE, WebClient } from "./support/web_client.ts";
import { clientAddress } from "../adapters/web/mod.ts";
import { addressBlock } from "../core/net/mod.ts";
import { networkInterfaces } from "node:os";
import { PASSWORD, shownKey, signedInUser, type WebUser } from "./support/web_users.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import type { UserRecord } from "../core/base/records.ts";
import { HOUR, MINUTE, SECOND } from "../core/base/time.ts";

let h: Harness;
let owner: WebUser;

beforeAll(async () => {
  // The product's own hasher here; the other harnesses of this file, which sign in dozens of times
  // to count failures, sessions and roles, use quickPasswords (test/support/passwords.ts).
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
    const timed = await createHarness({ passwords: quickPasswords, clock });
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

  test("two processes whose clocks are 15 minutes apart, taking turns: the session goes on and keeps its sign-in time", async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 1));
    const timed = await createHarness({ passwords: quickPasswords, clock });
    try {
      const user = await signedInUser(timed, "owner");
      const id = sessionId(user);
      const signedIn = (await timed.store.sessions.get(id))!.createdAt;
      for (let turn = 0; turn < 10; turn++) {
        clock.advance(6 * MINUTE + 15 * MINUTE); // the process ahead
        expect((await user.browser.get("/")).status).toBe(200);
        clock.advance(6 * MINUTE - 15 * MINUTE); // the other, 15 minutes behind, 6 minutes later
        expect((await user.browser.get("/")).status).toBe(200);
      }
      expect((await timed.store.sessions.get(id))!.createdAt).toBe(signedIn);
    } finally {
      await timed.close();
    }
  });

  test("after the wall clock is set back a day, each session used before the step ends at its next use; a new sign-in lasts as usual", async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 1));
    const timed = await createHarness({ passwords: quickPasswords, clock });
    try {
      const away = await signedInUser(timed, "owner");
      const busy = await signedInUser(timed, "owner");
      clock.advance(HOUR);
      expect((await busy.browser.get("/")).status).toBe(200);
      // NTP: the clock had run a day ahead. How long each session then lay unused cannot be known.
      clock.set(clock.now() - DAY);
      expect((await busy.browser.get("/")).headers.get("location")).toBe("/sign-in");
      clock.advance(10 * HOUR);
      expect((await away.browser.get("/")).headers.get("location")).toBe("/sign-in");
      for (const user of [away, busy]) expect(await timed.store.sessions.get(sessionId(user))).toBeNull();
      // Signed in again on the corrected clock: 12 hours unused end it, as ever.
      const again = await signedInUser(timed, "owner");
      clock.advance(11 * HOUR);
      expect((await again.browser.get("/")).status).toBe(200);
      clock.advance(12 * HOUR + SECOND);
      expect((await again.browser.get("/")).headers.get("location")).toBe("/sign-in");
    } finally {
      await timed.close();
    }
  });
});

describe("where signing in leads", () => {
  test("a next address holding what no header can carry (NUL, €) leads home with a session, never a 500", async () => {
    for (const next of ["/€", "/\u0000", "/a b"]) {
      const browser = new WebClient(h.app);
      expect((await browser.get(`/sign-in?next=${encodeURIComponent(next)}`)).status).toBe(200);
      const answer = await browser.post("/sign-in", { email: owner.email, password: PASSWORD, next });
      expect({ next, status: answer.status, location: answer.headers.get("location"), session: answer.setCookies.has("certkeeper_session") }).toEqual({
        next,
        status: 303,
        location: "/",
        session: true,
      });
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
    const timed = await createHarness({ passwords: quickPasswords, clock });
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

  test("per client address behind a proxy on this host: after 20 failures from one X-Forwarded-For address, any email from it must wait; other addresses are not held", async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 1));
    const timed = await createHarness({ passwords: quickPasswords, clock });
    // Over real HTTP on 127.0.0.1: the peer is loopback, as a reverse proxy on the same host is.
    const server = listening(timed.app);
    try {
      const { email } = await signedInUser(timed, "owner");
      const from = (address: string) => ({ "x-forwarded-for": `10.9.8.7, ${address}` });
      const browser = server.browser();
      for (let i = 0; i < 20; i++) {
        expect((await browser.signIn(`guess-${i}@acme.test`, "wrong password!", from("192.0.2.50"))).status).toBe(401);
      }
      const held = await browser.signIn(email, PASSWORD, from("192.0.2.50"));
      expect({ status: held.status, retryAfter: held.headers.get("retry-after") }).toEqual({ status: 429, retryAfter: "2" });
      expect((await server.browser().signIn(email, PASSWORD, from("192.0.2.51"))).status).toBe(303);
      clock.advance(HOUR);
      expect((await server.browser().signIn(email, PASSWORD, from("192.0.2.50"))).status).toBe(303);
    } finally {
      await server.close();
      await timed.close();
    }
  });

  test("an IPv6 client is counted by its /64: 20 failures from addresses across one /64 hold the whole /64, not another", async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 1));
    const timed = await createHarness({ passwords: quickPasswords, clock });
    const server = listening(timed.app);
    try {
      const { email } = await signedInUser(timed, "owner");
      const from = (address: string) => ({ "x-forwarded-for": address });
      // A new address of the same /64 at every attempt, as any host on it may take.
      for (let i = 0; i < 20; i++) {
        expect((await server.browser().signIn(`guess-${i}@acme.test`, "wrong password!", from(`2001:db8:1:2::${(i + 1).toString(16)}`))).status).toBe(401);
      }
      const held = await server.browser().signIn(email, PASSWORD, from("2001:db8:1:2:ffff::99"));
      expect(held.status).toBe(429);
      expect((await server.browser().signIn(email, PASSWORD, from("2001:db8:1:3::1"))).status).toBe(303);
    } finally {
      await server.close();
      await timed.close();
    }
  });

  test("an address block is an IPv4 address, an IPv6 /64, an IPv4-mapped address's IPv4", () => {
    expect(addressBlock("192.0.2.7")).toBe("192.0.2.7");
    expect(addressBlock("2001:DB8:1:2:a:b:c:d")).toBe("2001:db8:1:2::/64");
    expect(addressBlock("2001:db8:1:2::1")).toBe(addressBlock("2001:db8:1:2:ffff::99"));
    expect(addressBlock("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(addressBlock("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressBlock("not an address")).toBe("not an address");
  });

  test("X-Forwarded-For is trusted only from a loopback peer: a peer on a private network or the internet is counted as itself", () => {
    const request = (forwardedFor?: string) =>
      new Request(`${SITE}/sign-in`, { method: "POST", headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor } });
    // A reverse proxy on the same host: the entry it added (the last) is the client.
    for (const peer of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) {
      expect(clientAddress(request("198.51.100.1, 203.0.113.9"), peer)).toBe("203.0.113.9");
      expect(clientAddress(request(), peer)).toBe(peer);
    }
    // Docker's userland proxy (172.17.0.1), an office LAN, a unique-local IPv6 peer, the internet:
    // whatever the client writes in the header, it is counted by the address it connects from.
    for (const peer of ["10.1.2.3", "172.17.0.1", "172.31.255.254", "192.168.1.20", "fd12:3456::1", "fc00::7", "::ffff:10.0.0.2", "203.0.113.77", "2001:db8::5"]) {
      expect(clientAddress(request("192.0.2.200"), peer)).toBe(peer);
      expect(clientAddress(request("127.0.0.1, 192.0.2.201"), peer)).toBe(peer);
    }
    // No peer known (the app called in-process): the header names nobody.
    expect(clientAddress(request("192.0.2.202"), undefined)).toBeUndefined();
  });

  // This host's own address on a network (Docker's bridge, a LAN): a connection to it is not loopback.
  const networkAddress = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === "IPv4" && !entry.internal)?.address;

  test.skipIf(!networkAddress)("over a connection that is not loopback, X-Forwarded-For is ignored: a client cannot pick a fresh counted address per attempt", async () => {
    const clock = new FakeClock(Date.UTC(2031, 0, 1));
    const timed = await createHarness({ passwords: quickPasswords, clock });
    const server = listening(timed.app, networkAddress!);
    try {
      const { email } = await signedInUser(timed, "owner");
      // A new forwarded address on every attempt: were the header believed, each would be a fresh count.
      for (let i = 0; i < 20; i++) {
        const answer = await server.browser().signIn(`guess-${i}@acme.test`, "wrong password!", { "x-forwarded-for": `192.0.2.${i + 1}` });
        expect(answer.status).toBe(401);
      }
      const held = await server.browser().signIn(email, PASSWORD, { "x-forwarded-for": "192.0.2.99" });
      expect(held.status).toBe(429);
    } finally {
      await server.close();
      await timed.close();
    }
  });
});

/**
 * A form body that counts what the server pulls from it: `size` bytes in 64 KiB chunks, produced only
 * when read (highWaterMark 0), so `pulled` is exactly what the server read.
 */
function countedBody(size: number) {
  const chunk = new TextEncoder().encode("a=".padEnd(64 * 1024, "x"));
  const body = { pulled: 0, cancelled: false, stream: undefined as unknown as ReadableStream<Uint8Array> };
  body.stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (body.pulled >= size) return controller.close();
        body.pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
      cancel() {
        body.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return body;
}

describe("oversized forms are refused without being read whole", () => {
  const MB = 1024 * 1024;
  const post = (path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
    h.app.handle(new Request(SITE + path, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", origin: SITE, ...headers } }));

  test("a sign-in post declaring 100 MB is answered 413 (a page) before a byte of it is read", async () => {
    const body = countedBody(8 * MB);
    const answer = await post("/sign-in", body.stream, { "content-length": String(100 * MB) });
    expect(answer.status).toBe(413);
    expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await answer.text()).toContain("<h1>The form is too large</h1>");
    expect(body.pulled).toBe(0);
  });

  test("a chunked sign-in post of 8 MB is answered 413 once it passes 64 KiB: the stream is cancelled, not read to its end", async () => {
    const body = countedBody(8 * MB);
    const answer = await post("/sign-in", body.stream, {});
    expect(answer.status).toBe(413);
    expect(await answer.text()).toContain("<h1>The form is too large</h1>");
    expect(body.cancelled).toBe(true);
    expect(body.pulled).toBeLessThanOrEqual(256 * 1024);
  });

  test("a signed-in user's oversized form posts (declared or chunked) are answered 413 the same way, and change nothing", async () => {
    await owner.browser.get("/settings/api-keys");
    const before = await keyCount();
    const cookie = [...owner.browser.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const declared = countedBody(8 * MB);
    const answerDeclared = await post("/settings/api-keys", declared.stream, { cookie, "content-length": String(100 * MB) });
    expect(answerDeclared.status).toBe(413);
    expect(await answerDeclared.text()).toContain("<h1>The form is too large</h1>");
    expect(declared.pulled).toBe(0);

    const chunked = countedBody(8 * MB);
    const answerChunked = await post("/settings/api-keys", chunked.stream, { cookie });
    expect(answerChunked.status).toBe(413);
    expect(chunked.cancelled).toBe(true);
    expect(chunked.pulled).toBeLessThanOrEqual(256 * 1024);
    expect(await keyCount()).toBe(before);
  });

  test("a form just under 64 KiB is still read", async () => {
    await owner.browser.get("/settings/api-keys");
    const answer = await owner.browser.post("/settings/api-keys", { name: "Padded", mode: "live", padding: "x".repeat(60 * 1024) });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain("Your new API key “Padded”");
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

  test("a field sent twice is read by its first value: a right token after a wrong one is refused, a second name is not taken", async () => {
    await owner.browser.get("/settings/api-keys");
    const right = owner.browser.formToken!;
    const cookie = [...owner.browser.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const raw = (body: string) =>
      h.app.handle(new Request(`${SITE}/settings/api-keys`, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", origin: SITE, cookie } }));
    const before = await keyCount();
    const wrongFirst = await raw(`_csrf=${"ft_" + "A".repeat(43)}&name=Twice&mode=live&_csrf=${encodeURIComponent(right)}`);
    expect(wrongFirst.status).toBe(403);
    expect(await keyCount()).toBe(before);
    const namedTwice = await raw(`_csrf=${encodeURIComponent(right)}&name=First&mode=live&name=Second&_csrf=wrong`);
    expect(namedTwice.status).toBe(200);
    expect(await namedTwice.text()).toContain("Your new API key “First”");
    expect((await h.store.apiKeys.list(h.org.id)).map((key) => key.name)).not.toContain("Second");
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
    // Nor is the confirmation shown, as for an owner's API key: refused before it is asked.
    const confirm = await admin.browser.get(`/settings/members/${owner.id}/remove`);
    expect({ status: confirm.status, form: confirm.text.includes(`action="/settings/members/${owner.id}/remove"`) }).toEqual({ status: 403, form: false });
    expect((await h.store.users.get(owner.id))?.role).toBe("owner");
    // What admins may do: manage members and admins.
    expect((await admin.browser.post(`/settings/members/${colleague.id}/role`, { role: "admin" })).status).toBe(303);
  });

  test("an admin's change or removal of a member whom an owner made an owner meanwhile changes nothing", async () => {
    // The store answers the member's role as it was when the admin's request read it; an owner's
    // promotion lands before the admin's write.
    const store = createMemoryStore();
    const stale = new Map<string, UserRecord>();
    const get = store.users.get.bind(store.users);
    store.users.get = async (id) => stale.get(id) ?? get(id);
    const raced = await createHarness({ store, passwords: quickPasswords });
    try {
      const admin = await signedInUser(raced, "admin");
      const colleague = await signedInUser(raced, "member");
      stale.set(colleague.id, (await get(colleague.id))!);
      await store.users.update(colleague.id, { role: "owner" });
      const demoted = await admin.browser.post(`/settings/members/${colleague.id}/role`, { role: "member" });
      expect({ status: demoted.status, said: demoted.text.includes("role changed meanwhile") }).toEqual({ status: 400, said: true });
      expect((await admin.browser.post(`/settings/members/${colleague.id}/remove`, {})).status).toBe(400);
      expect(await get(colleague.id)).toMatchObject({ role: "owner" });
    } finally {
      await raced.close();
    }
  });

  test("an admin cannot revoke an owner's API keys: shown read-only, refused with 403; members' and admins' keys they may revoke", async () => {
    const admin = await signedInUser(h, "admin");
    const ownersKey = await h.makeKey("owner");
    const membersKey = await h.makeKey("member");
    const list = await admin.browser.get("/settings/api-keys");
    const row = (id: string) => new RegExp(`<tr data-key-id="${id}">([\\s\\S]*?)</tr>`).exec(list.text)![1]!;
    expect(row(ownersKey.id)).not.toContain("/revoke");
    expect(row(ownersKey.id)).toContain("only owners may revoke it");
    expect(row(h.keys.admin.id)).toContain(`href="/settings/api-keys/${h.keys.admin.id}/revoke"`);
    expect(row(membersKey.id)).toContain(`href="/settings/api-keys/${membersKey.id}/revoke"`);

    expect((await admin.browser.get(`/settings/api-keys/${ownersKey.id}/revoke`)).status).toBe(403);
    const refusedPost = await admin.browser.post(`/settings/api-keys/${ownersKey.id}/revoke`, {});
    expect(refusedPost.status).toBe(403);
    expect(refusedPost.text).toContain("Only owners may revoke an owner&#39;s API keys.");
    // Core refuses it too, whichever adapter asks.
    const adminRecord = (await h.store.users.get(admin.id))!;
    await expect(h.core.accounts.apiKeys.revoke(adminRecord, ownersKey.id)).rejects.toMatchObject({ code: "permission_denied" });
    expect((await h.store.apiKeys.get(ownersKey.id))?.revokedAt).toBeNull();
    expect((await h.request("GET", "/v1/certificates", { key: ownersKey.key })).status).toBe(200);

    expect((await admin.browser.post(`/settings/api-keys/${membersKey.id}/revoke`, {})).status).toBe(303);
    expectError(await h.request("GET", "/v1/certificates", { key: membersKey.key }), 401, "expired_api_key");
    // An owner may revoke it.
    const ownersList = await owner.browser.get("/settings/api-keys");
    expect(ownersList.text).toContain(`href="/settings/api-keys/${ownersKey.id}/revoke"`);
    expect((await owner.browser.post(`/settings/api-keys/${ownersKey.id}/revoke`, {})).status).toBe(303);
    expectError(await h.request("GET", "/v1/certificates", { key: ownersKey.key }), 401, "expired_api_key");
  });

  test("the last owner can be neither removed nor demoted; with a second owner, they can", async () => {
    const solo = await createHarness({ passwords: quickPasswords });
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

describe("dashboard rate limit", () => {
  test("each dashboard action counts against the organization's requests per minute, as a key's requests do: past it, a 429 page with Retry-After, and no TLS connection", async () => {
    const clock = new FakeClock(Date.now());
    const limited = await createHarness({ passwords: quickPasswords, clock, limits: { requestsPerMinute: 5 } });
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 40 * DAY) });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    try {
      // Signing in shows the dashboard: 1 of the 5.
      const user = await signedInUser(limited, "owner");
      const add = (i: number) =>
        user.browser.post("/dashboard/certificates", { mode: "live", domain: `burst-${i}.${TEST_DOMAIN}`, port: String(server.port), name: "" });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => add(i)));
      expect(answers.filter((answer) => answer.status === 303).length).toBe(4);
      expect(answers.filter((answer) => answer.status === 429).length).toBe(16);
      expect(server.connections()).toBe(4);
      const refused = answers.find((answer) => answer.status === 429)!;
      expect(refused.headers.get("retry-after")).toBe("60");
      expect(refused.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(refused.text).toContain("<h1>Too many requests</h1>");
      expect(refused.text).toContain("your organization allows 5 per minute");
      // The dashboard is refused too until the wait is over: the page does not send the user there.
      expect(refused.text).not.toContain(">Back to the dashboard<");
      expect(expectData(await limited.request("GET", "/v1/certificates"), 200).length).toBe(4);

      // Reading counts too, in either mode, and so does a removal.
      expect((await user.browser.get("/")).status).toBe(429);
      expect((await user.browser.get("/?mode=test")).status).toBe(429);
      const [first] = expectData(await limited.request("GET", "/v1/certificates"), 200);
      expect((await user.browser.post(`/dashboard/certificates/${first.id}/remove`, { mode: "live" })).status).toBe(429);
      expect(expectData(await limited.request("GET", "/v1/certificates"), 200).length).toBe(4);

      // Another user of the organization has a count of their own.
      await signedInUser(limited, "owner");

      clock.advance(60 * SECOND);
      expect((await user.browser.get("/")).status).toBe(200);
      expect((await add(99)).status).toBe(303);
      expect(server.connections()).toBe(5);
    } finally {
      await server.close();
      await limited.close();
    }
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

/** The stored id of a signed-in user's session: the SHA-256 of the cookie's token. */
function sessionId(user: WebUser): string {
  return createHash("sha256").update(user.browser.cookies.get("certkeeper_session")!).digest("hex");
}
