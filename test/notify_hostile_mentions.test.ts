/**
 * The Slack payload is also what Slack-compatible servers receive (CONTRACT §6: "which Slack-compatible
 * chat servers (Mattermost, Rocket.Chat) accept too"). Slack itself links `@name` text only with
 * `link_names`, but Mattermost reads its own mentions in a webhook post's text: `@username` notifies
 * that user (mattermost/mattermost#24930), `@channel`/`@all`/`@here` the channel; Rocket.Chat likewise
 * parses `@all`/`@here` (RocketChat/Rocket.Chat#12247). A certificate's issuer is its server's to
 * write: "@channel" there would page a whole channel on every alert about that certificate. Discord is
 * protected by `allowed_mentions: { parse: [] }`; the Slack payload's text carries no live mention.
 */
import { expect, test } from "bun:test";
import type { EventRecord } from "../core/base/records.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { escapeSlack, slackPayload } from "../core/notify/chat_payloads.ts";

const e: EventRecord = {
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
      issuer: "@channel @all @here @alice",
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
  createdAt: Date.parse("2026-05-05T09:00:00.000Z"),
};

test("Slack payload (as Mattermost and Rocket.Chat read it): no @-mention from the certificate's issuer stays live", () => {
  const body = JSON.stringify(slackPayload(e, describeEvent(e)));
  expect(body).toContain("example.com");
  expect(body).not.toMatch(/(^|[^\w@])@(channel|all|here|alice)\b/);
});

test("an @ inside a word, an address or a URL is left whole (no mention there), in Slack's payload", () => {
  expect(escapeSlack("see https://ca.example/@incident and ops@example.com")).toBe("see https://ca.example/@incident and ops@example.com");
  expect(escapeSlack("(@channel) @here")).toBe("(@\u2060channel) @\u2060here");
});
