/**
 * A certificate whose CA asked for early renewal (ARI, CONTRACT §19), laid out by Chromium with the
 * site's own stylesheet, as console_phone.test.ts does: the page opens with the §23 sentence, which
 * quotes the CA's explanation URL, and must fit a 390 px phone. And the same sentence with a hostile
 * issuer, as a person sees it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { STYLESHEET } from "../adapters/web/assets.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { findChromium, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

const chromium = findChromium();
let h: Harness;
let owner: WebUser;
let browser: TestBrowser;
let requestedId: string;
let bidiId: string;
const now = Date.now();
// What a CA's renewalInfo answer may carry (RFC 9773 explanationURL): an incident page named by a digest.
const EXPLANATION = "https://acme.ca.example/incidents/0f4c2a9b8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3";

beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
  const scope = { organizationId: h.org.id, mode: "live" as const };
  const requested = certificateRecord(scope, {
    domain: "shop.ari-phone.example", name: "Shop", alertPolicy: "renewal",
    lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now + 80 * DAY,
  });
  // A first answer whose window ends before the lifetime's midpoint: the CA asks for early replacement.
  requested.details.renewalInfo = { window: { start: now - DAY, end: now + DAY }, explanationUrl: EXPLANATION, checkedAt: now - HOUR, requestedEnd: now + DAY, nextAt: now + 6 * HOUR, lastError: null };
  expect(await h.store.certificates.insert(requested, { limit: 1000, events: [] })).toBe("created");
  requestedId = requested.id;

  const bidi = certificateRecord(scope, {
    domain: "caa.bidi-phone.example", name: "CAA",
    lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now + 80 * DAY,
    dns: { caa: { status: "forbidden", issuerDomain: "letsencrypt.org", blocking: null as any } } as any,
  });
  bidi.details.issuer = "Example CA\u202E";
  expect(await h.store.certificates.insert(bidi, { limit: 1000, events: [] })).toBe("created");
  bidiId = bidi.id;
  if (chromium.found) browser = await launchBrowser(chromium.path);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function open(path: string, width: number) {
  const html = (await owner.browser.get(path)).text.replace(/<link rel="stylesheet"[^>]*>/, `<style>${STYLESHEET}</style>`).replace(/<script[^>]*><\/script>/, "");
  const page = await browser.context.newPage();
  await page.setViewportSize({ width, height: 844 });
  await page.setContent(html);
  return page;
}

describe.skipIf(!chromium.found)("a renewal requested by the CA, on a phone", () => {
  // CONTRACT §23: "Every page works at 390 px wide with its actions reachable"; docs/console.md: "Every
  // page works at 390 px wide". CONTRACT §19 keeps the CA's explanationURL (up to 2048 characters) and the
  // page's sentence quotes it ("… (see https://…): renew it now, before a revocation."). An unbroken URL
  // wraps inside the sentence: the page never scrolls sideways, and the end of the sentence (what to
  // do) stays on screen.
  test("the certificate's page does not scroll sideways, and its sentence stays on screen", async () => {
    const api = expectData(await h.request("GET", `/v1/certificates/${requestedId}`), 200) as any;
    expect(api.renewal.state).toBe("requested");
    expect(api.renewal.explanationUrl).toBe(EXPLANATION);
    const page = await open(`/certificates/${requestedId}?mode=live`, 390);
    try {
      const verdict = await page.locator("#verdict").textContent();
      expect(verdict).toContain("renew it now");
      const right = await page.evaluate(() => document.getElementById("verdict")!.scrollWidth - document.getElementById("verdict")!.clientWidth);
      expect(right).toBeLessThanOrEqual(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    } finally {
      await page.close();
    }
  }, 30_000);
});

describe.skipIf(!chromium.found)("a right-to-left override in the issuer's name", () => {
  // docs/alerting.md: a right-to-left override "could forge a fact or reverse text", so the product writes
  // it out in notifications (core/notify/_describe.ts) and in the CLI (docs/cli.md). On the page, the
  // §23 sentence "… do not allow its issuer (Example CA‮) to issue the next one: allow that certificate
  // authority in CAA …" shows the override written out, and the instruction after it reads left to right.
  test("the words after the issuer are drawn left to right", async () => {
    const page = await open(`/certificates/${bidiId}?mode=live`, 1200);
    try {
      const order = await page.evaluate(() => {
        const p = document.getElementById("verdict")!;
        const node = p.firstChild as Text;
        const text = node.data;
        const rect = (word: string) => {
          const start = text.indexOf(word);
          const range = document.createRange();
          range.setStart(node, start);
          range.setEnd(node, start + word.length);
          const r = range.getClientRects()[0]!;
          return { left: r.left, top: r.top };
        };
        return { issue: rect("issue the next"), allow: rect("allow that certificate"), text };
      });
      expect(order.text).toContain("to issue the next one");
      // Same line, and "allow that certificate authority" comes after "issue the next one", to its right.
      expect(order.allow.top).toBe(order.issue.top);
      expect(order.allow.left).toBeGreaterThan(order.issue.left);
    } finally {
      await page.close();
    }
  }, 30_000);
});
