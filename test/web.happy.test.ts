/**
 * The settings area and dashboard (SPEC §5, adapters/web over core/accounts), in-process on a libSQL
 * file: what people do in the browser, and that the API sees its effects at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quickPasswords } from "./support/passwords.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { WebClient } from "./support/web_client.ts";
import { PASSWORD, shownKey, signedInUser, type WebUser } from "./support/web_users.ts";
import { startServe, tempWorkspace } from "./support/cli.ts";

let h: Harness;
let owner: WebUser;

beforeAll(async () => {
  h = await createHarness({ store: "libsql", passwords: quickPasswords });
  owner = await signedInUser(h, "owner");
});

afterAll(async () => {
  await h?.close();
});

describe("sign-in", () => {
  test("GET /sign-in shows a form with labelled email and password fields", async () => {
    const page = await new WebClient(h.app).get("/sign-in");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.text).toContain('<label for="email">Email</label>');
    expect(page.text).toMatch(/<input id="email" name="email" type="email" autocomplete="username" required/);
    expect(page.text).toContain('<label for="password">Password</label>');
    expect(page.text).toMatch(/<input id="password" name="password" type="password" autocomplete="current-password" required/);
  });

  test("the right email and password open a session that lands on the dashboard, email matched case-insensitively", async () => {
    const { email } = await signedInUser(h, "admin");
    const browser = new WebClient(h.app);
    const answer = await browser.signIn(email.toUpperCase(), PASSWORD);
    expect(answer.status).toBe(303);
    const dashboard = await browser.follow(answer);
    expect(dashboard.status).toBe(200);
    expect(dashboard.text).toContain("<h1>Dashboard</h1>");
    expect(dashboard.text).toContain(`${email} (admin)`);
  });

  test("a page asked for while signed out is shown after signing in", async () => {
    const { email } = await signedInUser(h, "admin");
    const browser = new WebClient(h.app);
    const away = await browser.get("/settings/members");
    expect({ status: away.status, location: away.headers.get("location") }).toEqual({ status: 303, location: "/sign-in?next=%2Fsettings%2Fmembers" });
    const form = await browser.follow(away);
    expect(form.text).toContain('name="next" value="/settings/members"');
    const answer = await browser.post("/sign-in", { email, password: PASSWORD, next: "/settings/members" });
    expect(answer.headers.get("location")).toBe("/settings/members");
  });

  test("signing out ends the session: the old cookie opens no page any more", async () => {
    const user = await signedInUser(h, "member");
    const cookie = user.browser.cookies.get("certkeeper_session")!;
    const answer = await user.browser.post("/sign-out", {});
    expect({ status: answer.status, location: answer.headers.get("location") }).toEqual({ status: 303, location: "/sign-in?notice=signed-out" });
    expect((await user.browser.follow(answer)).text).toContain("You are signed out.");
    const replay = await h.app.handle(new Request("http://localhost/", { headers: { cookie: `certkeeper_session=${cookie}` } }));
    expect({ status: replay.status, location: replay.headers.get("location") }).toEqual({ status: 303, location: "/sign-in" });
  });
});

describe("first start", () => {
  test("serve on an empty database tells the operator how to make the first owner, and where to sign in", async () => {
    const ws = tempWorkspace("certkeeper-first-");
    const serve = await startServe({ env: { ...ws.env, CERTKEEPER_LOG_LEVEL: "info" }, cwd: ws.dir });
    try {
      const deadline = Date.now() + 5000;
      while (!serve.output().stdout.includes("The database is empty") && Date.now() < deadline) await Bun.sleep(50);
      const line = serve.output().stdout.split("\n").find((l) => l.includes("The database is empty"));
      expect(line).toBeDefined();
      const message = JSON.parse(line!);
      expect(message.msg).toContain("then sign in");
      // The commands name the database this server uses (a temporary one here), and the organization by its name.
      expect(message.commands).toContain(
        `CERTKEEPER_DATABASE_URL='file:${ws.databasePath}' npm run --silent certkeeper -- user create --org 'My org' --email you@example.com --role owner --password -`,
      );
      expect(message.signIn).toBe(`${serve.url}/sign-in`);
      const signIn = await fetch(`${serve.url}/sign-in`);
      expect(signIn.status).toBe(200);
      const page = await signIn.text();
      expect(page).toContain("Sign in to certkeeper");
      // The command the page shows works after npm install alone (no bun on PATH).
      expect(page).toContain("npm run --silent certkeeper -- user set-password --email you@example.com");
      expect(page).not.toContain("bun run");
    } finally {
      expect(await serve.stop()).toBe(0);
      ws.cleanup();
    }
  });
});

describe("sessions across server processes", () => {
  test("a session started by one process is honoured by another on the same database, and signing out in one ends it in both", async () => {
    const dir = mkdtempSync(join(tmpdir(), "certkeeper-web-"));
    const url = `file:${join(dir, "shared.db")}`;
    const first = await createHarness({ store: await openLibsqlStore({ url }), passwords: quickPasswords });
    const second = await createHarness({ store: await openLibsqlStore({ url }), passwords: quickPasswords });
    try {
      const user = await signedInUser(first, "owner");
      const elsewhere = new WebClient(second.app);
      elsewhere.cookies.set("certkeeper_session", user.browser.cookies.get("certkeeper_session")!);
      const page = await elsewhere.get("/settings/api-keys");
      expect(page.status).toBe(200);
      expect(page.text).toContain(`${user.email} (owner)`);

      // The form token is the session's, so a form of one process is good in the other.
      expect((await elsewhere.post("/sign-out", {})).status).toBe(303);
      expect((await user.browser.get("/")).headers.get("location")).toBe("/sign-in");
    } finally {
      await second.close();
      await first.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("API Keys tab", () => {
  test("an owner creates a key: shown once with a copy button and a warning, and it works on the API at once", async () => {
    await owner.browser.get("/settings/api-keys");
    const created = await owner.browser.post("/settings/api-keys", { name: "Production deploy", mode: "live" });
    expect(created.status).toBe(200);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const key = shownKey(created.text);
    expect(key).toStartWith("ck_live_");
    expect(created.text).toContain("It will not be shown again");
    expect(created.text).toContain('data-copy="new-key"');
    expect(created.text).toContain("Your new API key “Production deploy”");

    const list = await h.request("GET", "/v1/certificates", { key });
    expect(expectData(list, 200)).toEqual([]);
  });

  test("a test key is made with the test prefix and sees test data only", async () => {
    const created = await owner.browser.post("/settings/api-keys", { name: "Local development", mode: "test" });
    const key = shownKey(created.text);
    expect(key).toStartWith("ck_test_");
    const [view] = (await h.core.accounts.apiKeys.list((await h.store.users.get(owner.id))!)).filter((k) => k.name === "Local development");
    expect(view).toMatchObject({ mode: "test", prefix: "ck_test_", last4: key.slice(-4), createdBy: owner.email, revokedAt: null });
  });

  test("the list shows name, mode, the masked key, creator, created and last used; revoking asks first, then the API refuses the key", async () => {
    const created = await owner.browser.post("/settings/api-keys", { name: "Nightly report", mode: "live" });
    const key = shownKey(created.text);
    expect((await h.request("GET", "/v1/certificates", { key })).status).toBe(200);
    await h.core.services.authenticator.flushUsage();

    const list = await owner.browser.get("/settings/api-keys");
    const id = (await h.store.apiKeys.list(h.org.id)).find((k) => k.name === "Nightly report")!.id;
    const row = new RegExp(`<tr data-key-id="${id}">([\\s\\S]*?)</tr>`).exec(list.text)![1]!;
    expect(row).toContain('<td data-label="Name">Nightly report</td>');
    expect(row).toContain('<span class="badge mode-live">live</span>');
    expect(row).toContain(`ck_live_…${key.slice(-4)}`);
    expect(row).toContain(`<td data-label="Created by">${owner.email}</td>`);
    expect(row).toMatch(/<td data-label="Created">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/td><td data-label="Last used">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/td>/);
    expect(row).toContain("active");

    const confirm = await owner.browser.get(`/settings/api-keys/${id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain("Revoke API key “Nightly report”?");
    expect(confirm.text).toContain(`<form method="post" action="/settings/api-keys/${id}/revoke">`);
    // Looking at the confirmation revokes nothing.
    expect((await h.request("GET", "/v1/certificates", { key })).status).toBe(200);

    const revoked = await owner.browser.post(`/settings/api-keys/${id}/revoke`, {});
    expect({ status: revoked.status, location: revoked.headers.get("location") }).toEqual({ status: 303, location: "/settings/api-keys?notice=key-revoked" });
    expectError(await h.request("GET", "/v1/certificates", { key }), 401, "expired_api_key");
    const after = await owner.browser.follow(revoked);
    expect(after.text).toContain("The API key was revoked");
    expect(new RegExp(`<tr data-key-id="${id}">[\\s\\S]*?revoked \\d{4}`).test(after.text)).toBe(true);
  });

  test("an admin may create and revoke keys too", async () => {
    const admin = await signedInUser(h, "admin");
    await admin.browser.get("/settings/api-keys");
    const key = shownKey((await admin.browser.post("/settings/api-keys", { name: "Admin key", mode: "live" })).text);
    const id = (await h.store.apiKeys.list(h.org.id)).find((k) => k.name === "Admin key")!.id;
    expect((await admin.browser.post(`/settings/api-keys/${id}/revoke`, {})).status).toBe(303);
    expectError(await h.request("GET", "/v1/certificates", { key }), 401, "expired_api_key");
  });

  test("a member sees the keys but no create form and no revoke link", async () => {
    const member = await signedInUser(h, "member");
    const page = await member.browser.get("/settings/api-keys");
    expect(page.status).toBe(200);
    expect(page.text).toContain("Production deploy");
    expect(page.text).not.toContain('action="/settings/api-keys"');
    expect(page.text).not.toContain("/revoke");
    expect(page.text).toContain("As a member you can see the keys but not create or revoke them.");
    // And the Members tab is not offered.
    expect(page.text).not.toContain('href="/settings/members"');
  });
});

describe("Members tab", () => {
  test("an owner adds a user with a role and an initial password, who can then sign in with that role", async () => {
    await owner.browser.get("/settings/members");
    const email = `new-${crypto.randomUUID().slice(0, 8)}@acme.test`;
    const added = await owner.browser.post("/settings/members", { email, role: "admin", password: "a good initial password" });
    expect({ status: added.status, location: added.headers.get("location") }).toEqual({ status: 303, location: "/settings/members?notice=member-added" });
    const list = await owner.browser.follow(added);
    expect(list.text).toContain(`<td data-label="Email">${email}</td><td data-label="Role"><span class="badge">admin</span></td>`);

    const browser = new WebClient(h.app);
    const dashboard = await browser.follow(await browser.signIn(email, "a good initial password"));
    expect(dashboard.text).toContain(`${email} (admin)`);
  });

  test("a new role applies at once, to the user's API keys too", async () => {
    const user = await signedInUser(h, "admin");
    const key = shownKey((await user.browser.post("/settings/api-keys", { name: "Writer", mode: "live" })).text);
    expectError(await h.request("POST", `/v1/certificates/cert_${"x".repeat(20)}/check`, { key }), 404, "certificate_not_found");

    await owner.browser.get("/settings/members");
    const changed = await owner.browser.post(`/settings/members/${user.id}/role`, { role: "member" });
    expect(changed.headers.get("location")).toBe("/settings/members?notice=role-changed");
    expect((await h.store.users.get(user.id))?.role).toBe("member");
    expectError(await h.request("POST", `/v1/certificates/cert_${"x".repeat(20)}/check`, { key }), 403, "permission_denied");
    expect((await user.browser.get("/settings/members")).status).toBe(403);
  });

  test("removing a user asks first, then revokes their keys (401 expired_api_key) and ends their sessions", async () => {
    const user = await signedInUser(h, "admin");
    const key = shownKey((await user.browser.post("/settings/api-keys", { name: "Leaving soon", mode: "live" })).text);
    expect((await h.request("GET", "/v1/certificates", { key })).status).toBe(200);

    const confirm = await owner.browser.get(`/settings/members/${user.id}/remove`);
    expect(confirm.text).toContain(`Remove ${user.email}?`);
    expect(confirm.text).toContain("every API key they created is revoked at once");
    const removed = await owner.browser.post(`/settings/members/${user.id}/remove`, {});
    expect(removed.headers.get("location")).toBe("/settings/members?notice=member-removed");

    expectError(await h.request("GET", "/v1/certificates", { key }), 401, "expired_api_key");
    expect((await user.browser.get("/")).headers.get("location")).toBe("/sign-in");
    const list = await owner.browser.get("/settings/api-keys");
    expect(list.text).toMatch(/<td data-label="Name">Leaving soon<\/td>[\s\S]*?removed user[\s\S]*?revoked/);
  });
});

describe("dashboard", () => {
  let server: TlsTestServer;
  const domain = `dashboard.${TEST_DOMAIN}`;

  beforeAll(async () => {
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + 40 * DAY + 3_600_000) });
    server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  });

  afterAll(async () => {
    await server?.close();
  });

  test("adds a certificate through the API's own operation, lists it with status, days left, issuer and last check, then removes it", async () => {
    await owner.browser.get("/");
    const added = await owner.browser.post("/dashboard/certificates", { mode: "live", domain: domain.toUpperCase(), port: String(server.port), name: "" });
    const [certificate] = expectData(await h.request("GET", `/v1/certificates?domain=${domain}`), 200);
    // Added, the user lands on its page, which opens with what its state means.
    expect({ status: added.status, location: added.headers.get("location") }).toEqual({
      status: 303,
      location: `/certificates/${certificate.id}?mode=live&notice=certificate-added`,
    });
    expect(certificate).toMatchObject({ domain, port: server.port, name: domain, status: "valid", daysUntilExpiry: 40 });
    expect((await owner.browser.follow(added)).text).toContain("The certificate was added and is now monitored.");
    const page = await owner.browser.get("/?mode=live");
    const row = new RegExp(`<tr data-certificate-id="${certificate.id}"[^>]*>([\\s\\S]*?)</tr>`).exec(page.text)![1]!;
    expect(row).toContain('<span class="badge status-valid">valid</span>');
    expect(row).toContain(`${domain}:${server.port}`);
    // The expiry, and the renewal deadline (CONTRACT §18: "The dashboard shows the renewal state and deadline").
    expect(row).toMatch(/<td data-label="Expires" data-days="40">in 40 days<div class="muted small">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/div><div class="muted small" data-renewal-deadline="[^"]+">renew by \d{4}-\d\d-\d\d \d\d:\d\d UTC<\/div><\/td>/);
    expect(row).toContain('<td data-label="Issuer">certkeeper intermediates</td><td data-label="Last check">just now</td>');

    const confirm = await owner.browser.get(`/dashboard/certificates/${certificate.id}/remove?mode=live`);
    expect(confirm.text).toContain(`Stop monitoring ${domain}:${server.port}?`);
    const removed = await owner.browser.post(`/dashboard/certificates/${certificate.id}/remove`, { mode: "live" });
    expect(removed.headers.get("location")).toBe("/?mode=live&notice=certificate-removed");
    expectError(await h.request("GET", `/v1/certificates/${certificate.id}`), 404, "certificate_not_found");
    expect((await owner.browser.follow(removed)).text).not.toContain(certificate.id);
  });

  test("shows a certificate's tags and, while it is muted, until when", async () => {
    await owner.browser.get("/");
    expect((await owner.browser.post("/dashboard/certificates", { mode: "live", domain, port: String(server.port), name: "" })).status).toBe(303);
    const [certificate] = expectData(await h.request("GET", `/v1/certificates?domain=${domain}`), 200);
    const until = new Date(Date.now() + 3 * DAY).toISOString();
    expectData(await h.request("PATCH", `/v1/certificates/${certificate.id}`, { body: { tags: ["team:web", "env:prod"], mutedUntil: until } }), 200);
    const row = () => owner.browser.get("/").then((page) => new RegExp(`<tr data-certificate-id="${certificate.id}"[^>]*>([\\s\\S]*?)</tr>`).exec(page.text)![1]!);
    const muted = await row();
    expect(muted).toContain('<ul class="tags" aria-label="Tags"><li class="badge tag">env:prod</li><li class="badge tag">team:web</li></ul>');
    expect(muted).toContain(`<span class="badge state-off">muted</span> until ${until.slice(0, 10)} ${until.slice(11, 16)} UTC`);
    expectData(await h.request("PATCH", `/v1/certificates/${certificate.id}`, { body: { tags: [], mutedUntil: null } }), 200);
    const plain = await row();
    expect(plain).not.toContain('class="tags"');
    expect(plain).not.toContain('badge state-off">muted');
    expectData(await h.request("DELETE", `/v1/certificates/${certificate.id}`), 200);
  });

  test("certificates are sorted by days until expiry, soonest first", async () => {
    const { rsaIntermediate } = await testPki();
    const soon = `soon.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [soon], notAfter: new Date(Date.now() + 5 * DAY + 3_600_000) });
    const soonServer = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    try {
      await owner.browser.get("/?mode=test");
      for (const [name, port] of [["Later", server.port], ["Sooner", soonServer.port]] as const) {
        const target = name === "Later" ? domain : soon;
        expect((await owner.browser.post("/dashboard/certificates", { mode: "test", domain: target, port: String(port), name })).status).toBe(303);
      }
      const page = await owner.browser.get("/?mode=test");
      expect(page.text.indexOf("<strong>Sooner</strong>")).toBeLessThan(page.text.indexOf("<strong>Later</strong>"));
      expect(page.text).toContain('<span class="badge status-expiring">expiring</span>');
      // Live and test data are shown apart.
      expect((await owner.browser.get("/?mode=live")).text).not.toContain("<strong>Sooner</strong>");
    } finally {
      await soonServer.close();
    }
  });

  test("the API's refusal is shown on the page with its message, and the input is kept", async () => {
    await owner.browser.get("/");
    const bad = await owner.browser.post("/dashboard/certificates", { mode: "live", domain: "https://example.com/", port: "", name: "Mine" });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/<div class="error" role="alert"[^>]*>Domain &quot;https:\/\/example.com\/&quot; is not a valid domain[^<]*<\/div>/);
    expect(bad.text).toContain('name="name" type="text" maxlength="100" value="Mine"');

    const unreachable = await owner.browser.post("/dashboard/certificates", { mode: "live", domain: `nothing.${TEST_DOMAIN}`, port: "1", name: "" });
    expect(unreachable.status).toBe(422);
    expect(unreachable.text).toContain("No TLS certificate could be retrieved");

    const badPort = await owner.browser.post("/dashboard/certificates", { mode: "live", domain, port: "seventy", name: "" });
    expect(badPort.status).toBe(400);
    expect(badPort.text).toMatch(/role="alert"[^>]*>“Port” must be a whole number from 1 to 65535/);
  });

  test("the Channels tab lists the organization's channels of the mode shown", async () => {
    const key = h.keys.owner.key;
    const channel = expectData(await h.request("POST", "/v1/channels", { key, body: { type: "email", name: "Ops mailbox", config: { email: "ops@acme.test" } } }), 201);
    expect((await owner.browser.get("/?mode=live")).text).toContain('<a href="/channels?mode=live">');
    const page = await owner.browser.get("/channels?mode=live");
    const row = new RegExp(`<tr data-channel-id="${channel.id}">([\\s\\S]*?)</tr>`).exec(page.text)![1]!;
    expect(row).toStartWith(
      '<td data-label="Name">Ops mailbox</td><td data-label="Type">email</td><td data-label="State"><span class="badge state-active">enabled</span></td>' +
        '<td data-label="Sends to" class="mono small">ops@acme.test</td><td data-label="Deliveries" data-health="unused">',
    );
    expect((await owner.browser.get("/channels?mode=test")).text).not.toContain("Ops mailbox");
  });
});
