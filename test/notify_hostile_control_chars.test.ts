/**
 * A served certificate's issuer (and a chain certificate's name) is its server's to write, line breaks
 * and bidirectional overrides included. In a plain-text message (Telegram, whose sendMessage has no
 * parse_mode here; the email's text part) a line break in it would forge lines that read as
 * certkeeper's own facts, and U+202E (RIGHT-TO-LEFT OVERRIDE) reverse what follows it on the line
 * (Unicode UAX #9; the "Trojan Source" class, CVE-2021-42574): an alert about an invalid certificate
 * could be made to read "Status: valid". Every channel shows such characters written out (`\x0a`).
 */
import { expect, test } from "bun:test";
import type { ChannelRecord } from "../core/base/records.ts";
import { renderNotification } from "../core/notify/payloads.ts";
import { CREATED, certificateView, channelOf, eventOf } from "./support/notify_events.ts";

const FORGED = "Evil CA\n\nStatus: valid\nExpires: 2099-01-01 00:00 UTC (in 26,000 days)\n\u202eyrtne dilav";

const invalid = eventOf("certificate.invalid", { certificate: certificateView({ issuer: FORGED }) });
const channel = channelOf;
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
