/**
 * What a hostile TLS server writes into its certificate (the issuer's O, a chain certificate's CN)
 * reaches every channel bounded: a TLS client accepts a ~90 KB certificate (a leaf whose issuer O is
 * 90,000 U+0001 characters is read), and JSON writes each control character as a 6-byte `\u0001`, so
 * one such name would be over half a megabyte on the wire.
 *
 * - PagerDuty Events API v2: "Events API payloads are limited to 512 KB"; a 400 is not to be retried
 *   (developer.pagerduty.com, Events API v2 Overview): an incident over it is refused, the alert lost.
 * - Microsoft Teams (workflow "Post card in a chat or channel"): "the message size limit is
 *   approximately 28 KB ... the action fails with 'Request Entity too large'" (learn.microsoft.com,
 *   known issues and limitations), after the workflow answered 202: recorded delivered, posted nowhere.
 */
import { expect, test } from "bun:test";
import type { ChannelRecord, EventRecord } from "../core/base/records.ts";
import { renderNotification } from "../core/notify/payloads.ts";
import { CREATED, certificateView, channelOf, eventOf } from "./support/notify_events.ts";

const PAGERDUTY_EVENT_MAX = 512 * 1024;
const TEAMS_MESSAGE_MAX = 28 * 1024;
const certificate = certificateView;
const event = eventOf;
const channel = channelOf;

function bodies(e: EventRecord, ch: ChannelRecord): string[] {
  const rendered = renderNotification(e, ch, { now: CREATED, mailFrom: "certkeeper@alerts.example" });
  if (rendered.kind !== "http") throw new Error("expected HTTP");
  return [rendered.request, ...(rendered.followUps ?? [])].map((request) => request.body);
}

test("PagerDuty: the certificate.invalid event about a served leaf whose issuer is 90,000 control characters stays within 512 KB", () => {
  const e = event("certificate.invalid", { certificate: certificate({ issuer: "\u0001".repeat(90_000) }) });
  for (const body of bodies(e, channel("pagerduty", { routingKey: "R".repeat(32) }))) {
    expect(JSON.parse(body).payload.summary).toContain("example.com");
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(PAGERDUTY_EVENT_MAX);
  }
});

test("PagerDuty: a renewal_blocked event naming a 90,000-character issuer of quotes stays within 512 KB", () => {
  // `"` is an ordinary character of a UTF8String; JSON writes it as two bytes, and the issuer is repeated.
  const e = event("certificate.renewal_blocked", {
    certificate: certificate({ status: "valid", statusReason: null, issuer: '"'.repeat(90_000) }),
    caa: { name: "example.com", setAt: "example.com", property: "issue", records: ['0 issue "pki.goog"'] },
  });
  for (const body of bodies(e, channel("pagerduty", { routingKey: "R".repeat(32) }))) {
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(PAGERDUTY_EVENT_MAX);
  }
});

test("Teams: the card for a chain_expiring event with a hostile 10,000-character issuer and chain name stays within Teams' 28 KB", () => {
  const hostile = "\u0001".repeat(10_000);
  const e = event("certificate.chain_expiring", {
    certificate: certificate({ status: "valid", statusReason: null, issuer: hostile }),
    threshold: 30,
    chainCertificate: { subject: hostile, serialNumber: "0A:0B", expiresAt: "2026-05-20T00:00:00.000Z" },
  });
  const [body] = bodies(e, channel("teams", { webhookUrl: "https://example.webhook.office.com/workflows/x" }));
  expect(body).toContain("example.com");
  expect(Buffer.byteLength(body!)).toBeLessThanOrEqual(TEAMS_MESSAGE_MAX);
});
