/**
 * The store conformance suite (STYLE §5, after Lucia's `adapter-test`): every behaviour that
 * core/store/ports.ts documents, registered as bun:test blocks and run against any {@link Store}.
 *
 * One store serves the whole suite, as one database serves every process in production, so tests
 * keep to organizations of their own and never assume they are alone. Only the operations that span
 * all organizations (leases, next-due times, listAll) see other tests' data: their tests first park
 * every leftover lease far in the future ({@link parkLeftovers}) and then use times before it.
 *
 * @example
 * describeStoreConformance("memory", async () => {
 *   const store = createMemoryStore();
 *   return { store, close: () => store.close() };
 * });
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DuplicateError, type Store } from "../../core/store/ports.ts";
import { certificateStatus, CERTIFICATE_STATUSES, type CertificateStatus } from "../../core/certificates/status.ts";
import type { CertificateDetails } from "../../core/tls/certificate_parse.ts";
import {
  PLAN_LIMITS,
  type ApiKeyRecord,
  type CertificateRecord,
  type ChannelRecord,
  type DeliveryRecord,
  type EventRecord,
  type OrganizationRecord,
  type Scope,
  type UserRecord,
} from "../../core/model.ts";
import { newId, randomBase62 } from "../../core/ids.ts";
import { DAY, HOUR, MINUTE } from "../../core/time.ts";
import { describeSettingsConformance, sessionRecord } from "./store_conformance_sessions.ts";

export interface OpenedStore {
  store: Store;
  close(): Promise<void>;
}

export interface ConformanceOptions {
  /** Whether the store offers `changeToken()` (default true); a store that cannot tell must not. */
  changeToken?: boolean;
}

/** The time the suite's records are built around. */
export const NOW = Date.UTC(2031, 4, 1, 12, 0, 0);
/** Later than any time a test uses: where {@link parkLeftovers} moves other tests' leases. */
const PARKED = 9e15;

// ---------------------------------------------------------------------------------------------------
// Records

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
      { subject: domain, issuer: "certkeeper Test RSA CA", validFrom: new Date(notBefore).toISOString(), validTo: new Date(notAfter).toISOString() },
      { subject: "certkeeper Test RSA CA", issuer: "certkeeper Test Root CA", validFrom: "2030-01-01T00:00:00.000Z", validTo: "2040-01-01T00:00:00.000Z" },
    ],
    ...fields,
  };
}

/** A checked certificate of `scope`; `notBefore`/`notAfter` set those of its details. */
export function certificateRecord(
  scope: Scope,
  overrides: Partial<CertificateRecord> & { notBefore?: number; notAfter?: number } = {},
): CertificateRecord {
  const { notBefore, notAfter, ...fields } = overrides;
  const domain = fields.domain ?? `${randomBase62(10).toLowerCase()}.example.com`;
  return {
    organizationId: scope.organizationId,
    mode: scope.mode,
    id: newId("cert"),
    domain,
    port: 443,
    name: "Main site",
    alertThresholds: [30, 14, 7, 3, 1],
    createdAt: NOW - DAY,
    updatedAt: NOW - DAY,
    fingerprint: hex(32),
    details: certificateDetails(domain, { notBefore, notAfter }),
    problem: null,
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
    createdAt: NOW - 5 * DAY,
    updatedAt: NOW - 5 * DAY,
    ...overrides,
  };
}

export function deliveryRecord(eventId: string, channelId: string, overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return { eventId, channelId, status: "pending", attempts: 0, nextAttemptAt: NOW, lastError: null, updatedAt: NOW, ...overrides };
}

// ---------------------------------------------------------------------------------------------------
// Helpers over a store

/** A new organization, its live and test scopes. */
async function newOrganization(store: Store) {
  const org = organizationRecord();
  await store.organizations.create(org);
  return { org, live: { organizationId: org.id, mode: "live" } as Scope, test: { organizationId: org.id, mode: "test" } as Scope };
}

async function addCertificate(store: Store, record: CertificateRecord, events: EventRecord[] = []): Promise<CertificateRecord> {
  expect(await store.certificates.insert(record, { limit: 1000, events })).toBe("created");
  return record;
}

async function addChannel(store: Store, record: ChannelRecord): Promise<ChannelRecord> {
  expect(await store.channels.insert(record, { limit: 1000 })).toBe(true);
  return record;
}

/** Leases every due certificate and delivery, whoever's, until {@link PARKED}. */
async function parkLeftovers(store: Store): Promise<void> {
  const lease = { owner: "parking", now: PARKED - 1, leaseUntil: PARKED, limit: 500 };
  // Bounded: a store whose leases do not hold would hand out the same work forever.
  for (let round = 0; (await store.certificates.claimDue(lease)).length > 0; round++) {
    if (round === 20) throw new Error("claimDue() keeps handing out leased certificates");
  }
  for (let round = 0; (await store.events.claimDueDeliveries(lease)).length > 0; round++) {
    if (round === 20) throw new Error("claimDueDeliveries() keeps handing out leased deliveries");
  }
}

/** The deliveries of an event, by channel id (the ports leave their order open). */
async function deliveriesOf(store: Store, scope: Scope, eventId: string): Promise<DeliveryRecord[]> {
  const event = await store.events.get(scope, eventId);
  expect(event).not.toBeNull();
  return byChannel(event!.deliveries);
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byExpiry = (a: CertificateRecord, b: CertificateRecord) => a.details.notAfter - b.details.notAfter || compareIds(a.id, b.id);
const byNewest = (a: ChannelRecord, b: ChannelRecord) => b.createdAt - a.createdAt || compareIds(b.id, a.id);
const byChannel = (deliveries: DeliveryRecord[]) => [...deliveries].sort((a, b) => compareIds(a.channelId, b.channelId));
const ids = (records: Array<{ id: string }>) => records.map((r) => r.id);
const sortedIds = (records: Array<{ id: string }>) => ids(records).sort(compareIds);
const deliveryKeys = (jobs: Array<{ delivery: DeliveryRecord }>) => jobs.map((j) => `${j.delivery.eventId} ${j.delivery.channelId}`).sort();

// ---------------------------------------------------------------------------------------------------
// The suite

/**
 * Registers the suite for one store. `open` must give an empty store; it is opened once, before the
 * suite, and closed after it.
 */
export function describeStoreConformance(name: string, open: () => Promise<OpenedStore>, options: ConformanceOptions = {}): void {
  describe(`${name} store`, () => {
    let opened: OpenedStore | undefined;
    let store: Store;
    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    test("a new store is empty and answers ping()", async () => {
      await store.ping();
      expect(await store.certificates.nextDueAt()).toBeNull();
      expect(await store.events.nextDeliveryAt()).toBeNull();
      expect(await store.certificates.listAll({ limit: 10 })).toEqual([]);
      expect(await store.organizations.list()).toEqual([]);
    });

    describeAccounts(() => store);
    describeCertificateWrites(() => store);
    describeCertificateReads(() => store);
    describeCertificateLeases(() => store);
    describeChannels(() => store);
    describeEvents(() => store);
    describeDeliveries(() => store);
    describeRateLimits(() => store);
    describeSettingsConformance(() => store);
    describeChangeToken(() => store, options.changeToken ?? true);
  });
}

function describeAccounts(get: () => Store) {
  describe("organizations, users and API keys", () => {
    test("organizations.create() stores an organization that get() and list() return", async () => {
      const store = get();
      const org = organizationRecord({ plan: "free", limits: { certificates: 3, channels: 2, requestsPerMinute: 10 } });
      await store.organizations.create(org);
      expect(await store.organizations.get(org.id)).toEqual(org);
      expect((await store.organizations.list()).filter((o) => o.id === org.id)).toEqual([org]);
      expect(await store.organizations.get(newId("org"))).toBeNull();
    });

    test("users: create, get, findByEmail, list by organization, update", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const other = await newOrganization(store);
      const owner = userRecord(org.id, { role: "owner" });
      const member = userRecord(org.id, { role: "member", passwordHash: null, createdAt: NOW - DAY });
      const stranger = userRecord(other.org.id);
      for (const user of [owner, member, stranger]) await store.users.create(user);

      expect(await store.users.get(owner.id)).toEqual(owner);
      expect(await store.users.get(member.id)).toEqual(member);
      expect(await store.users.findByEmail(member.email)).toEqual(member);
      expect(await store.users.findByEmail("nobody@example.com")).toBeNull();
      expect(sortedIds(await store.users.list(org.id))).toEqual(sortedIds([owner, member]));

      const promoted = await store.users.update(member.id, { role: "admin" });
      expect(promoted).toEqual({ ...member, role: "admin" });
      const withPassword = await store.users.update(member.id, { passwordHash: "$argon2id$new" });
      expect(withPassword).toEqual({ ...member, role: "admin", passwordHash: "$argon2id$new" });
      expect(await store.users.get(member.id)).toEqual(withPassword);
      expect(await store.users.update(newId("usr"), { role: "owner" })).toBeNull();
    });

    test("users.create() throws DuplicateError when the email is taken, and stores nothing", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const first = userRecord(org.id);
      await store.users.create(first);
      const second = userRecord(org.id, { email: first.email });
      await expect(store.users.create(second)).rejects.toBeInstanceOf(DuplicateError);
      expect(await store.users.get(second.id)).toBeNull();
      expect(await store.users.findByEmail(first.email)).toEqual(first);
    });

    test("apiKeys: create, get, list newest first per organization", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const other = await newOrganization(store);
      const user = userRecord(org.id);
      const stranger = userRecord(other.org.id);
      await store.users.create(user);
      await store.users.create(stranger);
      const oldest = apiKeyRecord(user, { createdAt: NOW - 3 * DAY });
      const newest = apiKeyRecord(user, { createdAt: NOW - DAY, mode: "test" });
      const middle = apiKeyRecord(user, { createdAt: NOW - 2 * DAY, lastUsedAt: NOW - DAY, revokedAt: NOW });
      const foreign = apiKeyRecord(stranger);
      for (const key of [oldest, newest, middle, foreign]) await store.apiKeys.create(key);

      expect(await store.apiKeys.get(middle.id)).toEqual(middle);
      expect(await store.apiKeys.get(newId("key"))).toBeNull();
      expect(await store.apiKeys.list(org.id)).toEqual([newest, middle, oldest]);
    });

    test("apiKeys.create() throws DuplicateError when the hash is taken", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const user = userRecord(org.id);
      await store.users.create(user);
      const key = apiKeyRecord(user);
      await store.apiKeys.create(key);
      const copy = apiKeyRecord(user, { hash: key.hash });
      await expect(store.apiKeys.create(copy)).rejects.toBeInstanceOf(DuplicateError);
      expect(await store.apiKeys.get(copy.id)).toBeNull();
    });

    test("findByHash() returns the key with its user and organization; null for an unknown hash", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const user = userRecord(org.id, { role: "member" });
      await store.users.create(user);
      const key = apiKeyRecord(user, { mode: "test" });
      await store.apiKeys.create(key);
      expect(await store.apiKeys.findByHash(key.hash)).toEqual({ key, user, organization: org });
      expect(await store.apiKeys.findByHash(hex(32))).toBeNull();
    });

    test("users.remove() revokes the user's keys at `at` and findByHash() then has no user", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const leaving = userRecord(org.id);
      const staying = userRecord(org.id);
      await store.users.create(leaving);
      await store.users.create(staying);
      const active = apiKeyRecord(leaving);
      const revokedEarlier = apiKeyRecord(leaving, { revokedAt: NOW - DAY });
      const colleagues = apiKeyRecord(staying);
      for (const key of [active, revokedEarlier, colleagues]) await store.apiKeys.create(key);

      expect(await store.users.remove(leaving.id, NOW)).toBe(true);
      expect(await store.users.get(leaving.id)).toBeNull();
      expect(await store.users.findByEmail(leaving.email)).toBeNull();
      expect(await store.apiKeys.findByHash(active.hash)).toEqual({ key: { ...active, revokedAt: NOW }, user: null, organization: org });
      expect(await store.apiKeys.get(revokedEarlier.id)).toEqual(revokedEarlier);
      expect(await store.apiKeys.get(colleagues.id)).toEqual(colleagues);
      expect(await store.users.remove(leaving.id, NOW)).toBe(false);
    });

    test("revoke() sets revokedAt once: revoking again keeps the first time", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const user = userRecord(org.id);
      await store.users.create(user);
      const key = apiKeyRecord(user);
      await store.apiKeys.create(key);
      expect(await store.apiKeys.revoke(key.id, NOW)).toEqual({ ...key, revokedAt: NOW });
      expect(await store.apiKeys.revoke(key.id, NOW + HOUR)).toEqual({ ...key, revokedAt: NOW });
      expect((await store.apiKeys.findByHash(key.hash))?.key.revokedAt).toBe(NOW);
      expect(await store.apiKeys.revoke(newId("key"), NOW)).toBeNull();
    });

    test("touch() keeps the latest lastUsedAt, whatever order uses arrive in", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const user = userRecord(org.id);
      await store.users.create(user);
      const a = apiKeyRecord(user);
      const b = apiKeyRecord(user);
      await store.apiKeys.create(a);
      await store.apiKeys.create(b);
      await store.apiKeys.touch([
        { id: a.id, at: NOW + 200 },
        { id: a.id, at: NOW + 150 },
        { id: b.id, at: NOW + 10 },
        { id: newId("key"), at: NOW },
      ]);
      expect((await store.apiKeys.get(a.id))?.lastUsedAt).toBe(NOW + 200);
      expect((await store.apiKeys.get(b.id))?.lastUsedAt).toBe(NOW + 10);
      await store.apiKeys.touch([{ id: a.id, at: NOW + 100 }]);
      expect((await store.apiKeys.get(a.id))?.lastUsedAt).toBe(NOW + 200);
      await store.apiKeys.touch([{ id: b.id, at: NOW + 300 }]);
      expect(await store.apiKeys.get(b.id)).toEqual({ ...b, lastUsedAt: NOW + 300 });
      await store.apiKeys.touch([]);
    });
  });
}

function describeCertificateWrites(get: () => Store) {
  describe("certificates: insert, updateSettings, remove", () => {
    test("insert() stores the record as given; get() and findByDomain() return it", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = certificateRecord(live, {
        port: 8443,
        alertThresholds: [60, 30],
        problem: "untrusted_issuer",
        failure: "timeout",
        failureCount: 3,
        alertedThreshold: 30,
        expiryAlerted: true,
        health: "unreachable",
        version: 4,
      });
      expect(await store.certificates.insert(record, { limit: 5, events: [] })).toBe("created");
      expect(await store.certificates.get(live, record.id)).toEqual(record);
      expect(await store.certificates.findByDomain(live, record.domain, 8443)).toEqual(record);
      expect(await store.certificates.findByDomain(live, record.domain, 443)).toBeNull();
      expect(await store.certificates.count(live)).toBe(1);
    });

    test("another organization or mode sees nothing of a scope's certificates", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      for (const scope of [testScope, other.live]) {
        expect(await store.certificates.get(scope, record.id)).toBeNull();
        expect(await store.certificates.findByDomain(scope, record.domain, record.port)).toBeNull();
        expect(await store.certificates.count(scope)).toBe(0);
        expect(await store.certificates.list(scope, { limit: 10, now: NOW })).toEqual([]);
      }
    });

    test("insert() refuses a domain and port already monitored in the scope, but not in another scope or on another port", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const first = await addCertificate(store, certificateRecord(live));
      const again = certificateRecord(live, { domain: first.domain });
      expect(await store.certificates.insert(again, { limit: 10, events: [] })).toBe("duplicate");
      expect(await store.certificates.get(live, again.id)).toBeNull();
      expect(await store.certificates.get(live, first.id)).toEqual(first);
      await addCertificate(store, certificateRecord(live, { domain: first.domain, port: 8443 }));
      await addCertificate(store, certificateRecord(testScope, { domain: first.domain }));
      await addCertificate(store, certificateRecord(other.live, { domain: first.domain }));
      expect(await store.certificates.count(live)).toBe(2);
    });

    test("insert() refuses once the scope holds `limit` certificates; a duplicate is still reported as duplicate", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const a = certificateRecord(live);
      expect(await store.certificates.insert(a, { limit: 2, events: [] })).toBe("created");
      expect(await store.certificates.insert(certificateRecord(live), { limit: 2, events: [] })).toBe("created");
      const third = certificateRecord(live);
      expect(await store.certificates.insert(third, { limit: 2, events: [] })).toBe("limit_reached");
      expect(await store.certificates.get(live, third.id)).toBeNull();
      expect(await store.certificates.insert(certificateRecord(live, { domain: a.domain }), { limit: 2, events: [] })).toBe("duplicate");
      expect(await store.certificates.count(live)).toBe(2);
      // The limit counts one scope only.
      expect(await store.certificates.insert(certificateRecord(testScope), { limit: 2, events: [] })).toBe("created");
    });

    test("insert() stores its events with a pending delivery to each enabled channel of the same organization and mode", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const enabled = await addChannel(store, channelRecord(live));
      const alsoEnabled = await addChannel(store, channelRecord(live, { type: "email", config: { email: "ops@example.com" }, signingSecret: null }));
      await addChannel(store, channelRecord(live, { enabled: false }));
      await addChannel(store, channelRecord(testScope));
      await addChannel(store, channelRecord(other.live));

      const record = certificateRecord(live);
      const events = [
        eventRecord(live, { certificateId: record.id, type: "certificate.invalid", createdAt: NOW }),
        eventRecord(live, { certificateId: record.id, type: "certificate.expiring", createdAt: NOW }),
      ];
      await addCertificate(store, record, events);
      for (const event of events) {
        const stored = await store.events.get(live, event.id);
        expect(stored).toMatchObject(event);
        expect(stored!.deliveries.map((d) => d.channelId).sort()).toEqual([enabled.id, alsoEnabled.id].sort());
        for (const delivery of stored!.deliveries) {
          expect(delivery).toMatchObject({ eventId: event.id, status: "pending", attempts: 0, lastError: null });
        }
      }
    });

    test("insert() stores no events when it refuses the certificate", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      await addChannel(store, channelRecord(live));
      const first = await addCertificate(store, certificateRecord(live));
      const duplicate = certificateRecord(live, { domain: first.domain });
      const duplicateEvent = eventRecord(live, { certificateId: duplicate.id });
      expect(await store.certificates.insert(duplicate, { limit: 10, events: [duplicateEvent] })).toBe("duplicate");
      const overLimit = certificateRecord(live);
      const overLimitEvent = eventRecord(live, { certificateId: overLimit.id });
      expect(await store.certificates.insert(overLimit, { limit: 1, events: [overLimitEvent] })).toBe("limit_reached");
      expect(await store.events.get(live, duplicateEvent.id)).toBeNull();
      expect(await store.events.get(live, overLimitEvent.id)).toBeNull();
      expect(await store.events.list(live, { limit: 10 })).toEqual([]);
    });

    test("ten concurrent inserts of one domain and port: exactly one is created", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const domain = `${randomBase62(10).toLowerCase()}.example.com`;
      const results = await Promise.all(
        Array.from({ length: 10 }, () => store.certificates.insert(certificateRecord(live, { domain }), { limit: 25, events: [] })),
      );
      expect(results.filter((r) => r === "created")).toHaveLength(1);
      expect(results.filter((r) => r === "duplicate")).toHaveLength(9);
      expect(await store.certificates.count(live)).toBe(1);
    });

    test("ten concurrent inserts of distinct domains never pass the limit", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const results = await Promise.all(
        Array.from({ length: 10 }, () => store.certificates.insert(certificateRecord(live), { limit: 3, events: [] })),
      );
      expect(results.filter((r) => r === "created")).toHaveLength(3);
      expect(results.filter((r) => r === "limit_reached")).toHaveLength(7);
      expect(await store.certificates.count(live)).toBe(3);
    });

    test("updateSettings() with a name changes it and bumps the version, leaving nextCheckAt and thresholds", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live, { version: 2, nextCheckAt: NOW + HOUR }));
      const updated = await store.certificates.updateSettings(live, record.id, { name: "Shop", updatedAt: NOW });
      expect(updated).toEqual({ ...record, name: "Shop", updatedAt: NOW, version: 3 });
      expect(await store.certificates.get(live, record.id)).toEqual(updated);
      const again = await store.certificates.updateSettings(live, record.id, { updatedAt: NOW + 1 });
      expect(again).toEqual({ ...record, name: "Shop", updatedAt: NOW + 1, version: 4 });
    });

    test("updateSettings() with new thresholds makes the certificate due at once", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW + 6 * HOUR }));
      const updated = await store.certificates.updateSettings(live, record.id, { alertThresholds: [45, 10], updatedAt: NOW });
      expect(updated).toEqual({ ...record, alertThresholds: [45, 10], updatedAt: NOW, version: 1, nextCheckAt: NOW });
      expect(await store.certificates.get(live, record.id)).toEqual(updated);
    });

    test("updateSettings() returns null for another scope's or a missing certificate, changing nothing", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      for (const scope of [testScope, other.live]) {
        expect(await store.certificates.updateSettings(scope, record.id, { name: "Hijacked", alertThresholds: [1], updatedAt: NOW })).toBeNull();
      }
      expect(await store.certificates.updateSettings(live, newId("cert"), { name: "x", updatedAt: NOW })).toBeNull();
      expect(await store.certificates.get(live, record.id)).toEqual(record);
    });

    test("remove() deletes the certificate and cancels its pending deliveries, leaving settled ones", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const secondChannel = await addChannel(store, channelRecord(live));
      const record = certificateRecord(live);
      const raised = eventRecord(live, { certificateId: record.id });
      await addCertificate(store, record, [raised]);
      const earlier = eventRecord(live, { certificateId: record.id, createdAt: NOW - DAY });
      const delivered = deliveryRecord(earlier.id, channel.id, { status: "delivered", attempts: 1, updatedAt: NOW - DAY });
      const failed = deliveryRecord(earlier.id, secondChannel.id, { status: "failed", attempts: 5, lastError: "HTTP 500" });
      await store.events.insert(earlier, [delivered, failed]);
      const neighbour = certificateRecord(live);
      const neighbourEvent = eventRecord(live, { certificateId: neighbour.id });
      await addCertificate(store, neighbour, [neighbourEvent]);

      expect(await store.certificates.remove(live, record.id, NOW + 5)).toBe(true);
      expect(await store.certificates.get(live, record.id)).toBeNull();
      expect(await store.certificates.count(live)).toBe(1);
      const cancelled = await deliveriesOf(store, live, raised.id);
      expect(cancelled).toHaveLength(2);
      for (const delivery of cancelled) {
        expect(delivery).toMatchObject({ status: "failed", updatedAt: NOW + 5 });
        expect(delivery.lastError).toEqual(expect.any(String));
      }
      expect(await deliveriesOf(store, live, earlier.id)).toEqual(byChannel([delivered, failed]));
      for (const delivery of await deliveriesOf(store, live, neighbourEvent.id)) expect(delivery.status).toBe("pending");
      expect(await store.certificates.remove(live, record.id, NOW + 6)).toBe(false);
    });

    test("remove() in another scope removes nothing", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      expect(await store.certificates.remove(testScope, record.id, NOW)).toBe(false);
      expect(await store.certificates.remove(other.live, record.id, NOW)).toBe(false);
      expect(await store.certificates.get(live, record.id)).toEqual(record);
    });
  });
}

function describeCertificateReads(get: () => Store) {
  describe("certificates: list and listAll", () => {
    test("list() orders by notAfter, then id, and returns at most `limit`", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const records: CertificateRecord[] = [];
      for (const days of [50, 10, 30, 10, 10, 70, 30]) records.push(await addCertificate(store, certificateRecord(live, { notAfter: NOW + days * DAY })));
      const expected = [...records].sort(byExpiry);
      expect(await store.certificates.list(live, { limit: 100, now: NOW })).toEqual(expected);
      expect(ids(await store.certificates.list(live, { limit: 3, now: NOW }))).toEqual(ids(expected.slice(0, 3)));
    });

    test("list() pages by `after` without skipping or repeating while certificates come and go between pages", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const model = new Map<string, CertificateRecord>();
      const add = async (notAfter: number) => {
        const record = await addCertificate(store, certificateRecord(live, { notAfter }));
        model.set(record.id, record);
      };
      const drop = async (record: CertificateRecord | undefined) => {
        if (!record) return;
        expect(await store.certificates.remove(live, record.id, NOW)).toBe(true);
        model.delete(record.id);
      };
      for (const days of [5, 5, 5, 9, 12, 12, 20, 20, 20, 20, 31, 40]) await add(NOW + days * DAY);
      const isAfter = (r: CertificateRecord, c: { notAfter: number; id: string }) =>
        r.details.notAfter > c.notAfter || (r.details.notAfter === c.notAfter && r.id > c.id);
      const presentThroughout = new Set(model.keys());

      const seen: string[] = [];
      let cursor: { notAfter: number; id: string } | undefined;
      for (let page = 0; page < 30; page++) {
        const items = await store.certificates.list(live, { limit: 4, now: NOW, ...(cursor ? { after: cursor } : {}) });
        const expected = [...model.values()].filter((r) => !cursor || isAfter(r, cursor)).sort(byExpiry).slice(0, 4);
        expect(ids(items)).toEqual(ids(expected));
        seen.push(...ids(items));
        if (items.length < 4) break;
        const last = items.at(-1)!;
        cursor = { notAfter: last.details.notAfter, id: last.id };
        // Between pages: one added ahead, one behind, one on the cursor's own notAfter; one not yet
        // seen and one already seen removed.
        await add(cursor.notAfter + DAY);
        await add(cursor.notAfter - DAY);
        await add(cursor.notAfter);
        const ahead = [...model.values()].filter((r) => isAfter(r, cursor!)).sort(byExpiry)[0];
        const behind = seen.map((id) => model.get(id)).find(Boolean);
        for (const gone of [ahead, behind]) if (gone) presentThroughout.delete(gone.id);
        await drop(ahead);
        await drop(behind);
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of presentThroughout) expect(seen).toContain(id);
    });

    test("list() with `statuses` returns exactly the certificates certificateStatus() puts in them", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const cases: Array<Parameters<typeof certificateRecord>[1]> = [
        { notAfter: NOW - 1 }, // expired a moment ago
        { notAfter: NOW }, // its last instant: expiring, not expired
        { notAfter: NOW - DAY, failure: "timeout" }, // expired wins over unreachable
        { failure: "dns_error", notAfter: NOW + 90 * DAY },
        { failure: "connection_refused", problem: "untrusted_issuer" }, // unreachable wins over invalid
        { problem: "self_signed" },
        { problem: "hostname_mismatch", notAfter: NOW + 5 * DAY }, // invalid wins over expiring
        { notBefore: NOW + 1, notAfter: NOW + 300 * DAY }, // not yet valid
        { notBefore: NOW + 1, notAfter: NOW + 10 * DAY }, // not yet valid wins over expiring
        { notBefore: NOW, notAfter: NOW + 300 * DAY }, // valid from this instant
        { alertThresholds: [30, 14, 7], notAfter: NOW + 20 * DAY },
        { alertThresholds: [60, 7], notAfter: NOW + 61 * DAY - 1 }, // 60 days left: the largest threshold
        { alertThresholds: [60, 7], notAfter: NOW + 61 * DAY }, // 61 days left
        { alertThresholds: [], notAfter: NOW + 31 * DAY - 1 }, // 30 days left, no thresholds: expiring
        { alertThresholds: [], notAfter: NOW + 31 * DAY }, // 31 days left, no thresholds: valid
        { alertThresholds: [10], notAfter: NOW + 25 * DAY },
        { alertThresholds: [0], notAfter: NOW + DAY - 1 },
        { notAfter: NOW + 200 * DAY },
      ];
      const records: CertificateRecord[] = [];
      for (const overrides of cases) records.push(await addCertificate(store, certificateRecord(live, overrides)));

      for (const now of [NOW, NOW + 45 * DAY]) {
        const statusOf = new Map(records.map((r) => [r.id, certificateStatus(r, now).status]));
        if (now === NOW) expect(new Set(statusOf.values())).toEqual(new Set(CERTIFICATE_STATUSES));
        const filters: CertificateStatus[][] = [...CERTIFICATE_STATUSES.map((s) => [s]), ["expired", "valid"], [...CERTIFICATE_STATUSES]];
        for (const statuses of filters) {
          const listed = await store.certificates.list(live, { limit: 100, now, statuses });
          const expected = records.filter((r) => statuses.includes(statusOf.get(r.id)!)).sort(byExpiry);
          expect({ statuses, ids: ids(listed) }).toEqual({ statuses, ids: ids(expected) });
        }
      }
    });

    test("list() statuses follow updateSettings()' thresholds and saveCheck()'s details", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live, { alertThresholds: [10], notAfter: NOW + 25 * DAY }));
      const expiring = { limit: 10, now: NOW, statuses: ["expiring"] as CertificateStatus[] };
      expect(await store.certificates.list(live, expiring)).toEqual([]);
      const updated = await store.certificates.updateSettings(live, record.id, { alertThresholds: [30], updatedAt: NOW });
      expect(ids(await store.certificates.list(live, expiring))).toEqual([record.id]);
      await store.certificates.updateSettings(live, record.id, { alertThresholds: [], updatedAt: NOW });
      expect(ids(await store.certificates.list(live, expiring))).toEqual([record.id]);
      await store.certificates.updateSettings(live, record.id, { alertThresholds: [20], updatedAt: NOW });
      expect(await store.certificates.list(live, expiring)).toEqual([]);

      const current = (await store.certificates.get(live, record.id))!;
      expect(current.version).toBe(updated!.version + 2);
      const checked = { ...current, details: certificateDetails(record.domain, { notAfter: NOW - HOUR }), lastCheckedAt: NOW };
      expect(await store.certificates.saveCheck(checked, [])).toBe(true);
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, statuses: ["expired"] }))).toEqual([record.id]);
    });

    test("list() with domainContains keeps the domains containing it, with other filters and paging", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const tag = randomBase62(6).toLowerCase();
      const shop = await addCertificate(store, certificateRecord(live, { domain: `shop.${tag}.com`, notAfter: NOW + 40 * DAY }));
      const api = await addCertificate(store, certificateRecord(live, { domain: `api.${tag}.com`, notAfter: NOW + 20 * DAY }));
      const blog = await addCertificate(store, certificateRecord(live, { domain: `blog.${tag}.org`, notAfter: NOW - DAY }));
      await addCertificate(store, certificateRecord(live, { domain: "unrelated.net" }));
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: tag }))).toEqual(ids([blog, api, shop]));
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: `${tag}.com` }))).toEqual(ids([api, shop]));
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: "shop." }))).toEqual(ids([shop]));
      expect(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: `${tag}.io` })).toEqual([]);
      expect(
        ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: tag, statuses: ["expiring", "valid"] })),
      ).toEqual(ids([api, shop]));
      const after = { notAfter: api.details.notAfter, id: api.id };
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: tag, after }))).toEqual(ids([shop]));
    });

    test("listAll() pages through every organization's certificates by id", async () => {
      const store = get();
      const a = await newOrganization(store);
      const b = await newOrganization(store);
      const ours: CertificateRecord[] = [];
      for (const scope of [a.live, a.test, b.live, b.test, a.live]) ours.push(await addCertificate(store, certificateRecord(scope)));
      const all: CertificateRecord[] = [];
      let afterId: string | undefined;
      for (;;) {
        const page = await store.certificates.listAll({ limit: 3, ...(afterId ? { afterId } : {}) });
        expect(page.length).toBeLessThanOrEqual(3);
        all.push(...page);
        if (page.length < 3) break;
        afterId = page.at(-1)!.id;
      }
      expect(ids(all)).toEqual(sortedIds(all));
      expect(new Set(ids(all)).size).toBe(all.length);
      const byId = new Map(all.map((r) => [r.id, r]));
      for (const record of ours) expect(byId.get(record.id)).toEqual(record);
    });
  });
}

function describeCertificateLeases(get: () => Store) {
  describe("certificates: claimDue, nextDueAt, saveCheck", () => {
    test("claimDue() leases what is due, as it was before the lease, until leaseUntil", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live, test: testScope } = await newOrganization(store);
      const [early, due, justDue, notYet] = [
        certificateRecord(live, { nextCheckAt: NOW - 2 * MINUTE }),
        certificateRecord(testScope, { nextCheckAt: NOW - MINUTE }),
        certificateRecord(live, { nextCheckAt: NOW }),
        certificateRecord(live, { nextCheckAt: NOW + 1 }),
      ];
      for (const record of [early, due, justDue, notYet]) await addCertificate(store, record);

      const claimed = await store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: NOW + 5 * MINUTE, limit: 10 });
      expect([...claimed].sort((a, b) => compareIds(a.id, b.id))).toEqual([early, due, justDue].sort((a, b) => compareIds(a.id, b.id)));
      expect((await store.certificates.get(live, early.id))?.nextCheckAt).toBe(NOW + 5 * MINUTE);
      expect(await store.certificates.nextDueAt()).toBe(NOW + 1);

      // Leased: not claimable before the lease runs out, by anyone.
      const second = await store.certificates.claimDue({ owner: "two", now: NOW + 2 * MINUTE, leaseUntil: NOW + 7 * MINUTE, limit: 10 });
      expect(ids(second)).toEqual([notYet.id]);
      // The lease ran out (the process died mid-check): due again.
      const third = await store.certificates.claimDue({ owner: "three", now: NOW + 5 * MINUTE, leaseUntil: NOW + 9 * MINUTE, limit: 10 });
      expect(sortedIds(third)).toEqual(sortedIds([early, due, justDue]));
      expect((await store.certificates.get(testScope, due.id))?.nextCheckAt).toBe(NOW + 9 * MINUTE);
    });

    test("claimDue() leases at most `limit`, leaving the rest due", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const records: CertificateRecord[] = [];
      for (let i = 0; i < 5; i++) records.push(await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW - i * MINUTE })));
      const lease = { now: NOW, leaseUntil: NOW + HOUR };
      const first = await store.certificates.claimDue({ ...lease, owner: "one", limit: 2 });
      const rest = await store.certificates.claimDue({ ...lease, owner: "two", limit: 10 });
      expect(first).toHaveLength(2);
      expect(rest).toHaveLength(3);
      expect([...sortedIds(first), ...sortedIds(rest)].sort(compareIds)).toEqual(sortedIds(records));
    });

    test("two claimDue() at once lease disjoint sets", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const records: CertificateRecord[] = [];
      for (let i = 0; i < 8; i++) records.push(await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW - i })));
      const lease = { now: NOW, leaseUntil: NOW + HOUR, limit: 5 };
      const [a, b] = await Promise.all([
        store.certificates.claimDue({ ...lease, owner: "a" }),
        store.certificates.claimDue({ ...lease, owner: "b" }),
      ]);
      expect(a.length + b.length).toBe(8);
      expect([...ids(a), ...ids(b)].sort(compareIds)).toEqual(sortedIds(records));
    });

    test("nextDueAt() is the earliest nextCheckAt, leases included", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const soon = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW + 10 * MINUTE }));
      const later = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW + 20 * MINUTE }));
      expect(await store.certificates.nextDueAt()).toBe(NOW + 10 * MINUTE);
      expect(ids(await store.certificates.claimDue({ owner: "one", now: NOW + 10 * MINUTE, leaseUntil: NOW + 15 * MINUTE, limit: 10 }))).toEqual([soon.id]);
      expect(await store.certificates.nextDueAt()).toBe(NOW + 15 * MINUTE);
      await store.certificates.remove(live, soon.id, NOW);
      expect(await store.certificates.nextDueAt()).toBe(NOW + 20 * MINUTE);
      await store.certificates.updateSettings(live, later.id, { alertThresholds: [7], updatedAt: NOW + MINUTE });
      expect(await store.certificates.nextDueAt()).toBe(NOW + MINUTE);
      expect(ids(await store.certificates.claimDue({ owner: "one", now: NOW + MINUTE, leaseUntil: NOW + HOUR, limit: 10 }))).toEqual([later.id]);
    });

    test("saveCheck() writes the check at the expected version, with its events and deliveries, keeping name and thresholds", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live, test: testScope } = await newOrganization(store);
      const enabled = await addChannel(store, channelRecord(live));
      await addChannel(store, channelRecord(live, { enabled: false }));
      await addChannel(store, channelRecord(testScope));
      const record = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW, version: 7 }));
      const [claimed] = await store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(claimed).toEqual(record);

      const checked: CertificateRecord = {
        ...claimed!,
        name: "Renamed by a stale copy",
        alertThresholds: [2],
        fingerprint: hex(32),
        details: certificateDetails(record.domain, { notAfter: NOW + 20 * DAY }),
        problem: "hostname_mismatch",
        lastCheckedAt: NOW + 1,
        failure: "tls_error",
        failureCount: 2,
        alertedThreshold: 30,
        expiryAlerted: false,
        health: "invalid",
        nextCheckAt: NOW + 6 * HOUR,
        updatedAt: NOW + 1,
      };
      const events = [
        eventRecord(live, { certificateId: record.id, type: "certificate.invalid", createdAt: NOW + 1 }),
        eventRecord(live, { certificateId: record.id, type: "certificate.expiring", createdAt: NOW + 1 }),
      ];
      expect(await store.certificates.saveCheck(checked, events)).toBe(true);
      const stored = await store.certificates.get(live, record.id);
      expect(stored).toEqual({ ...checked, name: record.name, alertThresholds: record.alertThresholds, version: 8 });
      for (const event of events) {
        const deliveries = await deliveriesOf(store, live, event.id);
        expect(deliveries.map((d) => [d.channelId, d.status])).toEqual([[enabled.id, "pending"]]);
      }
      // The lease is over: due again at the nextCheckAt the check chose.
      expect(await store.certificates.claimDue({ owner: "two", now: NOW + 6 * HOUR - 1, leaseUntil: NOW + 7 * HOUR, limit: 10 })).toEqual([]);
      expect(ids(await store.certificates.claimDue({ owner: "two", now: NOW + 6 * HOUR, leaseUntil: NOW + 7 * HOUR, limit: 10 }))).toEqual([record.id]);
    });

    test("saveCheck() at a stale version returns false and writes nothing", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      await addChannel(store, channelRecord(live));
      const record = await addCertificate(store, certificateRecord(live));
      const first = { ...record, lastCheckedAt: NOW, failureCount: 1, nextCheckAt: NOW + MINUTE };
      expect(await store.certificates.saveCheck(first, [])).toBe(true);
      const afterFirst = await store.certificates.get(live, record.id);

      const stale = { ...record, lastCheckedAt: NOW + 2, health: "unreachable" as const, failure: "timeout" as const };
      const staleEvent = eventRecord(live, { certificateId: record.id, type: "certificate.unreachable" });
      expect(await store.certificates.saveCheck(stale, [staleEvent])).toBe(false);
      expect(await store.certificates.get(live, record.id)).toEqual(afterFirst);
      expect(await store.events.get(live, staleEvent.id)).toBeNull();

      // A settings change also makes a check computed before it stale.
      const current = (await store.certificates.get(live, record.id))!;
      const updated = await store.certificates.updateSettings(live, record.id, { name: "New name", updatedAt: NOW + 3 });
      expect(await store.certificates.saveCheck({ ...current, lastCheckedAt: NOW + 4 }, [])).toBe(false);
      expect(await store.certificates.get(live, record.id)).toEqual(updated);
    });

    test("saveCheck() of a removed certificate returns false and stores no events", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      await store.certificates.remove(live, record.id, NOW);
      const event = eventRecord(live, { certificateId: record.id });
      expect(await store.certificates.saveCheck({ ...record, lastCheckedAt: NOW }, [event])).toBe(false);
      expect(await store.certificates.get(live, record.id)).toBeNull();
      expect(await store.events.get(live, event.id)).toBeNull();
    });

    test("two saveCheck() at once from one version: exactly one wins", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      const checks = ["a", "b"].map((who) => ({
        record: { ...record, fingerprint: `${who}-${hex(8)}`, lastCheckedAt: NOW },
        event: eventRecord(live, { certificateId: record.id }),
      }));
      const results = await Promise.all(checks.map((c) => store.certificates.saveCheck(c.record, [c.event])));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = checks[results.indexOf(true)]!;
      const loser = checks[results.indexOf(false)]!;
      expect(await store.certificates.get(live, record.id)).toEqual({ ...winner.record, version: 1 });
      expect(await store.events.get(live, winner.event.id)).not.toBeNull();
      expect(await store.events.get(live, loser.event.id)).toBeNull();
    });

    // detailsChanged: false is the re-check of an unchanged certificate, which a store may write
    // differently (the SQL store group-commits them): the same semantics must hold.
    test("saveCheck(…, { detailsChanged: false }) of many certificates at once saves each, keeping the details", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const records = await Promise.all(Array.from({ length: 12 }, () => addCertificate(store, certificateRecord(live))));
      const checked = records.map((r, i) => ({ ...r, lastCheckedAt: NOW + i, nextCheckAt: NOW + HOUR + i, failureCount: i % 2 }));
      const results = await Promise.all(checked.map((r) => store.certificates.saveCheck(r, [], { detailsChanged: false })));
      expect(results).toEqual(checked.map(() => true));
      for (const [i, r] of checked.entries()) {
        expect(await store.certificates.get(live, r.id)).toEqual({ ...records[i]!, lastCheckedAt: NOW + i, nextCheckAt: NOW + HOUR + i, failureCount: i % 2, version: 1 });
      }
    });

    test("saveCheck(…, { detailsChanged: false }) twice at once from one version, and at a stale version: one wins", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      const [a, b] = [1, 2].map((n) => ({ ...record, lastCheckedAt: NOW + n }));
      const results = await Promise.all([a, b].map((r) => store.certificates.saveCheck(r!, [], { detailsChanged: false })));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results[0] ? a! : b!;
      expect(await store.certificates.get(live, record.id)).toEqual({ ...winner, version: 1 });
      expect(await store.certificates.saveCheck({ ...record, lastCheckedAt: NOW + 9 }, [], { detailsChanged: false })).toBe(false);
      await store.certificates.remove(live, record.id, NOW);
      expect(await store.certificates.saveCheck({ ...winner, version: 1 }, [], { detailsChanged: false })).toBe(false);
    });
  });
}

function describeChannels(get: () => Store) {
  describe("channels", () => {
    test("insert() stores channels up to `limit` per scope; get() returns them in their scope only", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const webhook = channelRecord(live);
      const email = channelRecord(live, { type: "email", name: "On-call", config: { email: "oncall@example.com" }, signingSecret: null });
      expect(await store.channels.insert(webhook, { limit: 2 })).toBe(true);
      expect(await store.channels.insert(email, { limit: 2 })).toBe(true);
      const third = channelRecord(live, { type: "slack", config: { webhookUrl: "https://hooks.slack.com/services/T/B/X" } });
      expect(await store.channels.insert(third, { limit: 2 })).toBe(false);
      expect(await store.channels.get(live, third.id)).toBeNull();
      expect(await store.channels.get(live, webhook.id)).toEqual(webhook);
      expect(await store.channels.get(live, email.id)).toEqual(email);
      expect(await store.channels.get(testScope, webhook.id)).toBeNull();
      expect(await store.channels.get(other.live, webhook.id)).toBeNull();
      expect(await store.channels.insert(channelRecord(testScope), { limit: 2 })).toBe(true);
      expect(await store.channels.insert(channelRecord(other.live), { limit: 2 })).toBe(true);
    });

    test("list() is newest first and pages by `before` (createdAt, id)", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const channels: ChannelRecord[] = [];
      for (const createdAt of [NOW, NOW + 1, NOW + 1, NOW + 1, NOW + 2, NOW + 3, NOW - 5]) {
        channels.push(await addChannel(store, channelRecord(live, { createdAt, updatedAt: createdAt })));
      }
      await addChannel(store, channelRecord(testScope, { createdAt: NOW + 1 }));
      const expected = [...channels].sort(byNewest);
      expect(await store.channels.list(live, { limit: 100 })).toEqual(expected);
      const pages: ChannelRecord[][] = [];
      let before: { createdAt: number; id: string } | undefined;
      for (;;) {
        const page = await store.channels.list(live, { limit: 2, ...(before ? { before } : {}) });
        pages.push(page);
        if (page.length < 2) break;
        before = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
      }
      expect(pages.map((page) => page.length)).toEqual([2, 2, 2, 1]);
      expect(pages.flat()).toEqual(expected);
    });

    test("update() changes only what the patch gives, in its scope", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const renamed = await store.channels.update(live, channel.id, { name: "Renamed", updatedAt: NOW + 1 });
      expect(renamed).toEqual({ ...channel, name: "Renamed", updatedAt: NOW + 1 });
      const config = { url: "https://hooks.example.com/v2", headers: {} };
      const disabled = await store.channels.update(live, channel.id, { enabled: false, config, updatedAt: NOW + 2 });
      expect(disabled).toEqual({ ...channel, name: "Renamed", enabled: false, config, updatedAt: NOW + 2 });
      expect(await store.channels.get(live, channel.id)).toEqual(disabled);
      const enabled = await store.channels.update(live, channel.id, { name: undefined, enabled: true, config: undefined, updatedAt: NOW + 3 });
      expect(enabled).toEqual({ ...channel, name: "Renamed", config, updatedAt: NOW + 3 });
      expect(await store.channels.update(testScope, channel.id, { name: "Hijacked", updatedAt: NOW + 4 })).toBeNull();
      expect(await store.channels.update(live, newId("ch"), { name: "x", updatedAt: NOW })).toBeNull();
      expect(await store.channels.get(live, channel.id)).toEqual(enabled);
    });

    test("remove() deletes the channel and cancels its pending deliveries, leaving settled ones", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const kept = await addChannel(store, channelRecord(live));
      const pending = eventRecord(live);
      const settled = eventRecord(live);
      await store.events.insert(pending, [deliveryRecord(pending.id, channel.id), deliveryRecord(pending.id, kept.id)]);
      const delivered = deliveryRecord(settled.id, channel.id, { status: "delivered", attempts: 2 });
      await store.events.insert(settled, [delivered]);

      expect(await store.channels.remove(testScope, channel.id, NOW)).toBe(false);
      expect(await store.channels.remove(live, channel.id, NOW + 9)).toBe(true);
      expect(await store.channels.get(live, channel.id)).toBeNull();
      const deliveries = await deliveriesOf(store, live, pending.id);
      const cancelled = deliveries.find((d) => d.channelId === channel.id);
      expect(cancelled).toMatchObject({ status: "failed", updatedAt: NOW + 9 });
      expect(cancelled?.lastError).toEqual(expect.any(String));
      expect(deliveries.find((d) => d.channelId === kept.id)).toEqual(deliveryRecord(pending.id, kept.id));
      expect(await deliveriesOf(store, live, settled.id)).toEqual([delivered]);
      expect(await store.channels.remove(live, channel.id, NOW)).toBe(false);
    });

    test("disable() turns a channel off from outside its scope; later events skip it", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      await store.channels.disable(channel.id, NOW + 7);
      expect(await store.channels.get(live, channel.id)).toEqual({ ...channel, enabled: false, updatedAt: NOW + 7 });
      const record = certificateRecord(live);
      const event = eventRecord(live, { certificateId: record.id });
      await addCertificate(store, record, [event]);
      expect(await deliveriesOf(store, live, event.id)).toEqual([]);
      await store.channels.disable(newId("ch"), NOW);
    });
  });
}

function describeEvents(get: () => Store) {
  describe("events", () => {
    test("insert() stores the event with exactly the deliveries given", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const tested = await addChannel(store, channelRecord(live));
      await addChannel(store, channelRecord(live));
      const event = eventRecord(live, { type: "test", data: { message: "Hello from certkeeper" } });
      const delivery = deliveryRecord(event.id, tested.id);
      await store.events.insert(event, [delivery]);
      const stored = await store.events.get(live, event.id);
      expect(stored).toEqual({ ...event, seq: expect.any(Number), deliveries: [delivery] });
    });

    test("list() is newest first by insertion, not by createdAt, and pages by beforeSeq", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const events: EventRecord[] = [];
      for (let i = 0; i < 5; i++) {
        const event = eventRecord(live, { createdAt: NOW - i * MINUTE });
        await store.events.insert(event, []);
        events.push(event);
        await store.events.insert(eventRecord(i % 2 ? testScope : other.live), []);
      }
      const all = await store.events.list(live, { limit: 100 });
      expect(ids(all)).toEqual(ids([...events].reverse()));
      for (let i = 1; i < all.length; i++) expect(all[i]!.seq).toBeLessThan(all[i - 1]!.seq);
      expect(all[0]).toEqual({ ...events[4]!, seq: all[0]!.seq, deliveries: [] });

      const first = await store.events.list(live, { limit: 2 });
      const second = await store.events.list(live, { limit: 2, beforeSeq: first.at(-1)!.seq });
      const third = await store.events.list(live, { limit: 2, beforeSeq: second.at(-1)!.seq });
      expect([first, second, third].map(ids)).toEqual([ids(all.slice(0, 2)), ids(all.slice(2, 4)), ids(all.slice(4))]);
      expect(await store.events.list(live, { limit: 2, beforeSeq: third.at(-1)!.seq })).toEqual([]);
    });

    test("list() and get() carry each event's deliveries; get() sees only its scope", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const event = eventRecord(live);
      const delivery = deliveryRecord(event.id, channel.id, { status: "failed", attempts: 3, lastError: "HTTP 503" });
      await store.events.insert(event, [delivery]);
      expect((await store.events.list(live, { limit: 1 }))[0]?.deliveries).toEqual([delivery]);
      expect((await store.events.get(live, event.id))?.deliveries).toEqual([delivery]);
      expect(await store.events.get(testScope, event.id)).toBeNull();
      expect(await store.events.get(live, newId("evt"))).toBeNull();
      expect(await store.events.list(testScope, { limit: 10 })).toEqual([]);
    });
  });
}

function describeDeliveries(get: () => Store) {
  describe("deliveries: claimDueDeliveries, nextDeliveryAt, completeDelivery", () => {
    async function eventWithDeliveries(store: Store, scope: Scope, channels: string[], overrides: Partial<DeliveryRecord> = {}) {
      const event = eventRecord(scope);
      const deliveries = channels.map((channelId) => deliveryRecord(event.id, channelId, overrides));
      await store.events.insert(event, deliveries);
      return { event, deliveries };
    }

    test("claimDueDeliveries() leases due deliveries with their event and channel, until leaseUntil", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const a = await addChannel(store, channelRecord(live));
      const b = await addChannel(store, channelRecord(live, { type: "email", config: { email: "a@example.com" }, signingSecret: null }));
      const { event, deliveries } = await eventWithDeliveries(store, live, [a.id, b.id], { nextAttemptAt: NOW - MINUTE, attempts: 1 });
      await eventWithDeliveries(store, live, [a.id], { nextAttemptAt: NOW + 1 });

      const jobs = await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(deliveryKeys(jobs)).toEqual(deliveries.map((d) => `${d.eventId} ${d.channelId}`).sort());
      for (const job of jobs) {
        expect(job.delivery).toEqual(deliveries.find((d) => d.channelId === job.delivery.channelId)!);
        expect(job.event).toMatchObject(event);
        expect(job.channel).toEqual(job.delivery.channelId === a.id ? a : b);
      }
      expect(await store.events.nextDeliveryAt()).toBe(NOW + 1);
      const second = await store.events.claimDueDeliveries({ owner: "two", now: NOW + MINUTE - 1, leaseUntil: NOW + HOUR, limit: 10 });
      expect(second.map((j) => j.delivery.eventId)).not.toContain(event.id);
      expect(second).toHaveLength(1);
      const third = await store.events.claimDueDeliveries({ owner: "three", now: NOW + MINUTE, leaseUntil: NOW + HOUR, limit: 10 });
      expect(deliveryKeys(third)).toEqual(deliveryKeys(jobs));
    });

    test("claimDueDeliveries() settles deliveries to disabled or missing channels as failed instead", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const working = await addChannel(store, channelRecord(live));
      const gone = await addChannel(store, channelRecord(live));
      const { event } = await eventWithDeliveries(store, live, [working.id, gone.id, newId("ch")]);
      await store.channels.disable(gone.id, NOW - 1);
      const jobs = await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(jobs.map((j) => j.channel.id)).toEqual([working.id]);
      const settled = (await deliveriesOf(store, live, event.id)).filter((d) => d.channelId !== working.id);
      expect(settled).toHaveLength(2);
      for (const delivery of settled) {
        expect(delivery.status).toBe("failed");
        expect(delivery.lastError).toEqual(expect.any(String));
      }
      expect(await store.events.nextDeliveryAt()).toBe(NOW + MINUTE);
    });

    test("claimDueDeliveries() leases at most `limit`, and two at once lease disjoint sets", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const channels: string[] = [];
      for (let i = 0; i < 3; i++) channels.push((await addChannel(store, channelRecord(live))).id);
      const { deliveries } = await eventWithDeliveries(store, live, channels);
      const { deliveries: more } = await eventWithDeliveries(store, live, channels);
      const lease = { now: NOW, leaseUntil: NOW + MINUTE };
      const [a, b] = await Promise.all([
        store.events.claimDueDeliveries({ ...lease, owner: "a", limit: 2 }),
        store.events.claimDueDeliveries({ ...lease, owner: "b", limit: 2 }),
      ]);
      expect(a).toHaveLength(2);
      expect(b).toHaveLength(2);
      const rest = await store.events.claimDueDeliveries({ ...lease, owner: "c", limit: 10 });
      expect([...deliveryKeys(a), ...deliveryKeys(b), ...deliveryKeys(rest)].sort()).toEqual(
        [...deliveries, ...more].map((d) => `${d.eventId} ${d.channelId}`).sort(),
      );
    });

    test("nextDeliveryAt() and claimDueDeliveries() consider pending deliveries only", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const [a, b, c] = [await addChannel(store, channelRecord(live)), await addChannel(store, channelRecord(live)), await addChannel(store, channelRecord(live))];
      const event = eventRecord(live);
      await store.events.insert(event, [
        deliveryRecord(event.id, a.id, { status: "delivered", nextAttemptAt: NOW - 100 }),
        deliveryRecord(event.id, b.id, { status: "failed", nextAttemptAt: NOW - 50, lastError: "HTTP 404" }),
        deliveryRecord(event.id, c.id, { nextAttemptAt: NOW + 10 }),
      ]);
      const before = await deliveriesOf(store, live, event.id);
      expect(await store.events.nextDeliveryAt()).toBe(NOW + 10);
      const jobs = await store.events.claimDueDeliveries({ owner: "one", now: NOW + 10, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(jobs.map((j) => j.channel.id)).toEqual([c.id]);
      expect((await deliveriesOf(store, live, event.id)).filter((d) => d.channelId !== c.id)).toEqual(before.filter((d) => d.channelId !== c.id));
    });

    test("countPending() counts pending deliveries of every scope, leased ones included, and no settled one", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live, test: testScope } = await newOrganization(store);
      const before = await store.events.countPending();
      const [a, b] = [await addChannel(store, channelRecord(live)), await addChannel(store, channelRecord(testScope))];
      const event = eventRecord(live);
      await store.events.insert(event, [
        deliveryRecord(event.id, a.id, { nextAttemptAt: NOW - 1 }),
        deliveryRecord(event.id, b.id, { status: "delivered" }),
      ]);
      await eventWithDeliveries(store, testScope, [b.id], { nextAttemptAt: NOW + DAY });
      expect(await store.events.countPending()).toBe(before + 2);
      expect(await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 })).toHaveLength(1);
      expect(await store.events.countPending()).toBe(before + 2);
    });

    test("completeDelivery() records the outcome only for the lease's owner", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const { event, deliveries } = await eventWithDeliveries(store, live, [channel.id]);
      const [unclaimed] = (await eventWithDeliveries(store, live, [channel.id], { nextAttemptAt: NOW + DAY })).deliveries;
      const outcome = { eventId: event.id, channelId: channel.id, status: "delivered" as const, attempts: 1, nextAttemptAt: NOW, lastError: null, updatedAt: NOW + 1 };

      expect(await store.events.completeDelivery("one", { ...unclaimed!, status: "delivered", attempts: 1 })).toBe(false);
      expect(await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 })).toHaveLength(1);
      expect(await store.events.completeDelivery("two", outcome)).toBe(false);
      expect(await deliveriesOf(store, live, event.id)).toEqual([{ ...deliveries[0]!, nextAttemptAt: expect.any(Number) }]);
      expect(await store.events.completeDelivery("one", outcome)).toBe(true);
      expect(await deliveriesOf(store, live, event.id)).toEqual([outcome]);
      expect(await store.events.completeDelivery("one", { ...outcome, attempts: 2 })).toBe(false);
      expect(await deliveriesOf(store, live, event.id)).toEqual([outcome]);
    });

    test("completeDelivery() of a retry leaves it pending until its nextAttemptAt; a lease taken over is lost", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const { event } = await eventWithDeliveries(store, live, [channel.id]);
      await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      const retry = { eventId: event.id, channelId: channel.id, status: "pending" as const, attempts: 1, nextAttemptAt: NOW + 10 * MINUTE, lastError: "HTTP 502", updatedAt: NOW + 2 };
      expect(await store.events.completeDelivery("one", retry)).toBe(true);
      // Recording the attempt ended the lease.
      expect(await store.events.completeDelivery("one", { ...retry, attempts: 5 })).toBe(false);
      expect(await store.events.nextDeliveryAt()).toBe(NOW + 10 * MINUTE);
      expect(await store.events.claimDueDeliveries({ owner: "two", now: NOW + 10 * MINUTE - 1, leaseUntil: NOW + HOUR, limit: 10 })).toEqual([]);

      // "two" claims it, its lease runs out, and "three" takes it over: "two" can no longer complete it.
      const [job] = await store.events.claimDueDeliveries({ owner: "two", now: NOW + 10 * MINUTE, leaseUntil: NOW + 11 * MINUTE, limit: 10 });
      expect(job?.delivery).toEqual(retry);
      expect(await store.events.claimDueDeliveries({ owner: "three", now: NOW + 11 * MINUTE, leaseUntil: NOW + 12 * MINUTE, limit: 10 })).toHaveLength(1);
      const done = { ...retry, status: "delivered" as const, attempts: 2, lastError: null, updatedAt: NOW + 11 * MINUTE };
      expect(await store.events.completeDelivery("two", done)).toBe(false);
      expect(await store.events.completeDelivery("three", done)).toBe(true);
      expect(await deliveriesOf(store, live, event.id)).toEqual([done]);
    });
  });
}

function describeRateLimits(get: () => Store) {
  describe("rate limits", () => {
    test("hit() counts requests in fixed windows per key", async () => {
      const store = get();
      const key = newId("key");
      const other = newId("key");
      const window = MINUTE;
      expect(await store.rateLimits.hit(key, NOW, window)).toEqual({ count: 1, windowStart: NOW });
      expect(await store.rateLimits.hit(key, NOW + 10, window)).toEqual({ count: 2, windowStart: NOW });
      expect(await store.rateLimits.hit(other, NOW + 20, window)).toEqual({ count: 1, windowStart: NOW + 20 });
      expect(await store.rateLimits.hit(key, NOW + window - 1, window)).toEqual({ count: 3, windowStart: NOW });
      expect(await store.rateLimits.hit(key, NOW + window, window)).toEqual({ count: 1, windowStart: NOW + window });
      expect(await store.rateLimits.hit(key, NOW + window + 5, window)).toEqual({ count: 2, windowStart: NOW + window });
      expect(await store.rateLimits.hit(key, NOW + 5 * window, window)).toEqual({ count: 1, windowStart: NOW + 5 * window });
      expect(await store.rateLimits.hit(other, NOW + 30, window)).toEqual({ count: 2, windowStart: NOW + 20 });
    });

    test("hit() counts concurrent requests of one key exactly", async () => {
      const store = get();
      const key = newId("key");
      const results = await Promise.all(Array.from({ length: 10 }, () => store.rateLimits.hit(key, NOW, MINUTE)));
      expect(results.map((r) => r.count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });
  });
}

function describeChangeToken(get: () => Store, offered: boolean) {
  describe("changeToken", () => {
    if (!offered) {
      test("is not offered: the store cannot tell what others wrote", () => {
        expect(get().changeToken).toBeUndefined();
      });
      return;
    }

    test("changes after every kind of write", async () => {
      const store = get();
      expect(store.changeToken).toBeFunction();
      const token = () => store.changeToken!();
      const org = organizationRecord();
      const scope: Scope = { organizationId: org.id, mode: "live" };
      const user = userRecord(org.id);
      const key = apiKeyRecord(user);
      const record = certificateRecord(scope, { nextCheckAt: NOW - 1 });
      const channel = channelRecord(scope);
      const event = eventRecord(scope);
      const session = sessionRecord(user);
      const writes: Array<[string, () => Promise<unknown>]> = [
        ["organizations.create", () => store.organizations.create(org)],
        ["users.create", () => store.users.create(user)],
        ["users.update", () => store.users.update(user.id, { role: "member" })],
        ["apiKeys.create", () => store.apiKeys.create(key)],
        ["apiKeys.touch", () => store.apiKeys.touch([{ id: key.id, at: NOW }])],
        ["apiKeys.revoke", () => store.apiKeys.revoke(key.id, NOW)],
        ["users.remove", () => store.users.remove(user.id, NOW)],
        ["channels.insert", () => store.channels.insert(channel, { limit: 10 })],
        ["channels.update", () => store.channels.update(scope, channel.id, { name: "New", updatedAt: NOW })],
        ["certificates.insert", () => store.certificates.insert(record, { limit: 10, events: [eventRecord(scope)] })],
        ["certificates.updateSettings", () => store.certificates.updateSettings(scope, record.id, { name: "x", updatedAt: NOW })],
        ["certificates.claimDue", () => store.certificates.claimDue({ owner: "t", now: PARKED - 1, leaseUntil: PARKED, limit: 1000 })],
        ["certificates.saveCheck", () => store.certificates.saveCheck({ ...record, version: 1, lastCheckedAt: NOW }, [])],
        ["events.insert", () => store.events.insert(event, [deliveryRecord(event.id, channel.id)])],
        ["events.claimDueDeliveries", () => store.events.claimDueDeliveries({ owner: "t", now: PARKED - 1, leaseUntil: PARKED, limit: 1000 })],
        ["events.completeDelivery", () => store.events.completeDelivery("t", { ...deliveryRecord(event.id, channel.id), status: "delivered" })],
        ["channels.disable", () => store.channels.disable(channel.id, NOW)],
        ["channels.remove", () => store.channels.remove(scope, channel.id, NOW)],
        ["certificates.remove", () => store.certificates.remove(scope, record.id, NOW)],
        ["rateLimits.hit", () => store.rateLimits.hit(key.id, NOW, MINUTE)],
        ["sessions.create", () => store.sessions.create(session)],
        ["sessions.touch", () => store.sessions.touch(session.id, { lastSeenAt: NOW + 1, expiresAt: NOW + HOUR })],
        ["sessions.remove", () => store.sessions.remove(session.id)],
        ["signInAttempts.fail", () => store.signInAttempts.fail(`email:${key.id}`, { now: NOW, windowMs: MINUTE })],
        ["signInAttempts.clear", () => store.signInAttempts.clear(`email:${key.id}`)],
      ];
      for (const [name, write] of writes) {
        const before = token();
        const result = await write();
        // Each write must have done something, or a token that never changes could pass.
        expect({ name, result: result === false || result === null ? result : "done" }).toEqual({ name, result: "done" });
        expect({ name, changed: token() !== before }).toEqual({ name, changed: true });
      }
    });

    test("stays the same while nothing is written", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const before = store.changeToken!();
      await store.certificates.list(live, { limit: 10, now: NOW });
      await store.organizations.get(live.organizationId);
      expect(store.changeToken!()).toBe(before);
    });
  });
}
