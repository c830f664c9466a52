/**
 * Events as the notification renderers receive them, for tests of what a channel is sent: a
 * certificate's snapshot (CONTRACT §5's fields; an invalid one by default), an event carrying data,
 * and a channel of a type.
 */
import type { ChannelRecord, ChannelType, EventRecord, EventType } from "../../core/base/records.ts";

export const CREATED = Date.parse("2026-05-05T09:00:00.000Z");
const CERTIFICATE_ID = "cert_3kT9vQm2Xy7LpA0bN5cZ";

/** A certificate's snapshot in an event: example.com, invalid (its issuer untrusted), with `overrides`. */
export function certificateView(overrides: Record<string, unknown> = {}) {
  return {
    id: CERTIFICATE_ID,
    domain: "example.com",
    name: "example.com",
    status: "invalid",
    statusReason: "untrusted_issuer",
    daysUntilExpiry: 29,
    expiresAt: "2026-06-04T09:00:00.000Z",
    issuedAt: "2026-05-04T09:00:00.000Z",
    issuer: "Evil CA",
    subject: "example.com",
    subjectAlternativeNames: ["example.com"],
    serialNumber: "01",
    signatureAlgorithm: "ecdsa-with-SHA256",
    port: 443,
    alertThresholds: [30, 14, 7, 3, 1],
    chain: [],
    tags: [],
    mutedUntil: null,
    ...overrides,
  };
}

/** An event of `type` about that certificate, with `data`, created at CREATED. */
export function eventOf(type: EventType, data: Record<string, unknown>): EventRecord {
  return { id: "evt_a1B2c3D4e5F6g7H8", organizationId: "org_a1B2c3D4e5F6g7H8", mode: "live", type, certificateId: CERTIFICATE_ID, data, createdAt: CREATED };
}

/** A channel of `type` with `config`. */
export function channelOf(type: ChannelType, config: Record<string, unknown>): ChannelRecord {
  return { id: "ch_Z9y8X7w6V5u4T3s2", organizationId: "org_a1B2c3D4e5F6g7H8", mode: "live", type, name: type, enabled: true, filter: null, config, signingSecret: null, createdAt: CREATED, updatedAt: CREATED } as ChannelRecord;
}
