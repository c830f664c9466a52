/**
 * Where keyboard focus is, must be seen (WCAG 2.2 2.4.7 Focus Visible, with
 * 1.4.11 Non-text Contrast: a focus indicator needs 3:1 against the colours next to it). The console's
 * one focus ring is `3px solid var(--accent)` (#1f5fbf) drawn 2px outside the control; in the page
 * header (background #14213d) that is 2.6:1, so tabbing through the main navigation and "Sign out" shows
 * a dark blue ring on navy that is hard to see. Measured in Chromium after Tab presses, at desktop and
 * phone width. Without Chromium the tests are reported as skipped.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { findChromium } from "./support/browser.ts";
import { contrast, startA11yWorld, type A11yWorld } from "./support/a11y_world.ts";

setDefaultTimeout(60_000);

const chromium = findChromium();
if (!chromium.found) {
  describe("focus indicator contrast in Chromium", () => {
    test.skip(`skipped: ${chromium.reason}`, () => {});
  });
} else {
  describeTests(chromium.path);
}

function describeTests(executablePath: string) {
  describe("focus indicator contrast in Chromium", () => {
    let world: A11yWorld;
    beforeAll(async () => {
      world = await startA11yWorld(executablePath, { certificates: false });
    });
    afterAll(async () => {
      await world?.close();
    });

    for (const [label, viewport] of [
      ["desktop", { width: 1200, height: 900 }],
      ["phone", { width: 390, height: 844 }],
    ] as const) {
      test(`the focus ring of every header control (navigation, Sign out) has 3:1 against the header (${label})`, async () => {
        const page = await world.browser.context.newPage();
        try {
          await page.setViewportSize(viewport);
          await world.signIn(page);
          await page.goto(`${world.serve.url}/settings/account`);
          // From the top of the page by keyboard: the skip link, then the header's controls.
          await page.locator("body").focus();
          const seen: Array<{ control: string; ratio: number }> = [];
          for (let i = 0; i < 12; i++) {
            await page.keyboard.press("Tab");
            const focused = await page.evaluate(() => {
              const el = document.activeElement as HTMLElement | null;
              if (!el || !el.closest("header.top")) return null;
              const style = getComputedStyle(el);
              let bg = "rgba(0, 0, 0, 0)";
              // The colour the ring is drawn on: the outline sits outside the control, on its parents' background.
              for (let at: Element | null = el.parentElement; at; at = at.parentElement) {
                const b = getComputedStyle(at).backgroundColor;
                if (b !== "rgba(0, 0, 0, 0)" && b !== "transparent") { bg = b; break; }
              }
              return { control: (el.innerText || el.tagName).trim(), outline: style.outlineStyle === "none" ? null : style.outlineColor, bg };
            });
            if (focused === null) continue;
            expect({ control: focused.control, hasOutline: focused.outline !== null }).toEqual({ control: focused.control, hasOutline: true });
            seen.push({ control: focused.control, ratio: Math.round(contrast(focused.outline!, focused.bg) * 100) / 100 });
          }
          expect(seen.map((s) => s.control)).toContain("Sign out");
          expect(seen.filter((s) => s.ratio < 3)).toEqual([]);
        } finally {
          await page.close();
        }
      });
    }
  });
}
