/** The store conformance suite's part for events: insert, list, get. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import type { DeliveryRecord, EventRecord } from "../../../core/base/records.ts";
import { newId } from "../../../core/base/ids.ts";
import { MINUTE } from "../../../core/base/time.ts";
import { channelRecord, deliveryRecord, eventRecord, NOW } from "./factories.ts";
import { addChannel, ids, newOrganization } from "./_helpers.ts";

export function describeEvents(get: () => Store) {
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

    test("hasLaterOfCertificate() tells whether an event of the given types about the certificate was inserted after another, in its scope only", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      const expiring = eventRecord(live, { type: "certificate.expiring", certificateId: "cert_x", data: {} });
      await store.events.insert(expiring, []);
      const ask = (scope: typeof live, types: readonly string[] = ["certificate.renewed"], certificateId = "cert_x") =>
        store.events.hasLaterOfCertificate(scope, { afterId: expiring.id, certificateId, types: types as never });
      expect(await ask(live)).toBe(false);
      // Another certificate's, another kind, another scope's, another organization's: none counts.
      await store.events.insert(eventRecord(live, { type: "certificate.renewed", certificateId: "cert_y", data: {} }), []);
      await store.events.insert(eventRecord(live, { type: "certificate.recovered", certificateId: "cert_x", data: {} }), []);
      await store.events.insert(eventRecord(testScope, { type: "certificate.renewed", certificateId: "cert_x", data: {} }), []);
      await store.events.insert(eventRecord(other.live, { type: "certificate.renewed", certificateId: "cert_x", data: {} }), []);
      expect(await ask(live)).toBe(false);
      expect(await ask(live, ["certificate.recovered"])).toBe(true);
      expect(await ask(live, [])).toBe(false);
      await store.events.insert(eventRecord(live, { type: "certificate.renewed", certificateId: "cert_x", data: {} }), []);
      expect(await ask(live)).toBe(true);
      // Inserted before it (an older createdAt changes nothing: insertion order counts): no.
      const later = eventRecord(live, { type: "certificate.expired", certificateId: "cert_x", data: {} });
      await store.events.insert(later, []);
      expect(await store.events.hasLaterOfCertificate(live, { afterId: later.id, certificateId: "cert_x", types: ["certificate.renewed"] })).toBe(false);
    });

    test("hasLaterOfCertificate() with a channel counts only a later event routed to that channel", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const paged = await addChannel(store, channelRecord(live));
      const other = await addChannel(store, channelRecord(live));
      const renewed = eventRecord(live, { type: "certificate.renewed", certificateId: "cert_x", data: {} });
      await store.events.insert(renewed, [deliveryRecord(renewed.id, paged.id)]);
      const ask = (channelId: string) =>
        store.events.hasLaterOfCertificate(live, { afterId: renewed.id, certificateId: "cert_x", types: ["certificate.renewal_blocked"], channelId });
      // A later event of that kind sent to another channel only (a filter, a tag): not for this one.
      const blocked = eventRecord(live, { type: "certificate.renewal_blocked", certificateId: "cert_x", data: {} });
      await store.events.insert(blocked, [deliveryRecord(blocked.id, other.id)]);
      expect([await ask(paged.id), await ask(other.id)]).toEqual([false, true]);
      // Without a channel, any later event of the kind counts.
      expect(await store.events.hasLaterOfCertificate(live, { afterId: renewed.id, certificateId: "cert_x", types: ["certificate.renewal_blocked"] })).toBe(true);
      const sent = eventRecord(live, { type: "certificate.renewal_blocked", certificateId: "cert_x", data: {} });
      await store.events.insert(sent, [deliveryRecord(sent.id, paged.id)]);
      expect(await ask(paged.id)).toBe(true);
    });

    test("insert() stores every delivery of an event for 203 channels, each with its own fields", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const event = eventRecord(live);
      const deliveries: DeliveryRecord[] = [];
      for (let i = 0; i < 203; i++) {
        const channel = await addChannel(store, channelRecord(live));
        // Fields that differ by delivery: a row shifted in a many-row statement would show.
        deliveries.push(deliveryRecord(event.id, channel.id, { status: i % 3 ? "pending" : "failed", attempts: i % 7, nextAttemptAt: NOW + i, lastError: i % 3 ? null : `error ${i}`, updatedAt: NOW - i }));
      }
      await store.events.insert(event, deliveries);
      const stored = await store.events.get(live, event.id);
      const byChannel = (list: typeof deliveries) => [...list].sort((a, b) => (a.channelId < b.channelId ? -1 : 1));
      expect(byChannel(stored!.deliveries)).toEqual(byChannel(deliveries));
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

      // The same pages by the last event's id, within its scope only: another scope's event, or one
      // not stored, ends the list.
      const byId = await store.events.list(live, { limit: 2, beforeId: first.at(-1)!.id });
      expect(ids(byId)).toEqual(ids(second));
      expect(ids(await store.events.list(live, { limit: 100, beforeId: third.at(-1)!.id }))).toEqual([]);
      const elsewhere = (await store.events.list(other.live, { limit: 1 }))[0]!;
      expect(await store.events.list(live, { limit: 100, beforeId: elsewhere.id })).toEqual([]);
      expect(await store.events.list(live, { limit: 100, beforeId: "evt_nowhere" })).toEqual([]);
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
