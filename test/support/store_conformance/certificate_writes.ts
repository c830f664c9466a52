import type { CertificateRecord } from "../../../core/base/records.ts";
/** The store conformance suite's part for writing certificates: insert, updateSettings, remove. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import { newId, randomBase62 } from "../../../core/base/ids.ts";
import { DAY, HOUR } from "../../../core/base/time.ts";
import { certificateRecord, channelRecord, deliveryRecord, eventRecord, NOW } from "./factories.ts";
import { addCertificate, addChannel, byChannel, deliveriesOf, newOrganization } from "./_helpers.ts";

export function describeCertificateWrites(get: () => Store) {
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
      expect(await store.certificates.findByDomain(live, { ...record, port: 8443 })).toEqual(record);
      expect(await store.certificates.findByDomain(live, { ...record, port: 443 })).toBeNull();
      expect(await store.certificates.count(live)).toBe(1);
    });

    test("another organization or mode sees nothing of a scope's certificates", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      for (const scope of [testScope, other.live]) {
        expect(await store.certificates.get(scope, record.id)).toBeNull();
        expect(await store.certificates.findByDomain(scope, record)).toBeNull();
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
      const updated = (await store.certificates.updateSettings(live, record.id, { name: "Shop", updatedAt: NOW })) as CertificateRecord | null;
      expect(updated).toEqual({ ...record, name: "Shop", updatedAt: NOW, version: 3 });
      expect(await store.certificates.get(live, record.id)).toEqual(updated);
      const again = (await store.certificates.updateSettings(live, record.id, { updatedAt: NOW + 1 })) as CertificateRecord | null;
      expect(again).toEqual({ ...record, name: "Shop", updatedAt: NOW + 1, version: 4 });
    });

    test("updateSettings() with new thresholds makes the certificate due at once", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW + 6 * HOUR }));
      const updated = (await store.certificates.updateSettings(live, record.id, { alertThresholds: [45, 10], updatedAt: NOW })) as CertificateRecord | null;
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
