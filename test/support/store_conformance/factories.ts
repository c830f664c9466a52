/**
 * The records the store conformance suite writes: each complete and valid, with fresh ids, built
 * around {@link NOW}; `overrides` set any field.
 */
import type { CertificateDetails, RevocationState } from "../../../core/base/records.ts";
import type { CheckOutcome } from "../../../core/monitor/mod.ts";
import {
  PLAN_LIMITS,
  type ApiKeyRecord,
  type CertificateRecord,
  type ChannelRecord,
  type DeliveryRecord,
  type EventRecord,
  type OrganizationRecord,
  type Scope,
  type SessionRecord,
  type UserRecord,
} from "../../../core/base/records.ts";
import { newId, randomBase62 } from "../../../core/base/ids.ts";
import { DAY, HOUR } from "../../../core/base/time.ts";

/** The time the suite's records are built around. */
export const NOW = Date.UTC(2031, 4, 1, 12, 0, 0);

export function hex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

export function organizationRecord(overrides: Partial<OrganizationRecord> = {}): OrganizationRecord {
  return { id: newId("org"), name: "Acme Corp", plan: "pro", limits: { ...PLAN_LIMITS.pro }, createdAt: NOW - 30 * DAY, ...overrides };
}

export function userRecord(organizationId: string, overrides: Partial<UserRecord> = {}): UserRecord {
  const id = newId("usr");
  return {
    id,
    organizationId,
    email: `${id.toLowerCase()}@example.com`,
    role: "admin",
    passwordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo",
    createdAt: NOW - 20 * DAY,
    ...overrides,
  };
}

export function apiKeyRecord(user: UserRecord, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: newId("key"),
    userId: user.id,
    organizationId: user.organizationId,
    name: "Deploy pipeline",
    mode: "live",
    hash: hex(32),
    last4: randomBase62(4),
    createdAt: NOW - 10 * DAY,
    lastUsedAt: null,
    revokedAt: null,
    ...overrides,
  };
}

const fingerprint = () => hex(32).toUpperCase().match(/../g)!.join(":");

/** A check that found `details` served, alone, by one answering address. */
export function servedOutcome(details: CertificateDetails): CheckOutcome {
  return {
    ok: true,
    fingerprint: details.fingerprintSha256!,
    details,
    problem: null,
    endpoints: [{ address: "127.0.0.1", fingerprint: details.fingerprintSha256!, details, problem: null, failure: null, tls: null }],
  };
}

export function certificateDetails(domain: string, overrides: Partial<CertificateDetails> = {}): CertificateDetails {
  const { notBefore = NOW - 30 * DAY, notAfter = NOW + 60 * DAY, ...fields } = overrides;
  return {
    serialNumber: hex(16).toUpperCase().match(/../g)!.join(":"),
    notBefore,
    notAfter,
    issuer: "certkeeper Test CA",
    subject: domain,
    subjectAlternativeNames: [domain, `www.${domain}`],
    signatureAlgorithm: "sha256WithRSAEncryption",
    chain: [
      { subject: domain, issuer: "certkeeper Test RSA CA", validFrom: new Date(notBefore).toISOString(), validTo: new Date(notAfter).toISOString(), serialNumber: "0A:1B", fingerprintSha256: fingerprint() },
      { subject: "certkeeper Test RSA CA", issuer: "certkeeper Test Root CA", validFrom: "2030-01-01T00:00:00.000Z", validTo: "2040-01-01T00:00:00.000Z", serialNumber: "0C:1D", fingerprintSha256: fingerprint() },
    ],
    fingerprintSha256: fingerprint(),
    publicKey: { algorithm: "RSA", size: 2048, curve: null },
    warnings: [],
    chainExpiry: null,
    ...fields,
  };
}

/** A checked certificate of `scope`; `notBefore`/`notAfter` set those of its details. */
export function certificateRecord(
  scope: Scope,
  overrides: Partial<CertificateRecord> & { notBefore?: number; notAfter?: number; revocation?: RevocationState } = {},
): CertificateRecord {
  const { notBefore, notAfter, revocation, ...fields } = overrides;
  const domain = fields.domain ?? `${randomBase62(10).toLowerCase()}.example.com`;
  return {
    organizationId: scope.organizationId,
    mode: scope.mode,
    id: newId("cert"),
    domain,
    port: 443,
    name: "Main site",
    alertThresholds: [30, 14, 7, 3, 1],
    alertPolicy: "days",
    deployment: null,
    tags: [],
    mutedUntil: null,
    createdAt: NOW - DAY,
    updatedAt: NOW - DAY,
    fingerprint: hex(32),
    details: certificateDetails(domain, { notBefore, notAfter, ...(revocation ? { revocation } : {}) }),
    problem: null,
    protocol: "tls",
    connectTo: null,
    tls: { protocol: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256" },
    endpoints: [],
    alertMemory: { leaves: [], chain: [] },
    lastCheckedAt: NOW - DAY,
    failure: null,
    failureCount: 0,
    alertedThreshold: null,
    expiryAlerted: false,
    health: "ok",
    nextCheckAt: NOW + HOUR,
    version: 0,
    ...fields,
  };
}

export function eventRecord(scope: Scope, overrides: Partial<EventRecord> = {}): EventRecord {
  return {
    organizationId: scope.organizationId,
    mode: scope.mode,
    id: newId("evt"),
    type: "certificate.expiring",
    certificateId: null,
    data: { certificate: { id: "cert_x", domain: "example.com", daysUntilExpiry: 29 }, threshold: 30 },
    createdAt: NOW,
    ...overrides,
  };
}

export function channelRecord(scope: Scope, overrides: Partial<ChannelRecord> = {}): ChannelRecord {
  return {
    organizationId: scope.organizationId,
    mode: scope.mode,
    id: newId("ch"),
    type: "webhook",
    name: "Ops webhook",
    enabled: true,
    config: { url: "https://hooks.example.com/certkeeper", headers: { "X-Token": "s3cret" } },
    signingSecret: `whsec_${randomBase62(32)}`,
    filter: null,
    createdAt: NOW - 5 * DAY,
    updatedAt: NOW - 5 * DAY,
    ...overrides,
  };
}

export function deliveryRecord(eventId: string, channelId: string, overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return { eventId, channelId, status: "pending", attempts: 0, nextAttemptAt: NOW, lastError: null, updatedAt: NOW, ...overrides };
}

export function sessionRecord(user: { id: string; organizationId: string }, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: hex(32),
    userId: user.id,
    organizationId: user.organizationId,
    createdAt: NOW,
    lastSeenAt: NOW,
    expiresAt: NOW + 12 * HOUR,
    ...overrides,
  };
}
