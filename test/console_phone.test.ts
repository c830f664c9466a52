/**
 * Every page works at 390 px wide with its actions reachable (CONTRACT §23), even with a long tag: tags
 * are 1–50 characters (§16), drawn as badges, and a tag wraps where other badges do not, so a
 * certificate carrying a 50-character one leaves the dashboard and its page within a 390 px phone.
 * The page is rendered in-process and laid out by Chromium with the site's own stylesheet.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { STYLESHEET } from "../adapters/web/assets.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { findChromium, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { DAY } from "./support/pki.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

const chromium = findChromium();
let h: Harness;
let owner: WebUser;
let browser: TestBrowser;
let certificateId: string;
const now = Date.now();
const LONG_TAG = "team:payments/europe-west/production-cluster-00001"; // 50 characters, valid per §16

beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, {
    domain: "shop.phone.example", name: "Shop", tags: [LONG_TAG], lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now + 80 * DAY,
  });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  certificateId = record.id;
  if (chromium.found) browser = await launchBrowser(chromium.path);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function widthAt390(path: string): Promise<number> {
  const html = (await owner.browser.get(path)).text.replace(/<link rel="stylesheet"[^>]*>/, `<style>${STYLESHEET}</style>`).replace(/<script[^>]*><\/script>/, "");
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.setContent(html);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.close();
  return width;
}

describe.skipIf(!chromium.found)("a long tag at phone width", () => {
  test("the dashboard does not scroll sideways", async () => {
    expect(LONG_TAG.length).toBe(50);
    expect(await widthAt390("/?mode=live")).toBeLessThanOrEqual(390);
  }, 30_000);
  test("the certificate's page does not scroll sideways", async () => {
    expect(await widthAt390(`/certificates/${certificateId}?mode=live`)).toBeLessThanOrEqual(390);
  }, 30_000);
});
