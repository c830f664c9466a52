/**
 * At phone width (under 640 px) the console's tables become one card per row,
 * their header row hidden and each cell labelled by CSS from its `data-label` ("Status: …",
 * "Expires: …"). A cell without `data-label` loses its column header for sighted users: on a
 * certificate's page the Recent events card shows "When: 3 minutes ago" and then the event kind, its
 * details and its deliveries with no label at all (WCAG 2.2 1.3.1 Info and Relationships: the
 * relationship the column header gave is no longer presented visually). Checked on every stacked table
 * of the everyday pages at 390 px. Without Chromium the tests are reported as skipped.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { findChromium } from "./support/browser.ts";
import { startA11yWorld, type A11yWorld } from "./support/a11y_world.ts";

setDefaultTimeout(60_000);

const chromium = findChromium();
if (!chromium.found) {
  describe("stacked tables at phone width in Chromium", () => {
    test.skip(`skipped: ${chromium.reason}`, () => {});
  });
} else {
  describeTests(chromium.path);
}

function describeTests(executablePath: string) {
  describe("stacked tables at phone width in Chromium", () => {
    let world: A11yWorld;
    beforeAll(async () => {
      world = await startA11yWorld(executablePath);
    });
    afterAll(async () => {
      await world?.close();
    });

    test("every cell of a stacked table shows its column's name at 390 px (dashboard, certificate page, channels, keys, members)", async () => {
      const page = await world.browser.context.newPage();
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await world.signIn(page);
        const certificates = (await world.api("GET", "/v1/certificates")).body.data as Array<{ id: string; domain: string }>;
        // Each certificate's page, for the one with recent events (the expiring one crossed its thresholds).
        const unlabelled: string[] = [];
        let events = 0;
        for (const path of ["/", ...certificates.map((c) => `/certificates/${c.id}?mode=live`), "/channels", "/settings/api-keys", "/settings/members"]) {
          await page.goto(`${world.serve.url}${path}`);
          unlabelled.push(
            ...(await page.evaluate((where) => {
              const found: string[] = [];
              for (const table of Array.from(document.querySelectorAll("table.stack"))) {
                const headers = Array.from(table.querySelectorAll("thead th")).map((th) => th.textContent!.trim());
                for (const row of Array.from(table.querySelectorAll("tbody tr"))) {
                  Array.from(row.children).forEach((cell, i) => {
                    // An action cell needs no label: its links and buttons say what they do.
                    if (cell.classList.contains("actions") || headers[i] === "Actions") return;
                    const shown = getComputedStyle(cell, "::before").content;
                    if (!cell.hasAttribute("data-label") || shown === "none" || shown === "normal") found.push(`${where} ${table.id || table.getAttribute("aria-labelledby")}: “${headers[i]}” cell`);
                  });
                }
              }
              return [...new Set(found)];
            }, path)),
          );
          events += await page.locator("#events tbody tr").count();
        }
        expect(events).toBeGreaterThan(0);
        expect(unlabelled).toEqual([]);
      } finally {
        await page.close();
      }
    });
  });
}
