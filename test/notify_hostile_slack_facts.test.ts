/**
 * Slack's section block takes at most 10 `fields` (Block Kit reference, section block: "Maximum number
 * of items is 10"); a message takes up to 50 blocks. Part III's events about a named certificate, or
 * about the leaf another address serves (data.endpoint), have 11–12 facts, and the last ones are what
 * each kind adds (the deadline's source, the addresses still serving the old certificate, the
 * revocation reason, the CAA record to add): Slack shows them all, in a second section, as Discord,
 * Teams, Telegram, email and PagerDuty do.
 */
import { expect, test } from "bun:test";
import type { EventRecord, EventType } from "../core/base/records.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { slackPayload } from "../core/notify/chat_payloads.ts";
import { certificateView, eventOf } from "./support/notify_events.ts";

const endpoint = { address: "10.0.0.2", serialNumber: "0C:01", expiresAt: "2026-06-01T00:00:00.000Z" };

const certificate = certificateView({
  name: "Shop front",
  status: "expiring",
  statusReason: "renewal_overdue",
  daysUntilExpiry: 20,
  expiresAt: "2026-05-25T09:00:00.000Z",
  issuedAt: "2026-02-24T09:00:00.000Z",
  issuer: "Let's Encrypt",
  serialNumber: "04:A3:1F:9C",
  revocation: { status: "revoked", source: "crl", checkedAt: "2026-05-05T09:00:00.000Z", revokedAt: "2026-05-04T00:00:00.000Z", reason: "keyCompromise" },
});

const event = (type: EventType, data: Record<string, unknown>) => eventOf(type, { certificate, ...data });

const CASES: Array<[string, EventRecord]> = [
  ["renewal_overdue at another address", event("certificate.renewal_overdue", { deadline: "2026-05-04T00:00:00.000Z", source: "ari", window: null, daysUntilExpiry: 26, endpoint })],
  [
    "not_deployed of a named certificate",
    event("certificate.not_deployed", {
      deployment: { issuedAt: "2026-05-03T00:00:00.000Z", notAfter: "2026-08-01T00:00:00.000Z", servedBy: 1, endpoints: 2, issuer: "Let's Encrypt", fingerprintSha256: "AB", seenAt: "2026-05-03T00:00:00.000Z" },
      lagging: ["10.0.0.2"],
    }),
  ],
  ["revoked at another address", event("certificate.revoked", { endpoint })],
  [
    "renewal_blocked at another address",
    event("certificate.renewal_blocked", { endpoint, caa: { name: "example.com", setAt: "example.com", property: "issue", records: ['0 issue "pki.goog"'], issuerDomain: "letsencrypt.org" } }),
  ],
];

for (const [what, e] of CASES) {
  test(`Slack shows every fact of ${what}`, () => {
    const described = describeEvent(e);
    const payload = slackPayload(e, described) as { blocks: Array<{ fields?: Array<{ text: string }>; text?: { text: string } }> };
    const shown = payload.blocks.flatMap((block) => [...(block.fields ?? []).map((field) => field.text), block.text?.text ?? ""]).join("\n");
    const missing = described.facts.filter((fact) => !shown.includes(`*${fact.name}*`)).map((fact) => fact.name);
    expect(missing).toEqual([]);
  });
}
