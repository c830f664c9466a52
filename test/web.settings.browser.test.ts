/**
 * The settings area of CONTRACT §17 in a real browser (Debian's Chromium through playwright-core)
 * against a real `certkeeper serve` process: changing one's own password, the dashboard's filters,
 * the 12-week chart (its SVG bars add up to the certificates expiring in those weeks), a
 * certificate's page with "Check now", the Channels tab's "Send test", all at desktop and phone width.
 * Screenshots go to test-artifacts/web/. Without Chromium the tests are reported as skipped.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ARTIFACTS, STEP_SCREENSHOTS, findChromium, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { seedOwner } from "./support/accounts.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";

setDefaultTimeout(45_000);

const chromium = findChromium();
if (!chromium.found) {
  describe("settings area (CONTRACT §17) in Chromium", () => {
    test.skip(`skipped: ${chromium.reason}`, () => {});
  });
} else {
  describeTests(chromium.path);
}

function describeTests(executablePath: string) {
  describe("settings area (CONTRACT §17) in Chromium", () => {
    const email = "owner@settings.test";
    const password = "first settings passw0rd";
    const newPassword = "second settings passw0rd";
    /** Name → days left (negative: expired) of the certificates the local TLS servers present. */
    const FLEET: Array<[string, number]> = [
      ["shop", 5], ["api", 12], ["mail", 20], ["blog", 20], ["docs", 45], ["vpn", 70], ["www", 100], ["old", -3],
    ];
    let ws: ReturnType<typeof tempWorkspace>;
    let serve: ServeProcess;
    let browser: TestBrowser;
    let page: Page;
    let key: string;
    let receiver: HttpReceiver;
    const servers: TlsTestServer[] = [];

    beforeAll(async () => {
      ws = tempWorkspace("certkeeper-settings-browser-");
      const { root, rsaIntermediate } = await testPki();
      const caFile = join(ws.dir, "root.pem");
      writeFileSync(caFile, root.certPem);
      ({ key } = await seedOwner(ws.env.CERTKEEPER_DATABASE_URL!, { name: "Settings Co", plan: "pro", email, password }));
      [serve, browser, receiver] = await Promise.all([
        startServe({
          env: {
            ...ws.env,
            CERTKEEPER_RESOLVE: `*.settings.${TEST_DOMAIN}=127.0.0.1`,
            CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
            CERTKEEPER_EXTRA_CA_FILE: caFile,
            CERTKEEPER_TLS_TIMEOUT: "5s",
            CERTKEEPER_LOG_LEVEL: "warn",
          },
          cwd: ws.dir,
        }),
        launchBrowser(executablePath),
        startHttpReceiver(),
      ]);
      for (const [name, days] of FLEET) {
        const domain = `${name}.settings.${TEST_DOMAIN}`;
        const notAfter = new Date(Date.now() + days * DAY + 3_600_000);
        const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter, notBefore: new Date(Date.now() - 200 * DAY) });
        const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
        servers.push(server);
        const tags = name === "shop" || name === "api" ? ["team:shop"] : ["team:web"];
        // The days policy: these tests count certificates expiring by days left (200-day-old leaves would
        // otherwise be past their renewal deadline, and expiring for that).
        const added = await api("POST", "/v1/certificates", { domain, port: server.port, tags, alertPolicy: "days" });
        expect({ domain, status: added.status }).toEqual({ domain, status: 201 });
      }
      expect((await api("POST", "/v1/channels", { type: "webhook", name: "Ops hook", config: { url: `${receiver.url}/hook` } })).status).toBe(201);
      page = await browser.context.newPage();
    });

    afterAll(async () => {
      await browser?.close();
      await serve?.stop();
      await Promise.all([...servers.map((s) => s.close()), receiver?.close()]);
      ws?.cleanup();
    });

    async function api(method: string, path: string, body?: unknown) {
      const response = await fetch(`${serve.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: (await response.json()) as any };
    }

    const shot = async (name: string, always = false) => {
      if (always || STEP_SCREENSHOTS) await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    };

    /** A test whose failure says what the browser was showing. */
    const it = (name: string, steps: () => Promise<void>) =>
      test(name, async () => {
        try {
          await steps();
        } catch (error) {
          await shot(`failure-${name.slice(0, 20).replace(/\W+/g, "-")}`, true).catch(() => {});
          const text = await page.locator("body").innerText().catch(() => "(no page)");
          throw new Error(`${(error as Error).message}\n  page: ${page.url()}\n  showing: ${text.replace(/\s+/g, " ").slice(0, 800)}`);
        }
      });

    async function signIn(withPassword: string) {
      await page.goto(`${serve.url}/sign-in`);
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill(withPassword);
      await page.getByRole("button", { name: "Sign in" }).click();
    }

    const noHorizontalScroll = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

    it("changes the signed-in user's own password by keyboard; the new one signs in, the old one no longer does", async () => {
      await signIn(password);
      await page.waitForURL(`${serve.url}/`);
      await page.getByRole("link", { name: "Account" }).click();
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Your account");
      await page.getByLabel("Current password").focus();
      await page.keyboard.type(password);
      await page.keyboard.press("Tab");
      await page.keyboard.type(newPassword);
      await page.keyboard.press("Tab");
      await page.keyboard.type(newPassword);
      await shot("account-password");
      await page.keyboard.press("Enter");
      await page.waitForURL(/notice=password-changed/);
      expect(await page.getByRole("status").textContent()).toContain("Your password was changed");
      await shot("account-password-changed");

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(/sign-in/);
      await signIn(password);
      expect(await page.getByRole("alert").textContent()).toContain("The email address or the password is wrong");
      await signIn(newPassword);
      await page.waitForURL(`${serve.url}/`);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Dashboard");
    });

    it("the chart's SVG bars add up to the certificates expiring in the next 12 weeks", async () => {
      await page.goto(`${serve.url}/`);
      const svg = page.locator("figure.chart svg[role=img]");
      expect(await svg.count()).toBe(1);
      const counts = await page.locator("figure.chart rect.bar").evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute("data-count"))));
      expect(counts).toHaveLength(12);
      const now = Date.now();
      const all = (await api("GET", "/v1/certificates?limit=100")).body.data as Array<{ expiresAt: string }>;
      const inTwelveWeeks = all.filter((c) => Date.parse(c.expiresAt) >= now && Date.parse(c.expiresAt) < now + 84 * DAY).length;
      expect(inTwelveWeeks).toBe(6);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(inTwelveWeeks);
      // The bars are drawn: the tallest is the week holding mail and blog (20 days: week 2).
      const heights = await page.locator("figure.chart rect.bar").evaluateAll((bars) => bars.map((bar) => (bar as SVGRectElement).getBBox().height));
      expect(heights.indexOf(Math.max(...heights))).toBe(2);
      expect(await page.locator("#chart-desc").textContent()).toContain("6 certificates expire in the next 12 weeks");
      await shot("dashboard-chart");
    });

    it("filters the dashboard by domain (typed, then Enter), by status, by tag, and by a count's link", async () => {
      await page.goto(`${serve.url}/`);
      const rows = page.locator("tr[data-certificate-id]");
      expect(await rows.count()).toBe(FLEET.length);
      await page.getByLabel("Domain contains").focus();
      await page.keyboard.type("mail");
      await page.keyboard.press("Enter");
      await page.waitForURL(/domain=mail/);
      expect(await rows.count()).toBe(1);
      expect(await rows.first().textContent()).toContain("mail.settings");
      await page.getByRole("link", { name: "Clear" }).click();
      await page.getByLabel("Status").selectOption("expiring");
      await page.getByRole("button", { name: "Find" }).click();
      await page.waitForURL(/status=expiring/);
      // 5, 12, 20 and 20 days left: expiring (thresholds up to 30 days).
      expect(await rows.count()).toBe(4);
      expect(await rows.evaluateAll((trs) => trs.every((tr) => tr.getAttribute("data-status") === "expiring"))).toBe(true);
      await shot("dashboard-filtered");
      await page.getByRole("link", { name: "Clear" }).click();
      await page.getByLabel("Tag", { exact: true }).fill("team:shop");
      await page.getByRole("button", { name: "Find" }).click();
      await page.waitForURL(/tag=team%3Ashop/);
      expect(await rows.count()).toBe(2);
      expect((await rows.allTextContents()).map((t) => /(\w+)\.settings/.exec(t)![1]).sort()).toEqual(["api", "shop"]);
      await shot("dashboard-tag-filter");
      await page.locator('a.count[data-status="expired"]').click();
      await page.waitForURL(/status=expired/);
      expect(await rows.count()).toBe(1);
      expect(await rows.first().textContent()).toContain("old.settings");
      expect(await page.locator('a.count[data-status="expired"] .n').textContent()).toBe("1");
    });

    it("a certificate's page shows its fields, chain and events, and Check now re-checks it", async () => {
      await page.goto(`${serve.url}/?domain=shop`);
      await page.getByRole("link", { name: `shop.settings.${TEST_DOMAIN}`, exact: true }).click();
      await page.waitForURL(/\/certificates\/cert_/);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toContain(`shop.settings.${TEST_DOMAIN}`);
      expect(await page.locator("dl.fields dt", { hasText: /^Serial number$/ }).count()).toBe(1);
      expect(await page.locator("table[aria-labelledby=chain-heading] tbody tr").count()).toBe(2);
      expect(await page.locator("#events").textContent()).toContain("certificate.expiring");
      const before = await page.locator("dt:text-is('Last checked at') + dd").textContent();
      await page.getByRole("button", { name: "Check now" }).click();
      await page.waitForURL(/notice=certificate-checked/);
      expect(await page.getByRole("status").textContent()).toContain("checked just now");
      expect(await page.locator("dt:text-is('Last checked at') + dd").textContent()).not.toBe(before);
      await shot("certificate-page");
      await page.setViewportSize({ width: 390, height: 844 });
      await page.reload();
      expect(await noHorizontalScroll()).toBe(true);
      await shot("certificate-page-phone");
      await page.setViewportSize({ width: 1200, height: 900 });
    });

    it("the Channels tab sends a test notification and says it arrived", async () => {
      await page.goto(`${serve.url}/`);
      await page.getByRole("link", { name: "Channels" }).first().click();
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Notification channels");
      await page.getByRole("button", { name: "Send test to Ops hook" }).click();
      expect(await page.getByRole("status").textContent()).toContain("The test notification reached “Ops hook”");
      await receiver.waitFor(1, 5000);
      await shot("channels-test-sent");
    });

    it("the dashboard reads at phone width: no sideways scrolling, the chart scaled to fit", async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${serve.url}/`);
      expect(await noHorizontalScroll()).toBe(true);
      const width = await page.locator("figure.chart svg").evaluate((svg) => svg.getBoundingClientRect().width);
      expect(width).toBeLessThanOrEqual(390);
      expect(width).toBeGreaterThan(250);
      await shot("dashboard-phone-chart");
      await page.setViewportSize({ width: 1200, height: 900 });
    });
  });
}
