/**
 * Every Part III event kind delivered through the real Deliverer to every channel type, on
 * real receivers on 127.0.0.1; what the on-call person reads.
 */
import { afterEach, expect, test } from "bun:test";
import { certificate, events, world, type World } from "./support/notify_world.ts";

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});



test("renewal_requested about another address's leaf (data.endpoint): the message names that address and that leaf's expiry, not the certificate-level leaf's", async () => {
  // CONTRACT §16: "Every message names the certificate's domain and what happened." §11: the
  // certificate-level fields describe the leaf that expires first; the CA here asks to replace the
  // other address's leaf (127.0.0.2, expiring 2026-08-01), so "what happened" is about that leaf.
  w = await world(["email", "telegram", "pagerduty"]);
  await w.record("certificate.renewal_requested", {
    certificate: certificate({ status: "expiring", statusReason: "renewal_requested" }),
    window: { start: "2026-05-05T00:00:00.000Z", end: "2026-05-06T00:00:00.000Z" },
    explanationUrl: "https://letsencrypt.org/2026/05/05/incident",
    endpoint: { address: "127.0.0.2", serialNumber: "05:C3:D4", expiresAt: "2026-08-01T09:00:00.000Z" },
  });
  await w.deliverAll();
  const mail = w.smtp.messages[0]!;
  const summary = mail.text.split("\n")[0]!;
  const pd = w.at("/pd")[0]!.json;
  // The subject and the PagerDuty summary (all a pager shows) say which address must act, as the
  // overdue event about another address does ("shop.example.com at 127.0.0.2 ...").
  // The summary must not tell the reader that the leaf the CA asks to replace expires on the
  // certificate-level leaf's date (2026-05-15), a different certificate.
  expect(summary).not.toContain("expires on 2026-05-15");
  expect(summary).toContain("127.0.0.2");
  expect(mail.subject).toContain("127.0.0.2");
  expect(pd.payload.summary).toContain("127.0.0.2");
});

test("renewal_overdue under the CA's window (source ari): the message shows the window the CA suggested", async () => {
  // CONTRACT §18: "one certificate.renewal_overdue (data: { deadline, source, window, daysUntilExpiry })";
  // the deadline is "the end of its CA's suggested renewal window (§19) when one is known".
  w = await world(["email", "slack"]);
  const [type, data] = events().overdue;
  await w.record(type, data as unknown as Record<string, unknown>);
  await w.deliverAll();
  const text = w.smtp.messages[0]!.text;
  expect(text).toContain("2026-05-04 09:00 UTC"); // the deadline
  expect(text).toContain("2026-05-02 09:00 UTC"); // the window's start, which the CA chose
});
