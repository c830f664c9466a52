/**
 * docs/settings.md says "everything works with the
 * keyboard and without JavaScript", the script being only for the Copy button. Without the script
 * (blocked, as with JavaScript off or a script blocker) the Copy button beside a new API key (and a
 * webhook's signing secret) is still shown and focusable, and pressing it does nothing at all: the key
 * is not selected, nothing is said. A control that is announced and operable but has no effect fails
 * the user (WCAG 2.2 4.1.2 Name, Role, Value in spirit; CONTRACT §23 / docs' own promise). Expected:
 * the button appears only when the script can run it, or the page says how to copy the key. Without
 * Chromium the tests are reported as skipped.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { findChromium } from "./support/browser.ts";
import { startA11yWorld, type A11yWorld } from "./support/a11y_world.ts";

setDefaultTimeout(60_000);

const chromium = findChromium();
if (!chromium.found) {
  describe("the console without JavaScript in Chromium", () => {
    test.skip(`skipped: ${chromium.reason}`, () => {});
  });
} else {
  describeTests(chromium.path);
}

function describeTests(executablePath: string) {
  describe("the console without JavaScript in Chromium", () => {
    let world: A11yWorld;
    beforeAll(async () => {
      world = await startA11yWorld(executablePath, { certificates: false });
    });
    afterAll(async () => {
      await world?.close();
    });

    test("with the script blocked, the new key's page offers no Copy button that does nothing", async () => {
      const page = await world.browser.context.newPage();
      try {
        await page.route("**/assets/certkeeper.js*", (route) => route.abort());
        await world.signIn(page);
        await page.goto(`${world.serve.url}/settings/api-keys`);
        await page.getByLabel("Name").fill("deploy");
        await Promise.all([page.waitForNavigation(), page.getByLabel("Name").press("Enter")]);
        const key = await page.locator("#new-key").inputValue();
        expect(key).toMatch(/^ck_live_/);
        const copy = page.getByRole("button", { name: "Copy" });
        if ((await copy.count()) > 0 && (await copy.isVisible())) {
          // By keyboard, as a keyboard user would.
          await copy.focus();
          await page.keyboard.press("Enter");
          const after = await page.evaluate(() => ({
            selected: String(window.getSelection()) || (() => {
              const field = document.getElementById("new-key") as HTMLInputElement;
              return document.activeElement === field ? field.value.slice(field.selectionStart ?? 0, field.selectionEnd ?? 0) : "";
            })(),
            said: document.querySelector("[data-copy-status]")?.textContent?.trim() ?? "",
          }));
          // Pressing it must do something: select the key, or say how to copy it.
          expect({ selectedTheKey: after.selected === key, saidSomething: after.said !== "" }).not.toEqual({ selectedTheKey: false, saidSomething: false });
        }
      } finally {
        await page.close();
      }
    });
  });
}
