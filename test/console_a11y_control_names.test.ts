/**
 * A control's accessible name should say what it acts on when the same
 * control is repeated per row (WCAG 2.2 2.4.6 Headings and Labels; 2.4.9's spirit for buttons). The
 * console does this everywhere else: "Send test to Ops hook", "Disable Ops hook", "Revoke deploy",
 * "Remove colleague@…", each with a visually hidden suffix. The Members tab's per-row "Change role"
 * button does not: a screen reader's list of buttons (or voice control, "click Change role") offers
 * several identical "Change role" buttons with nothing to tell them apart. Read from Chromium's
 * accessibility tree. Without Chromium the tests are reported as skipped.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { findChromium } from "./support/browser.ts";
import { startA11yWorld, type A11yWorld } from "./support/a11y_world.ts";

setDefaultTimeout(60_000);

const chromium = findChromium();
if (!chromium.found) {
  describe("names of repeated controls in Chromium", () => {
    test.skip(`skipped: ${chromium.reason}`, () => {});
  });
} else {
  describeTests(chromium.path);
}

function describeTests(executablePath: string) {
  describe("names of repeated controls in Chromium", () => {
    let world: A11yWorld;
    beforeAll(async () => {
      world = await startA11yWorld(executablePath, { certificates: false });
    });
    afterAll(async () => {
      await world?.close();
    });

    test("each member's Change role button names the member it changes", async () => {
      const page = await world.browser.context.newPage();
      try {
        await world.signIn(page);
        const colleagues = ["ana@a11y.test", "ben@a11y.test"];
        for (const email of colleagues) {
          await page.goto(`${world.serve.url}/settings/members`);
          await page.getByLabel("Email").fill(email);
          await page.getByLabel("Initial password").fill("colleague passw0rd");
          await Promise.all([page.waitForURL(/notice=member-added/), page.getByLabel("Initial password").press("Enter")]);
        }
        const buttons = page.getByRole("button", { name: /Change role/ });
        expect(await buttons.count()).toBe(2);
        const names: string[] = [];
        for (let i = 0; i < 2; i++) names.push((await buttons.nth(i).ariaSnapshot()).replace(/^- button /, "").replace(/"/g, ""));
        // Told apart by name, each naming its member, as "Remove ana@a11y.test" does.
        expect(new Set(names).size).toBe(2);
        for (const email of colleagues) expect({ email, named: names.some((name) => name.includes(email)) }).toEqual({ email, named: true });
      } finally {
        await page.close();
      }
    });
  });
}
