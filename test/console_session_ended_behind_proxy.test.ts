/**
 * A form sent after the session ended goes to sign in with `next` = the page it was on, read from the
 * Referer and compared with this site as its visitors see it: behind a TLS proxy (X-Forwarded-Proto:
 * https, X-Forwarded-Host) too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { WebClient } from "./support/web_client.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000 } });
});
afterAll(async () => {
  await h?.close();
});

test("behind a TLS proxy, a form sent after the session ended still brings the user back to the page it was on", async () => {
  const browser = new WebClient(h.app, "http://localhost");
  const headers = { "x-forwarded-proto": "https" };
  const sent = await browser.post(
    "/dashboard/certificates",
    { domain: "kept.example.com", mode: "test" },
    { csrf: "ft_stale", origin: "https://localhost", referer: "https://localhost/channels?mode=test", headers },
  );
  // The post is from this site (as the browser sees it): not refused as cross-site.
  expect(sent.status).toBe(303);
  expect(sent.headers.get("location")).toBe("/sign-in?notice=session-ended&next=%2Fchannels%3Fmode%3Dtest");
});

test("behind a proxy that forwards the Host (X-Forwarded-Host), the page it was on is kept too", async () => {
  const browser = new WebClient(h.app, "http://127.0.0.1:8080");
  const headers = { "x-forwarded-proto": "https", "x-forwarded-host": "certs.example.com" };
  const sent = await browser.post(
    "/dashboard/certificates",
    { domain: "kept.example.com" },
    { csrf: "ft_stale", origin: "https://certs.example.com", referer: "https://certs.example.com/watches", headers },
  );
  expect(sent.status).toBe(303);
  expect(sent.headers.get("location")).toBe("/sign-in?notice=session-ended&next=%2Fwatches");
});
