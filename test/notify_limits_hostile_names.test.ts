/**
 * What a channel sends stays within its receiver's limits whatever a certificate's names hold (they
 * are its server's and issuer's to choose: thousands of characters, emoji): Discord refuses, on every
 * retry, a message whose embed text adds up to more than 6000 characters ("Embed size exceeds maximum
 * size of 6000"), so the alert would be lost; and a cut never leaves half a character (a lone
 * surrogate, which no UTF-8 can encode) or half an escape (a trailing backslash, an unfinished
 * `&amp;`), which receivers show broken or refuse.
 */
import { expect, test } from "bun:test";
import type { ChannelRecord, EventRecord } from "../core/base/records.ts";
import { renderNotification } from "../core/notify/payloads.ts";
import { cut } from "../core/notify/_text.ts";

const CREATED = Date.parse("2025-05-05T09:00:00.000Z");

const certificate = {
  id: "cert_3kT9vQm2Xy7LpA0bN5cZ",
  domain: "example.com",
  name: "example.com",
  port: 443,
  status: "valid",
  statusReason: null,
  daysUntilExpiry: 60,
  expiresAt: "2025-07-04T10:00:00.000Z",
  issuer: "Issuer ".repeat(800),
  serialNumber: "04:A3:1F:9C",
};

const event: EventRecord = {
  id: "evt_a1B2c3D4e5F6g7H8",
  organizationId: "org_a1B2c3D4e5F6g7H8",
  mode: "live",
  type: "certificate.chain_expiring",
  certificateId: certificate.id,
  data: {
    certificate,
    threshold: 30,
    chainCertificate: { subject: "Intermediate ".repeat(500), serialNumber: "0A:0B", expiresAt: "2025-05-20T00:00:00.000Z" },
  },
  createdAt: CREATED,
};

const channel: ChannelRecord = {
  id: "ch_Z9y8X7w6V5u4T3s2",
  organizationId: "org_a1B2c3D4e5F6g7H8",
  mode: "live",
  type: "discord",
  name: "discord channel",
  enabled: true,
  filter: null,
  config: { webhookUrl: "https://discord.com/api/webhooks/1/abc" },
  signingSecret: null,
  createdAt: CREATED,
  updatedAt: CREATED,
} as ChannelRecord;

test("a Discord message about a certificate with very long names stays within Discord's 6000-character embed total", () => {
  const rendered = renderNotification(event, channel, { now: CREATED, mailFrom: "a@b.test" });
  if (rendered.kind !== "http") throw new Error("expected an HTTP request");
  const body = JSON.parse(rendered.request.body) as {
    embeds: Array<{ title?: string; description?: string; fields?: Array<{ name: string; value: string }>; footer?: { text: string }; author?: { name: string } }>;
  };
  let total = 0;
  for (const embed of body.embeds) {
    total += (embed.title ?? "").length + (embed.description ?? "").length + (embed.footer?.text ?? "").length + (embed.author?.name ?? "").length;
    for (const field of embed.fields ?? []) total += field.name.length + field.value.length;
  }
  // The message still says which certificate and what happened.
  expect(JSON.stringify(body)).toContain("example.com");
  expect(total).toBeLessThanOrEqual(6000);
});

function eventWithChainName(subject: string, port: number): EventRecord {
  return {
    id: "evt_a1B2c3D4e5F6g7H8",
    organizationId: "org_a1B2c3D4e5F6g7H8",
    mode: "live",
    type: "certificate.chain_expiring",
    certificateId: "cert_3kT9vQm2Xy7LpA0bN5cZ",
    data: {
      certificate: {
        id: "cert_3kT9vQm2Xy7LpA0bN5cZ", domain: "example.com", name: "example.com", port, status: "valid", statusReason: null,
        daysUntilExpiry: 60, expiresAt: "2025-07-04T10:00:00.000Z", issuer: "Example CA", serialNumber: "04:A3",
      },
      threshold: 30,
      chainCertificate: { subject, serialNumber: "0A:0B", expiresAt: "2025-05-20T00:00:00.000Z" },
    },
    createdAt: CREATED,
  };
}

const pagerduty: ChannelRecord = {
  id: "ch_Z9y8X7w6V5u4T3s2", organizationId: "org_a1B2c3D4e5F6g7H8", mode: "live", type: "pagerduty", name: "pd",
  enabled: true, filter: null, config: { routingKey: "R0123456789abcdef0123456789abcde" }, signingSecret: null,
  createdAt: CREATED, updatedAt: CREATED,
} as ChannelRecord;

test("a PagerDuty summary cut to 1024 characters never ends in half an emoji", () => {
  // Both parities of the prefix, so one of them puts the cut inside a surrogate pair.
  for (const port of [443, 8443]) {
    const rendered = renderNotification(eventWithChainName("🔒".repeat(700), port), pagerduty, { now: CREATED, mailFrom: "a@b.test" });
    if (rendered.kind !== "http") throw new Error("expected HTTP");
    const summary = JSON.parse(rendered.request.body).payload.summary as string;
    expect(summary.length).toBeLessThanOrEqual(1024);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(summary)).toBe(false);
  }
});

test("a cut keeps no half character, and in escaped text no half escape", () => {
  expect(cut("ab🔒cd", 4)).toBe("ab…");
  expect(cut("abc\\*def", 5, true)).toBe("abc…");
  expect(cut("ab\\\\cdef", 5, true)).toBe("ab\\\\…");
  expect(cut("x &amp; y", 5, true)).toBe("x …");
  expect(cut("x &a", 5)).toBe("x &a");
  expect(cut("short", 10, true)).toBe("short");
});

