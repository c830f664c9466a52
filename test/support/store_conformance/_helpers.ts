/** What the store conformance suite's parts share over a store: setting up, parking leases, sorting. */
import { expect } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import type { CertificateRecord, ChannelRecord, DeliveryRecord, EventRecord, Scope } from "../../../core/base/records.ts";
import { organizationRecord } from "./factories.ts";

/** Later than any time a test uses: where {@link parkLeftovers} moves other tests' leases. */
export const PARKED = 9e15;

/** A new organization, its live and test scopes. */
export async function newOrganization(store: Store) {
  const org = organizationRecord();
  await store.organizations.create(org);
  return { org, live: { organizationId: org.id, mode: "live" } as Scope, test: { organizationId: org.id, mode: "test" } as Scope };
}

export async function addCertificate(store: Store, record: CertificateRecord, events: EventRecord[] = []): Promise<CertificateRecord> {
  expect(await store.certificates.insert(record, { limit: 1000, events })).toBe("created");
  return record;
}

export async function addChannel(store: Store, record: ChannelRecord): Promise<ChannelRecord> {
  expect(await store.channels.insert(record, { limit: 1000 })).toBe(true);
  return record;
}

/** Leases every due certificate and delivery, whoever's, until {@link PARKED}. */
export async function parkLeftovers(store: Store): Promise<void> {
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
export async function deliveriesOf(store: Store, scope: Scope, eventId: string): Promise<DeliveryRecord[]> {
  const event = await store.events.get(scope, eventId);
  expect(event).not.toBeNull();
  return byChannel(event!.deliveries);
}

export const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
export const byExpiry = (a: CertificateRecord, b: CertificateRecord) => a.details.notAfter - b.details.notAfter || compareIds(a.id, b.id);
export const byNewest = (a: ChannelRecord, b: ChannelRecord) => b.createdAt - a.createdAt || compareIds(b.id, a.id);
export const byChannel = (deliveries: DeliveryRecord[]) => [...deliveries].sort((a, b) => compareIds(a.channelId, b.channelId));
export const ids = (records: Array<{ id: string }>) => records.map((r) => r.id);
export const sortedIds = (records: Array<{ id: string }>) => ids(records).sort(compareIds);
export const deliveryKeys = (jobs: Array<{ delivery: DeliveryRecord }>) => jobs.map((j) => `${j.delivery.eventId} ${j.delivery.channelId}`).sort();
