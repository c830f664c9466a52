/**
 * The whole set-up of an organization in a real browser (Debian's Chromium through playwright-core)
 * against a real `certkeeper serve`, real TLS servers and a real webhook receiver (CONTRACT §23): the
 * dashboard says alerts go nowhere; a webhook channel is added (its secret shown once) and sent a test;
 * two certificates are added, each page opening with its plain sentence; one is muted; problems come
 * first; a failing channel shows on the dashboard; a key is made and a colleague added. Once at
 * desktop width and once at 390 px, where
 * every page fits without sideways scrolling and every action used is within the screen. Screenshots
 * go to test-artifacts/web/. Without Chromium the tests are reported as skipped.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { ARTIFACTS, STEP_SCREENSHOTS, findChromium, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { runCliJson, startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";

setDefaultTimeout(120_000);

const chromium = findChromium();
if (!chromium.found) {
  describe("the console (CONTRACT §23) in Chromium", () => {
    test.skip(`skipped: ${chromium.reason}`, () => {});
  });
} else {
  describeTests(chromium.path);
}

function describeTests(executablePath: string) {
  describe("the console (CONTRACT §23) in Chromium", () => {
    const password = "console browser passw0rd";
    let ws: ReturnType<typeof tempWorkspace>;
    let serve: ServeProcess;
    let browser: TestBrowser;
    let receiver: HttpReceiver;
    const servers: Record<string, TlsTestServer> = {};

    beforeAll(async () => {
      ws = tempWorkspace("certkeeper-console-browser-");
      const { root, rsaIntermediate } = await testPki();
      const caFile = join(ws.dir, "root.pem");
      writeFileSync(caFile, root.certPem);
      // shop: a valid certificate, 45 days left; mail: a certificate for another name (a host name mismatch).
      for (const [name, names] of [["shop", [`shop.console.${TEST_DOMAIN}`]], ["mail", [`app.console.${TEST_DOMAIN}`]]] as const) {
        const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [...names], notAfter: new Date(Date.now() + 45 * DAY + 3_600_000) });
        servers[name] = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
      }
      for (const [company, email] of [["Desktop Co", "owner@desktop.test"], ["Phone Co", "owner@phone.test"]]) {
        await runCliJson(["org", "create", "--name", company!], { env: ws.env });
        await runCliJson(["user", "create", "--org", company!, "--email", email!, "--role", "owner", "--password", "-"], { env: ws.env, stdin: `${password}\n` });
      }
      [serve, browser, receiver] = await Promise.all([
        startServe({
          env: {
            ...ws.env,
            CERTKEEPER_RESOLVE: `*.console.${TEST_DOMAIN}=127.0.0.1`,
            CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
            CERTKEEPER_EXTRA_CA_FILE: caFile,
            CERTKEEPER_TLS_TIMEOUT: "5s",
          },
          cwd: ws.dir,
        }),
        launchBrowser(executablePath),
        startHttpReceiver(),
      ]);
    });

    afterAll(async () => {
      await browser?.close();
      await serve?.stop();
      await Promise.all([...Object.values(servers).map((s) => s.close()), receiver?.close()]);
      ws?.cleanup();
    });

    for (const [label, viewport, email] of [
      ["desktop", { width: 1200, height: 900 }, "owner@desktop.test"],
      ["phone", { width: 390, height: 844 }, "owner@phone.test"],
    ] as const) {
      test(`sets up an organization from an empty dashboard to working alerts (${label}, ${viewport.width} px)`, async () => {
        // A browser of its own for each: no session carried over from the other size.
        await browser.context.clearCookies();
        const page = await browser.context.newPage();
        await page.setViewportSize(viewport);
        const shot = async (name: string, always = false) => {
          if (always || STEP_SCREENSHOTS) await page.screenshot({ path: join(ARTIFACTS, `console-${label}-${name}.png`), fullPage: true });
        };
        /** Whether the page fits the screen: nothing to scroll sideways for. */
        const fits = async (where: string) => {
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          expect({ where, width: width <= viewport.width }).toEqual({ where, width: true });
        };
        /** An action the user needs: on screen once scrolled to, not hidden beside a table. */
        const reach = async (locator: Locator) => {
          await locator.scrollIntoViewIfNeeded();
          const box = (await locator.boundingBox())!;
          expect({ left: box.x >= 0, right: box.x + box.width <= viewport.width }).toEqual({ left: true, right: true });
          return locator;
        };
        try {
          await page.goto(`${serve.url}/sign-in`);
          await page.getByLabel("Email").fill(email);
          await page.getByLabel("Password").fill(password);
          await (await reach(page.getByRole("button", { name: "Sign in" }))).click();
          await page.waitForURL(`${serve.url}/`);

          // 1. An empty organization learns that alerts go nowhere, and where to fix it.
          expect(await page.locator("#banner-no-channel").textContent()).toContain("Alerts go nowhere");
          await fits("empty dashboard");
          await shot("1-empty");
          await (await reach(page.locator("#banner-no-channel").getByRole("link", { name: "Add a channel" }))).click();
          await (await reach(page.getByRole("link", { name: "Webhook" }))).click();
          await page.getByLabel("Name").fill("Ops hook");
          await page.getByLabel("URL", { exact: true }).fill(`${receiver.url}/hook`);
          await fits("channel form");
          await (await reach(page.getByRole("button", { name: "Add channel" }))).click();

          // 2. Its signing secret, once; then a test that arrives.
          const secret = await page.locator("#signing-secret").inputValue();
          expect(secret).toMatch(/^whsec_/);
          await shot("2-secret");
          const before = receiver.requests.length;
          await (await reach(page.getByRole("button", { name: "Send test to Ops hook" }))).click();
          expect(await page.getByRole("status").textContent()).toContain("The test notification reached “Ops hook”");
          await receiver.waitFor(before + 1, 5000);
          expect(await page.content()).not.toContain(secret);
          await fits("channels");
          await shot("3-channels");

          // 3. Two certificates, each page opening with what it means.
          await page.goto(`${serve.url}/`);
          expect(await page.locator("#banner-no-channel").count()).toBe(0);
          for (const [name, domain, port, tags] of [
            ["Shop", `shop.console.${TEST_DOMAIN}`, servers.shop!.port, "team:shop"],
            ["Mail", `mail.console.${TEST_DOMAIN}`, servers.mail!.port, "team:mail"],
          ] as const) {
            await page.goto(`${serve.url}/`);
            await page.getByLabel("Domain", { exact: true }).fill(domain);
            await page.getByLabel(/^Port/).fill(String(port));
            await page.getByLabel(/^Name/).fill(name);
            await page.locator("#cert-tags").fill(tags);
            await (await reach(page.getByRole("button", { name: "Add certificate" }))).click();
            await page.waitForURL(/\/certificates\/cert_/);
            expect(await page.getByRole("status").textContent()).toContain("The certificate was added");
            await fits(`${name} page`);
          }
          // The last one, Mail, serves a certificate for another name: the page says so, and what to do.
          expect(await page.locator("#verdict").textContent()).toBe(
            `Serves a certificate for app.console.${TEST_DOMAIN}, not mail.console.${TEST_DOMAIN}: install a certificate that names mail.console.${TEST_DOMAIN}.`,
          );
          await shot("4-certificate");

          // 4. Mute it for a week, from its page.
          await page.getByLabel("Notifications").selectOption("7d");
          await (await reach(page.getByRole("button", { name: "Save changes" }))).click();
          await page.waitForURL(/notice=certificate-updated/);
          expect(await page.locator("#summary").textContent()).toContain("muted");

          // 5. The dashboard: the broken one first, muted; the valid one after it.
          await page.goto(`${serve.url}/`);
          const rows = page.locator("tr[data-certificate-id]");
          expect(await rows.count()).toBe(2);
          expect(await rows.nth(0).getAttribute("data-status")).toBe("invalid");
          expect(await rows.nth(0).textContent()).toContain("muted");
          expect(await rows.nth(1).getAttribute("data-status")).toBe("valid");
          await reach(rows.nth(0).getByRole("link", { name: /^Remove/ }));
          await reach(rows.nth(1).getByRole("link", { name: /^Edit/ }));
          await fits("dashboard");
          await shot("5-dashboard");

          // 6. The receiver breaks: one test attempt, and the dashboard says the channel fails, and why.
          receiver.answer = () => ({ status: 500 });
          await page.goto(`${serve.url}/channels`);
          await (await reach(page.getByRole("button", { name: "Send test to Ops hook" }))).click();
          expect(await page.getByRole("alert").textContent()).toContain("The test notification to “Ops hook” failed: The endpoint answered HTTP 500");
          await reach(page.getByRole("button", { name: "Disable Ops hook" }));
          await reach(page.getByRole("link", { name: "Remove Ops hook" }));
          await page.goto(`${serve.url}/`);
          expect(await page.locator("#banner-failing").textContent()).toContain("Ops hook");
          expect(await page.locator("#banner-failing").textContent()).toContain("HTTP 500");
          await fits("dashboard with a failing channel");
          await shot("6-failing");

          // 7. The API Keys and Members tabs: their Revoke and Remove are on screen too.
          await page.goto(`${serve.url}/settings/api-keys`);
          await page.getByLabel("Name").fill("deploy");
          await (await reach(page.getByRole("button", { name: "Create API Key" }))).click();
          await page.goto(`${serve.url}/settings/api-keys`);
          await reach(page.getByRole("link", { name: "Revoke deploy" }));
          await fits("API keys");
          await page.goto(`${serve.url}/settings/members`);
          await page.getByLabel("Email").fill(`colleague-${label}@example.test`);
          await page.getByLabel("Initial password").fill("colleague passw0rd");
          await (await reach(page.getByRole("button", { name: "Add user" }))).click();
          await page.waitForURL(/notice=member-added/);
          await reach(page.getByRole("link", { name: `Remove colleague-${label}@example.test` }));
          await reach(page.getByRole("button", { name: "Change role" }).first());
          await fits("members");
          await shot("7-members");
        } catch (error) {
          await shot("failure", true).catch(() => {});
          const text = await page.locator("body").innerText().catch(() => "(no page)");
          throw new Error(`${(error as Error).message}\n  page: ${page.url()}\n  showing: ${text.replace(/\s+/g, " ").slice(0, 800)}`);
        } finally {
          receiver.answer = () => ({ status: 200 });
          await page.close();
        }
      });
    }
  });
}
