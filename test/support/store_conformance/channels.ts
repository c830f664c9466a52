/** The store conformance suite's part for notification channels. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import type { ChannelRecord } from "../../../core/base/records.ts";
import { newId } from "../../../core/base/ids.ts";
import { certificateRecord, channelRecord, deliveryRecord, eventRecord, NOW } from "./factories.ts";
import { addCertificate, addChannel, byNewest, deliveriesOf, newOrganization } from "./_helpers.ts";

export function describeChannels(get: () => Store) {
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

    test("recordAttempt() keeps the last attempt and since when the channel fails, for get() and list()", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      expect((await store.channels.get(live, channel.id))!.health).toBeUndefined();
      await store.channels.recordAttempt(channel.id, { at: NOW, status: "pending", error: "The endpoint answered HTTP 500" });
      const failing = { lastDeliveryAt: NOW, lastStatus: "pending" as const, lastError: "The endpoint answered HTTP 500", failingSince: NOW };
      expect((await store.channels.get(live, channel.id))!.health).toEqual(failing);
      // A second failure moves the last attempt, not the start of the failing.
      await store.channels.recordAttempt(channel.id, { at: NOW + 10, status: "failed", error: "timeout" });
      expect((await store.channels.get(live, channel.id))!.health).toEqual({ lastDeliveryAt: NOW + 10, lastStatus: "failed", lastError: "timeout", failingSince: NOW });
      // An attempt that finished earlier than the last one recorded changes nothing.
      await store.channels.recordAttempt(channel.id, { at: NOW + 5, status: "delivered", error: null });
      expect((await store.channels.get(live, channel.id))!.health!.lastDeliveryAt).toBe(NOW + 10);
      await store.channels.recordAttempt(channel.id, { at: NOW + 20, status: "delivered", error: "ignored on success" });
      const healthy = { lastDeliveryAt: NOW + 20, lastStatus: "delivered" as const, lastError: null, failingSince: null };
      expect((await store.channels.get(live, channel.id))!.health).toEqual(healthy);
      expect((await store.channels.list(live, { limit: 10 })).find((c) => c.id === channel.id)!.health).toEqual(healthy);
      await store.channels.recordAttempt(channel.id, { at: NOW + 30, status: "pending", error: "refused" });
      expect((await store.channels.get(live, channel.id))!.health!.failingSince).toBe(NOW + 30);
      const renamed = await store.channels.update(live, channel.id, { name: "Renamed", updatedAt: NOW + 31 });
      expect(renamed!.health).toEqual({ lastDeliveryAt: NOW + 30, lastStatus: "pending", lastError: "refused", failingSince: NOW + 30 });
      // A channel that is gone: nothing to record, no error.
      await store.channels.recordAttempt(newId("ch"), { at: NOW, status: "failed", error: "x" });
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
