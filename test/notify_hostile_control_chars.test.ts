/**
 * A served certificate's issuer (and a chain certificate's name) is its server's to write, line breaks
 * and bidirectional overrides included. In a plain-text message (Telegram, whose sendMessage has no
 * parse_mode here; the email's text part) a line break in it would forge lines that read as
 * certkeeper's own facts, and U+202E (RIGHT-TO-LEFT OVERRIDE) reverse what follows it on the line
 * (Unicode UAX #9; the "Trojan Source" class, CVE-2021-42574): an alert about an invalid certificate
 * could be made to read "Status: valid". Every channel shows such characters written out (`\x0a`).
 */
import { expect, test } from "bun:test";
import type { ChannelRecord, ChannelType, EventRecord } from "../core/base/records.ts";
import { renderNotification } from "../core/notify/payloads.ts";

const CREATED = Date.parse("2026-05-05T09:00:00.000Z");
const FORGED = "Evil CA\n\nStatus: valid\nExpires: 2099-01-01 00:00 UTC (in 26,000 days)\n\u202eyrtne dilav";

const invalid: EventRecord = {
  id: "evt_a1B2c3D4e5F6g7H8",
  organizationId: "org_a1B2c3D4e5F6g7H8",
  mode: "live",
  type: "certificate.invalid",
  certificateId: "cert_3kT9vQm2Xy7LpA0bN5cZ",
  data: {
    certificate: {
      id: "cert_3kT9vQm2Xy7LpA0bN5cZ",
      domain: "example.com",
      name: "example.com",
      status: "invalid",
      statusReason: "untrusted_issuer",
      daysUntilExpiry: 29,
      expiresAt: "2026-06-04T09:00:00.000Z",
      issuedAt: "2026-05-04T09:00:00.000Z",
      issuer: FORGED,
      subject: "example.com",
      subjectAlternativeNames: ["example.com"],
      serialNumber: "01",
      signatureAlgorithm: "ecdsa-with-SHA256",
      port: 443,
      alertThresholds: [30, 14, 7, 3, 1],
      chain: [],
      tags: [],
      mutedUntil: null,
    },
  },
  createdAt: CREATED,
};

function channel(type: ChannelType, config: Record<string, unknown>): ChannelRecord {
  return { id: "ch_Z9y8X7w6V5u4T3s2", organizationId: "org_a1B2c3D4e5F6g7H8", mode: "live", type, name: type, enabled: true, filter: null, config, signingSecret: null, createdAt: CREATED, updatedAt: CREATED } as ChannelRecord;
}
const render = (ch: ChannelRecord) => renderNotification(invalid, ch, { now: CREATED, mailFrom: "certkeeper@alerts.example" });

/** Lines of `text` that state a status, as certkeeper's own fact line does. */
const statusLines = (text: string) => text.split(/\r\n|\r|\n|\u2028|\u2029/).filter((line) => /^\s*Status\s*:/.test(line));

test("Telegram: the issuer's line breaks forge no fact line, and no bidirectional override reaches the text", () => {
  const rendered = render(channel("telegram", { botToken: "123:abc", chatId: 42 }));
  if (rendered.kind !== "http") throw new Error("expected HTTP");
  const text = JSON.parse(rendered.request.body).text as string;
  expect(statusLines(text)).toEqual(["Status: invalid (untrusted_issuer)"]);
  expect(text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
});

test("email: the text part's facts cannot be forged by the issuer, and no bidirectional override reaches it", () => {
  const rendered = render(channel("email", { email: "ops@example.com" }));
  if (rendered.kind !== "email") throw new Error("expected email");
  expect(statusLines(rendered.message.text).length).toBe(1);
  expect(statusLines(rendered.message.text)[0]).toContain("invalid");
  expect(rendered.message.text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
});

test("Slack, Discord, Teams: no bidirectional override from the certificate reaches the message", () => {
  for (const ch of [
    channel("slack", { webhookUrl: "https://hooks.slack.com/services/T/B/X" }),
    channel("discord", { webhookUrl: "https://discord.com/api/webhooks/1/x" }),
    channel("teams", { webhookUrl: "https://example.webhook.office.com/workflows/x" }),
  ]) {
    const rendered = render(ch);
    if (rendered.kind !== "http") throw new Error("expected HTTP");
    expect(rendered.request.body).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  }
});
