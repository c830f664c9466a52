/**
 * The settings area in a real browser (headless Chromium through playwright-core) against a real
 * `certkeeper serve` process on a temporary libSQL file, with users made by the CLI: sign in by
 * keyboard, create a key and use it on the API, revoke it, a member's read-only view, cross-site form
 * posts refused, and the dashboard adding and removing a certificate served by a local TLS server.
 * Screenshots of every tab go to test-artifacts/web/ with CERTKEEPER_TEST_SCREENSHOTS=1. Without Chromium the tests are reported as
 * skipped, with the reason.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ARTIFACTS, STEP_SCREENSHOTS, findChromium, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { runCliJson, startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { seedAccounts } from "./support/accounts.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";

// A browser, a server process and CLI processes share two cores with other tests.
setDefaultTimeout(30_000);

const chromium = findChromium();

if (!chromium.found) {
  describe("settings area in Chromium", () => {
    test.skip(`skipped: ${chromium.reason}`, () => {});
  });
  console.warn(`web.browser.test.ts: browser tests skipped: ${chromium.reason}`);
} else {
  describeBrowserTests(chromium.path);
}

function describeBrowserTests(executablePath: string) {
  describe("settings area in Chromium", () => {
    const domain = `browser.${TEST_DOMAIN}`;
    const ownerEmail = "owner@browser.test";
    const memberEmail = "member@browser.test";
    const password = "browser test password";
    let ws: ReturnType<typeof tempWorkspace>;
    let tls: TlsTestServer;
    let serve: ServeProcess;
    let browser: TestBrowser;
    let page: Page;
    let orgId: string;
    let attacker: ReturnType<typeof Bun.serve> | undefined;
    /** The key the first test creates, the second revokes. */
    let key: string;

    beforeAll(async () => {
      ws = tempWorkspace("certkeeper-browser-");
      const { root, rsaIntermediate } = await testPki();
      const caFile = join(ws.dir, "root.pem");
      writeFileSync(caFile, root.certPem);
      const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + 60 * DAY + 3_600_000) });
      const [server, { org }] = await Promise.all([
        startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem }),
        seedAccounts(ws.env.CERTKEEPER_DATABASE_URL!, {
          name: "Browser Co",
          users: [
            { email: ownerEmail, role: "owner", password },
            { email: memberEmail, role: "member", password },
          ],
        }),
      ]);
      tls = server;
      orgId = org.id;
      [serve, browser] = await Promise.all([
        startServe({
          env: {
            ...ws.env,
            CERTKEEPER_RESOLVE: `${domain}=127.0.0.1`,
            CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
            CERTKEEPER_EXTRA_CA_FILE: caFile,
            CERTKEEPER_TLS_TIMEOUT: "5s",
            CERTKEEPER_LOG_LEVEL: "info",
          },
          cwd: ws.dir,
        }),
        launchBrowser(executablePath),
      ]);
      await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: serve.url });
      page = await browser.context.newPage();
    });

    afterAll(async () => {
      await browser?.close();
      attacker?.stop(true);
      const code = await serve?.stop();
      await tls?.close();
      ws?.cleanup();
      expect(code).toBe(0);
    });

    const shot = async (name: string, always = false) => {
      if (always || STEP_SCREENSHOTS) await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    };

    /** A test whose failure says what the browser was showing. */
    const it = (name: string, steps: () => Promise<void>) => test(name, () => explainFailure(steps));

    /** On failure, says what the browser was showing (and keeps a screenshot), not only what was missing. */
    async function explainFailure(steps: () => Promise<void>) {
      try {
        await steps();
      } catch (error) {
        await shot("failure", true).catch(() => {});
        const text = await page.locator("body").innerText().catch(() => "(no page)");
        const requests = serve.output().stdout.trim().split("\n").slice(-8).join("\n    ");
        throw new Error(`${(error as Error).message}\n  page: ${page.url()}\n  showing: ${text.replace(/\s+/g, " ").slice(0, 600)}\n  last requests:\n    ${requests}`);
      }
    }
    const api = (apiKey: string) =>
      fetch(`${serve.url}/v1/certificates`, { headers: { authorization: `Bearer ${apiKey}` } }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

    async function signIn(email: string) {
      await page.goto(`${serve.url}/`);
      await page.waitForURL(`${serve.url}/sign-in`);
      // By keyboard: the email field has focus, Tab to the password, Enter sends. Chromium applies
      // autofocus at a rendering update after the load event: wait for it (the test never focuses it).
      await page.waitForFunction(() => document.activeElement?.id === "email");
      await page.keyboard.type(email);
      await page.keyboard.press("Tab");
      await page.keyboard.type(password);
      await explainFailure(async () => {
        await page.keyboard.press("Enter");
        await page.waitForURL(`${serve.url}/`);
        expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Dashboard");
      });
    }

    it("an owner signs in, creates a key, copies it from the page, and the API accepts it", async () => {
      await page.goto(`${serve.url}/sign-in`);
      await shot("sign-in");
      await signIn(ownerEmail);
      await page.getByRole("link", { name: "API Keys" }).click();
      await page.getByLabel("Name").fill("Browser key");
      await page.getByRole("radio", { name: /Live/ }).check();
      await page.getByRole("button", { name: "Create API Key" }).click();
      expect(await page.getByRole("alert").first().textContent()).toContain("It will not be shown again");
      key = await page.getByLabel("API key (live)").inputValue();
      expect(key).toMatch(/^ck_live_[0-9A-Za-z]{38}$/);
      await page.getByRole("button", { name: "Copy" }).click();
      // The page writes its status once the clipboard has answered: wait for it rather than race it.
      await page.locator("[data-copy-status]").filter({ hasText: /Copied|Ctrl\+C/ }).waitFor({ timeout: 5000 });
      await shot("api-keys-created");

      expect(await api(key)).toEqual({ status: 200, body: { data: [], meta: { requestId: expect.any(String), nextCursor: null } } });
      // Leaving the page loses the key for good.
      await page.getByRole("link", { name: "Done" }).click();
      expect(await page.content()).not.toContain(key);
      await shot("api-keys");
    });

    it("revoking asks for confirmation, then the API refuses the key with expired_api_key", async () => {
      await page.goto(`${serve.url}/settings/api-keys`);
      await page.getByRole("link", { name: "Revoke Browser key" }).click();
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Revoke API key “Browser key”?");
      await shot("api-keys-revoke");
      expect((await api(key)).status).toBe(200);
      await page.getByRole("button", { name: "Revoke key" }).click();
      expect(await page.getByRole("status").textContent()).toContain("The API key was revoked");
      expect(await api(key)).toEqual({ status: 401, body: { error: { code: "expired_api_key", message: expect.any(String) } } });
    });

    it("the dashboard adds a certificate from a local TLS server, shows it, and removes it", async () => {
      await explainFailure(async () => {
        await page.goto(`${serve.url}/`);
        await page.getByLabel("Domain", { exact: true }).fill(domain);
        await page.getByLabel(/^Port/).fill(String(tls.port));
        await page.getByLabel(/^Name/).fill("Browser site");
        await page.getByRole("button", { name: "Add certificate" }).click();
        // Whichever the page answers, a notice or an error: a failure then says what the page said.
        const outcome = page.getByRole("status").or(page.getByRole("alert")).or(page.getByRole("heading", { level: 1 }));
        await outcome.first().waitFor();
        expect(await page.getByRole("status").or(page.getByRole("alert")).first().textContent()).toContain("The certificate was added");
        // The new certificate's own page, then the dashboard that lists it.
        expect(await page.locator("#verdict").textContent()).toMatch(/^Valid, expires in 60 days/);
        await page.getByRole("link", { name: /Dashboard \(live\)/ }).click();
        const row = page.locator("tr[data-certificate-id]", { hasText: "Browser site" });
        expect(await row.textContent()).toMatch(/valid[\s\S]*Browser site[\s\S]*60[\s\S]*certkeeper intermediates/);
        await shot("dashboard");

        await page.setViewportSize({ width: 390, height: 844 });
        await page.reload();
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await shot("dashboard-phone");
        await page.setViewportSize({ width: 1200, height: 900 });

        await page.getByRole("link", { name: `Remove ${domain}` }).click();
        await page.getByRole("button", { name: "Remove certificate" }).click();
        expect(await page.getByRole("status").textContent()).toContain("no longer monitored");
        expect(await page.locator("tr[data-certificate-id]").count()).toBe(0);

        await page.getByLabel("Domain", { exact: true }).fill("not a domain");
        await page.getByRole("button", { name: "Add certificate" }).click();
        expect(await page.getByRole("alert").textContent()).toContain("is not a valid domain");
      });
    });

    it("the Members tab adds a user with a role", async () => {
      await page.goto(`${serve.url}/settings/members`);
      await page.getByLabel("Email").fill("new@browser.test");
      await page.getByLabel("Role", { exact: true }).selectOption("admin");
      await page.getByLabel("Initial password").fill("another good password");
      await page.getByRole("button", { name: "Add user" }).click();
      expect(await page.getByRole("status").textContent()).toContain("The user was added");
      expect(await page.locator("tr", { hasText: "new@browser.test" }).textContent()).toContain("admin");
      await shot("members");
    });

    it("cross-site and cross-origin form posts are refused, and create nothing", async () => {
      attacker = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: () =>
          new Response(
            `<!doctype html><form id="f" method="post" action="${serve.url}/settings/api-keys">` +
              `<input name="name" value="Planted"><input name="mode" value="live"><input name="_csrf" value="guess"></form>` +
              `<script>document.getElementById("f").submit()</script>`,
            { headers: { "content-type": "text/html" } },
          ),
      });
      // localhost is another site than 127.0.0.1 (the cookie stays home); 127.0.0.1 on another port is
      // the same site but another origin (the cookie goes along, the Origin check stops it).
      for (const from of [`http://localhost:${attacker.port}/`, `http://127.0.0.1:${attacker.port}/`]) {
        const refused = page.waitForResponse(`${serve.url}/settings/api-keys`);
        await page.goto(from);
        expect((await refused).status()).toBe(403);
        expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Request refused");
      }
      await shot("cross-site-refused");
      const keys = await runCliJson(["key", "list", "--org", orgId], { env: ws.env });
      expect(keys.map((k: { name: string }) => k.name)).not.toContain("Planted");
    });

    it("a member sees the keys read-only; a forged create form is refused with 403", async () => {
      await page.goto(`${serve.url}/`);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(`${serve.url}/sign-in?notice=signed-out`);
      await signIn(memberEmail);
      expect(await page.getByRole("link", { name: "Members" }).count()).toBe(0);
      await page.getByRole("link", { name: "API Keys" }).click();
      expect(await page.getByRole("button", { name: "Create API Key" }).count()).toBe(0);
      expect(await page.getByRole("link", { name: /^Revoke/ }).count()).toBe(0);
      expect(await page.locator("tr", { hasText: "Browser key" }).textContent()).toContain("revoked");
      await shot("api-keys-member");

      const answer = page.waitForResponse((r) => r.url() === `${serve.url}/settings/api-keys` && r.request().method() === "POST");
      await page.evaluate(() => {
        const form = document.createElement("form");
        form.method = "post";
        form.action = "/settings/api-keys";
        const token = (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value;
        for (const [name, value] of [["name", "Member key"], ["mode", "live"], ["_csrf", token]]) {
          const input = document.createElement("input");
          Object.assign(input, { type: "hidden", name, value });
          form.append(input);
        }
        document.body.append(form);
        form.submit();
      });
      expect((await answer).status()).toBe(403);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Not allowed");
      const keys = await runCliJson(["key", "list", "--org", orgId], { env: ws.env });
      expect(keys.map((k: { name: string }) => k.name)).toEqual(["Browser key"]);
    });
  });
}
