import type { CertificateRecord } from "../../../core/base/records.ts";
/** The store conformance suite's part for fleets (CONTRACT §16): tags, mutes, channel filters and routing. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import { certificateEvent } from "../../../core/monitor/check_events.ts";
import { DAY, HOUR } from "../../../core/base/time.ts";
import { certificateRecord, channelRecord, deliveryRecord, eventRecord, NOW } from "./factories.ts";
import { addCertificate, addChannel, deliveriesOf, ids, newOrganization } from "./_helpers.ts";

export function describeFleet(get: () => Store) {
  describe("fleets: tags, mutes, filters", () => {
    test("insert() keeps tags; list() with tags gives only certificates carrying every one, in expiry order, per scope", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const a = await addCertificate(store, certificateRecord(live, { tags: ["env:prod", "team:a"], notAfter: NOW + 10 * DAY }));
      const b = await addCertificate(store, certificateRecord(live, { tags: ["team:a"], notAfter: NOW + 5 * DAY }));
      await addCertificate(store, certificateRecord(live, { tags: ["team:b"] }));
      await addCertificate(store, certificateRecord(testScope, { tags: ["team:a"] }));
      expect((await store.certificates.get(live, a.id))?.tags).toEqual(["env:prod", "team:a"]);
      expect(ids(await store.certificates.list(live, { limit: 10, tags: ["team:a"], now: NOW }))).toEqual([b.id, a.id]);
      expect(ids(await store.certificates.list(live, { limit: 10, tags: ["team:a", "env:prod"], now: NOW }))).toEqual([a.id]);
      expect(ids(await store.certificates.list(live, { limit: 10, tags: ["team:a", "team:b"], now: NOW }))).toEqual([]);
      expect(ids(await store.certificates.list(live, { limit: 1, tags: ["team:a"], now: NOW, after: { notAfter: b.details.notAfter, id: b.id } }))).toEqual([a.id]);
    });

    test("updateSettings() replaces tags, sets and clears mutedUntil, and bumps the version", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const cert = await addCertificate(store, certificateRecord(live, { tags: ["old"] }));
      const updated = (await store.certificates.updateSettings(live, cert.id, { tags: ["new", "x"], mutedUntil: NOW + HOUR, updatedAt: NOW })) as CertificateRecord | null;
      expect(updated).toMatchObject({ tags: ["new", "x"], mutedUntil: NOW + HOUR, version: cert.version + 1 });
      expect(ids(await store.certificates.list(live, { limit: 10, tags: ["old"], now: NOW }))).toEqual([]);
      expect(ids(await store.certificates.list(live, { limit: 10, tags: ["new"], now: NOW }))).toEqual([cert.id]);
      const renamed = (await store.certificates.updateSettings(live, cert.id, { name: "Renamed", updatedAt: NOW })) as CertificateRecord | null;
      expect(renamed).toMatchObject({ tags: ["new", "x"], mutedUntil: NOW + HOUR });
      expect(((await store.certificates.updateSettings(live, cert.id, { mutedUntil: null, updatedAt: NOW })) as CertificateRecord | null)?.mutedUntil).toBeNull();
      // A saved check leaves tags and the mute as the caller set them.
      const current = (await store.certificates.get(live, cert.id))!;
      expect(await store.certificates.saveCheck({ ...current, tags: ["stale"], mutedUntil: NOW + DAY, lastCheckedAt: NOW }, [])).toBe(true);
      expect(await store.certificates.get(live, cert.id)).toMatchObject({ tags: ["new", "x"], mutedUntil: null });
    });

    test("remove() forgets the tags: a new certificate of the same domain starts without them", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const cert = await addCertificate(store, certificateRecord(live, { tags: ["gone"] }));
      expect(await store.certificates.remove(live, cert.id, NOW)).toBe(true);
      expect(await store.certificates.list(live, { limit: 10, tags: ["gone"], now: NOW })).toEqual([]);
    });

    test("channels keep their filter; update() replaces it, and null removes it", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live, { filter: { events: ["certificate.expired"], tags: ["team:a"] } }));
      expect((await store.channels.get(live, channel.id))?.filter).toEqual({ events: ["certificate.expired"], tags: ["team:a"] });
      expect((await store.channels.update(live, channel.id, { name: "n", updatedAt: NOW }))?.filter).toEqual({ events: ["certificate.expired"], tags: ["team:a"] });
      expect((await store.channels.update(live, channel.id, { filter: { tags: ["b"] }, updatedAt: NOW }))?.filter).toEqual({ tags: ["b"] });
      expect((await store.channels.update(live, channel.id, { filter: null, updatedAt: NOW }))?.filter).toBeNull();
    });

    test("events of a check go to the enabled channels whose filter matches; a muted certificate's go nowhere", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const all = await addChannel(store, channelRecord(live));
      const expiredOnly = await addChannel(store, channelRecord(live, { filter: { events: ["certificate.expired"] } }));
      const teamA = await addChannel(store, channelRecord(live, { filter: { tags: ["team:a", "team:z"] } }));
      const teamB = await addChannel(store, channelRecord(live, { filter: { tags: ["team:b"] } }));
      const both = await addChannel(store, channelRecord(live, { filter: { events: ["certificate.expiring"], tags: ["team:a"] } }));
      await addChannel(store, channelRecord(live, { enabled: false }));
      const cert = await addCertificate(store, certificateRecord(live, { tags: ["team:a"] }));

      const expiring = certificateEvent(cert, "certificate.expiring", NOW, { threshold: 30 });
      expect(await store.certificates.saveCheck({ ...cert, lastCheckedAt: NOW }, [expiring])).toBe(true);
      expect((await deliveriesOf(store, live, expiring.id)).map((d) => d.channelId).sort()).toEqual([all.id, teamA.id, both.id].sort());

      const muted = (await store.certificates.updateSettings(live, cert.id, { mutedUntil: NOW + DAY, updatedAt: NOW })) as CertificateRecord;
      const silenced = certificateEvent(muted, "certificate.expired", NOW);
      expect(silenced.data.muted).toBe(true);
      expect(await store.certificates.saveCheck({ ...muted, lastCheckedAt: NOW }, [silenced])).toBe(true);
      expect(await deliveriesOf(store, live, silenced.id)).toEqual([]);
      expect((await store.events.get(live, silenced.id))?.data.muted).toBe(true);

      const unmuted = (await store.certificates.updateSettings(live, cert.id, { mutedUntil: NOW - 1, updatedAt: NOW })) as CertificateRecord;
      const expired = certificateEvent(unmuted, "certificate.expired", NOW);
      expect(expired.data.muted).toBeUndefined();
      expect(await store.certificates.saveCheck({ ...unmuted, lastCheckedAt: NOW }, [expired])).toBe(true);
      expect((await deliveriesOf(store, live, expired.id)).map((d) => d.channelId).sort()).toEqual([all.id, expiredOnly.id, teamA.id].sort());
      expect(teamB.id).not.toBe(all.id);
    });

    test("events.prune() deletes old events with their deliveries, oldest first, never one with a pending delivery", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      // Far in the past, so other tests' events (at NOW) are never old enough.
      const past = NOW - 1000 * DAY;
      const oldest = eventRecord(live, { createdAt: past - 3 * DAY });
      const old = eventRecord(live, { createdAt: past - 2 * DAY });
      const pending = eventRecord(live, { createdAt: past - 2 * DAY });
      const young = eventRecord(live, { createdAt: past + DAY });
      await store.events.insert(oldest, [deliveryRecord(oldest.id, channel.id, { status: "delivered", attempts: 1 })]);
      await store.events.insert(old, [deliveryRecord(old.id, channel.id, { status: "failed", attempts: 9 })]);
      await store.events.insert(pending, [deliveryRecord(pending.id, channel.id, { status: "pending", nextAttemptAt: 9e15 - 1 })]);
      await store.events.insert(young, []);
      expect(await store.events.prune({ before: past, limit: 1 })).toBe(1);
      expect(await store.events.get(live, oldest.id)).toBeNull();
      expect(await store.events.get(live, old.id)).not.toBeNull();
      expect(await store.events.prune({ before: past, limit: 100 })).toBe(1);
      expect(ids(await store.events.list(live, { limit: 10 })).sort()).toEqual([pending.id, young.id].sort());
      expect((await store.events.get(live, pending.id))?.deliveries.map((d) => d.status)).toEqual(["pending"]);
      expect(await store.events.prune({ before: past, limit: 100 })).toBe(0);
    });
  });
}
