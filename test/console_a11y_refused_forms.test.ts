/**
 * A form the server refuses says so where a keyboard and screen-reader user is, and ties the message to
 * the field it is about (WCAG 2.2 3.3.1 Error Identification, 1.3.1 Info and Relationships, 4.1.2
 * Name, Role, Value; techniques G85, ARIA19, ARIA21): the field is marked `aria-invalid`, described by
 * the message, and focused (`autofocus`, no script needed). The message was a `role="alert"` box at
 * the top of the new page (not announced there by screen readers), focus on nothing; on the dashboard
 * the form sits at the page's bottom.
 *
 * Each form is filled and sent by keyboard (Enter in a field), as in the everyday tasks: add a
 * certificate, edit one, add a channel, change the password, add a member. Without Chromium the tests
 * are reported as skipped.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { findChromium } from "./support/browser.ts";
import { OWNER, startA11yWorld, type A11yWorld } from "./support/a11y_world.ts";

setDefaultTimeout(60_000);

const chromium = findChromium();
if (!chromium.found) {
  describe("refused forms in Chromium", () => {
    test.skip(`skipped: ${chromium.reason}`, () => {});
  });
} else {
  describeTests(chromium.path);
}

/**
 * What a keyboard and screen-reader user gets after a refusal: where focus is, and how the field in
 * error is exposed (aria-invalid, and whether its description holds the message).
 */
async function afterRefusal(page: Page, fieldSelector: string) {
  // Autofocus runs with the first rendering of the page, which may come just after its load event.
  await page.waitForFunction(() => document.activeElement !== document.body, null, { timeout: 2000 }).catch(() => {});
  return page.evaluate((selector) => {
    const alert = document.querySelector("[role=alert]");
    const field = document.querySelector(selector) as HTMLElement | null;
    const active = document.activeElement as HTMLElement | null;
    const described = (field?.getAttribute("aria-describedby") ?? "")
      .split(/\s+/)
      .filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent ?? "")
      .join(" ");
    const message = alert?.textContent?.trim() ?? null;
    return {
      message,
      // Focus on the message itself or on the field the message is about.
      focusOnErrorOrField: active !== null && active !== document.body && (active === field || (alert !== null && alert.contains(active))),
      fieldInvalid: field?.getAttribute("aria-invalid") === "true",
      fieldDescribedByMessage: message !== null && described.includes(message),
    };
  }, fieldSelector);
}

const ACCESSIBLE = { focusOnErrorOrField: true, fieldInvalid: true, fieldDescribedByMessage: true };

function describeTests(executablePath: string) {
  describe("refused forms in Chromium", () => {
    let world: A11yWorld;
    let page: Page;
    beforeAll(async () => {
      world = await startA11yWorld(executablePath);
      page = await world.browser.context.newPage();
      await world.signIn(page);
    });
    afterAll(async () => {
      await world?.close();
    });

    /** Types Enter in `selector` and waits for the page that answers the form. */
    const sendFrom = async (selector: string) => {
      await Promise.all([page.waitForNavigation(), page.locator(selector).press("Enter")]);
    };

    test("adding a certificate with port 99999: focus goes to the message or the Port field, which is marked invalid and described by it", async () => {
      await page.goto(`${world.serve.url}/`);
      await page.locator("#cert-domain").fill("new.example.test");
      await page.locator("#cert-port").fill("99999");
      await sendFrom("#cert-port");
      const found = await afterRefusal(page, "#cert-port");
      expect(found.message).toContain("“Port” must be a whole number");
      expect({ ...found, message: undefined }).toEqual({ ...ACCESSIBLE, message: undefined });
    });

    test("editing a certificate with thresholds 'abc': focus goes to the message or the Alert thresholds field, which is marked invalid and described by it", async () => {
      const id = (await world.api("GET", "/v1/certificates")).body.data[0].id;
      await page.goto(`${world.serve.url}/certificates/${id}?mode=live`);
      await page.locator("#edit-thresholds").fill("abc");
      await sendFrom("#edit-thresholds");
      const found = await afterRefusal(page, "#edit-thresholds");
      expect(found.message).toContain("“Alert thresholds”");
      expect({ ...found, message: undefined }).toEqual({ ...ACCESSIBLE, message: undefined });
    });

    test("adding a webhook channel with an ftp URL: focus goes to the message or the URL field, which is marked invalid and described by it", async () => {
      await page.goto(`${world.serve.url}/channels/new?type=webhook`);
      await page.locator("#channel-name").fill("Bad hook");
      await page.locator("#config-url").fill("ftp://example.test/hook");
      await sendFrom("#config-url");
      const found = await afterRefusal(page, "#config-url");
      expect(found.message).toContain("“URL” must be an http or https URL");
      expect({ ...found, message: undefined }).toEqual({ ...ACCESSIBLE, message: undefined });
    });

    test("changing the password with a wrong current one: focus goes to the message or the Current password field, which is marked invalid and described by it", async () => {
      await page.goto(`${world.serve.url}/settings/account`);
      await page.locator("#current-password").fill("not the current one");
      await page.locator("#new-password").fill("a brand new passw0rd");
      await page.locator("#confirm-password").fill("a brand new passw0rd");
      await sendFrom("#confirm-password");
      const found = await afterRefusal(page, "#current-password");
      expect(found.message).toContain("The current password is wrong");
      expect({ ...found, message: undefined }).toEqual({ ...ACCESSIBLE, message: undefined });
    });

    test("adding a member whose email is taken: focus goes to the message or the Email field, which is marked invalid and described by it", async () => {
      await page.goto(`${world.serve.url}/settings/members`);
      await page.locator("#member-email").fill(OWNER.email);
      await page.locator("#member-password").fill("colleague passw0rd");
      await sendFrom("#member-password");
      const found = await afterRefusal(page, "#member-email");
      expect(found.message).toContain("already exists");
      expect({ ...found, message: undefined }).toEqual({ ...ACCESSIBLE, message: undefined });
    });
  });
}
