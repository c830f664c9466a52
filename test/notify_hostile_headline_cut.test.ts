/**
 * The headline (email subject, PagerDuty summary, Telegram's first line; Teams' first line too) puts a
 * name the certificate's server chose before what happened: "example.com: chain certificate <chain
 * CN> expires on <date>", "example.com: CAA records forbid <issuer>, the next renewal will fail". Such a
 * name is shown at most 256 characters long, so every channel that cuts the headline keeps what happened
 * and when (CONTRACT §16: "Every message names the certificate's domain and what happened"):
 *
 * - PagerDuty keeps 1024 characters of `payload.summary` (Events API v2, "The maximum permitted
 *   length of this property is 1024 characters");
 * - Telegram keeps 4096 characters (Bot API sendMessage: "1-4096 characters");
 * - an email subject is one line of at most 998 characters (RFC 5322 §2.1.1).
 */
import { expect, test } from "bun:test";
import type { EventRecord } from "../core/base/records.ts";
import { certificateView, eventOf } from "./support/notify_events.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { pagerdutyRequests } from "../core/notify/pagerduty_payload.ts";
import { telegramPayload } from "../core/notify/telegram_payload.ts";

const LONG = "Intermediate Certification Authority ".repeat(150); // 5,550 characters, all printable

/** A valid certificate's snapshot, names chosen by `overrides`. */
const certificate = (overrides: Record<string, unknown> = {}) =>
  certificateView({
    status: "valid",
    statusReason: null,
    daysUntilExpiry: 60,
    expiresAt: "2026-07-04T10:00:00.000Z",
    issuedAt: "2026-04-04T10:00:00.000Z",
    issuer: "Let's Encrypt",
    serialNumber: "04:A3:1F:9C",
    signatureAlgorithm: "sha256WithRSAEncryption",
    ...overrides,
  });
const event = eventOf;

const chainExpiring = event("certificate.chain_expiring", {
  certificate: certificate(),
  threshold: 30,
  chainCertificate: { subject: LONG, serialNumber: "0A:0B", expiresAt: "2026-05-20T00:00:00.000Z" },
});
const renewalBlocked = event("certificate.renewal_blocked", {
  certificate: certificate({ issuer: LONG }),
  caa: { name: "example.com", setAt: "example.com", property: "issue", records: ['0 issue "pki.goog"'] },
});

const pagerdutySummary = (e: EventRecord) =>
  JSON.parse(pagerdutyRequests(e, describeEvent(e), { baseUrl: "https://events.pagerduty.com", routingKey: "R".repeat(32) })[0]!.body).payload.summary as string;

test("PagerDuty: a chain_expiring incident with a long chain CN still says it expires and when", () => {
  const summary = pagerdutySummary(chainExpiring);
  expect(summary.length).toBeLessThanOrEqual(1024);
  expect(summary).toContain("example.com");
  expect(summary).toContain("2026-05-20");
});

test("PagerDuty: a renewal_blocked incident with a long issuer name still says the next renewal will fail", () => {
  const summary = pagerdutySummary(renewalBlocked);
  expect(summary.length).toBeLessThanOrEqual(1024);
  expect(summary).toContain("renewal will fail");
});

test("Telegram: a chain_expiring message with a long chain CN still says when it expires", () => {
  const { text } = telegramPayload(chainExpiring, describeEvent(chainExpiring), 42);
  expect(text.length).toBeLessThanOrEqual(4096);
  expect(text).toContain("2026-05-20");
});

test("email: the subject (the headline) stays within one 998-character line and still says what happened", () => {
  for (const [e, happened] of [[chainExpiring, "2026-05-20"], [renewalBlocked, "renewal will fail"]] as const) {
    const subject = describeEvent(e).headline;
    expect(subject.length).toBeLessThanOrEqual(998);
    expect(subject).toContain(happened);
  }
});
