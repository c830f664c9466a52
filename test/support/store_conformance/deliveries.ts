/** The store conformance suite's part for deliveries: claimDueDeliveries, nextDeliveryAt, countPending, completeDelivery. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import type { DeliveryRecord, Scope } from "../../../core/base/records.ts";
import { newId } from "../../../core/base/ids.ts";
import { DAY, HOUR, MINUTE } from "../../../core/base/time.ts";
import { certificateRecord, channelRecord, deliveryRecord, eventRecord, NOW } from "./factories.ts";
import { addCertificate, addChannel, deliveriesOf, deliveryKeys, newOrganization, PARKED, parkLeftovers } from "./_helpers.ts";

export function describeDeliveries(get: () => Store) {
  describe("deliveries: claimDueDeliveries, nextDeliveryAt, completeDelivery", () => {
    async function eventWithDeliveries(store: Store, scope: Scope, channels: string[], overrides: Partial<DeliveryRecord> = {}) {
      const event = eventRecord(scope);
      const deliveries = channels.map((channelId) => deliveryRecord(event.id, channelId, overrides));
      await store.events.insert(event, deliveries);
      return { event, deliveries };
    }

    test("pullForwardDeliveries() makes due now every pending attempt later than `latest` after an update later than `updatedAfter`, leases included, and leaves the others", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const a = await addChannel(store, channelRecord(live));
      // Planned on a clock since set back (updated later than `updatedAfter`): a retry, and a lease,
      // beyond the latest any planner chooses.
      const future = PARKED - HOUR;
      const far = await eventWithDeliveries(store, live, [a.id], { nextAttemptAt: PARKED + DAY, attempts: 1, updatedAt: future });
      const leased = await eventWithDeliveries(store, live, [a.id], { nextAttemptAt: NOW - 1, updatedAt: future });
      expect(deliveryKeys(await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: PARKED + 2 * DAY, limit: 10 }))).toEqual(deliveryKeys([{ delivery: leased.deliveries[0]! }]));
      const atLatest = await eventWithDeliveries(store, live, [a.id], { nextAttemptAt: PARKED + HOUR, updatedAt: future });
      const settled = await eventWithDeliveries(store, live, [a.id], { nextAttemptAt: PARKED + DAY, status: "failed", updatedAt: future });
      // As far ahead, updated in the past (another process's longer retry wait): left.
      const longer = await eventWithDeliveries(store, live, [a.id], { nextAttemptAt: PARKED + DAY, attempts: 1, updatedAt: NOW - HOUR });
      const options = { now: NOW, latest: PARKED + HOUR, updatedAfter: NOW };

      expect(await store.events.pullForwardDeliveries(options)).toBe(2);
      expect((await deliveriesOf(store, live, far.event.id))[0]?.nextAttemptAt).toBe(NOW);
      expect((await deliveriesOf(store, live, leased.event.id))[0]?.nextAttemptAt).toBe(NOW);
      expect((await deliveriesOf(store, live, atLatest.event.id))[0]?.nextAttemptAt).toBe(PARKED + HOUR);
      expect((await deliveriesOf(store, live, settled.event.id))[0]).toMatchObject({ status: "failed", nextAttemptAt: PARKED + DAY });
      expect((await deliveriesOf(store, live, longer.event.id))[0]?.nextAttemptAt).toBe(PARKED + DAY);
      const claimed = await store.events.claimDueDeliveries({ owner: "two", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(deliveryKeys(claimed)).toEqual(deliveryKeys([{ delivery: far.deliveries[0]! }, { delivery: leased.deliveries[0]! }]));
      expect(await store.events.pullForwardDeliveries(options)).toBe(0);
      // Settled, so that later tests over every delivery do not meet them.
      const rest = await store.events.claimDueDeliveries({ owner: "three", now: PARKED + DAY, leaseUntil: PARKED + DAY + 1, limit: 500 });
      const mine = rest.filter((job) => [far, leased, atLatest, longer].some(({ event }) => event.id === job.event.id));
      expect(mine).toHaveLength(4);
      for (const { delivery } of mine) {
        expect(await store.events.completeDelivery("three", { ...delivery, status: "delivered", attempts: 1, updatedAt: NOW })).toBe(true);
      }
    });

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

    test("switching a channel off (update() enabled false, or disable()) cancels its waiting deliveries at once; one in flight is left to its outcome", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const patched = await addChannel(store, channelRecord(live));
      const gone = await addChannel(store, channelRecord(live));
      const other = await addChannel(store, channelRecord(live));
      const inFlight = await eventWithDeliveries(store, live, [patched.id]);
      const jobs = await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(jobs.map((j) => j.delivery.eventId)).toEqual([inFlight.event.id]);
      // Waiting for a retry an hour away, or due now but not yet claimed.
      const waiting = await eventWithDeliveries(store, live, [patched.id, gone.id, other.id], { nextAttemptAt: NOW + HOUR, attempts: 1 });

      await store.channels.update(live, patched.id, { enabled: false, updatedAt: NOW + 5 });
      await store.channels.disable(gone.id, NOW + 6);
      const after = await deliveriesOf(store, live, waiting.event.id);
      expect(after.find((d) => d.channelId === patched.id)).toMatchObject({ status: "failed", attempts: 1, updatedAt: NOW + 5, lastError: expect.stringContaining("Cancelled") });
      expect(after.find((d) => d.channelId === gone.id)).toMatchObject({ status: "failed", attempts: 1, updatedAt: NOW + 6, lastError: expect.stringContaining("Cancelled") });
      expect(after.find((d) => d.channelId === other.id)).toEqual(waiting.deliveries.find((d) => d.channelId === other.id)!);
      // The attempt in flight records what it came to.
      const outcome = { eventId: inFlight.event.id, channelId: patched.id, status: "delivered" as const, attempts: 1, nextAttemptAt: NOW, lastError: null, updatedAt: NOW + 7 };
      expect(await store.events.completeDelivery("one", outcome)).toBe(true);
      expect(await deliveriesOf(store, live, inFlight.event.id)).toEqual([outcome]);
      // Switched on again, nothing cancelled comes back.
      await store.channels.update(live, patched.id, { enabled: true, updatedAt: NOW + 8 });
      expect((await deliveriesOf(store, live, waiting.event.id)).find((d) => d.channelId === patched.id)?.status).toBe("failed");
      expect(await store.events.nextDeliveryAt()).toBe(NOW + HOUR);
    });

    test("completeDelivery() of a retry to a channel switched off (or deleted) during the attempt cancels it instead; a delivered outcome stands", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const off = await addChannel(store, channelRecord(live));
      const gone = await addChannel(store, channelRecord(live));
      const delivered = await addChannel(store, channelRecord(live));
      const { event } = await eventWithDeliveries(store, live, [off.id, gone.id, delivered.id]);
      expect(await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 })).toHaveLength(3);
      await store.channels.update(live, off.id, { enabled: false, updatedAt: NOW + 1 });
      await store.channels.update(live, delivered.id, { enabled: false, updatedAt: NOW + 1 });
      await store.channels.remove(live, gone.id, NOW + 1);
      const retry = { eventId: event.id, status: "pending" as const, attempts: 1, nextAttemptAt: NOW + HOUR, lastError: "The endpoint answered HTTP 500", updatedAt: NOW + 2 };
      expect(await store.events.completeDelivery("one", { ...retry, channelId: off.id })).toBe(true);
      await store.events.completeDelivery("one", { ...retry, channelId: gone.id });
      expect(await store.events.completeDelivery("one", { ...retry, channelId: delivered.id, status: "delivered", lastError: null })).toBe(true);
      const after = await deliveriesOf(store, live, event.id);
      expect(after.find((d) => d.channelId === off.id)).toMatchObject({ status: "failed", attempts: 1, lastError: expect.stringContaining("Cancelled") });
      expect(after.find((d) => d.channelId === gone.id)).toMatchObject({ status: "failed", lastError: expect.stringContaining("Cancelled") });
      expect(after.find((d) => d.channelId === delivered.id)).toMatchObject({ status: "delivered", lastError: null });
    });

    test("switching a channel off through another scope changes nothing: update() is null, its waiting deliveries stay", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live, test: testScope } = await newOrganization(store);
      const { live: stranger } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const waiting = await eventWithDeliveries(store, live, [channel.id], { nextAttemptAt: NOW + HOUR, attempts: 1 });
      for (const scope of [stranger, testScope]) expect(await store.channels.update(scope, channel.id, { enabled: false, updatedAt: NOW + 5 })).toBeNull();
      expect((await store.channels.get(live, channel.id))?.enabled).toBe(true);
      expect(await deliveriesOf(store, live, waiting.event.id)).toEqual(waiting.deliveries);
    });

    /** One delivery per event, due at `at`, to one channel of its own per organization. */
    async function dueDeliveries(store: Store, scope: Scope, times: number[]): Promise<string[]> {
      const channel = await addChannel(store, channelRecord(scope));
      const keys: string[] = [];
      for (const at of times) {
        const { event } = await eventWithDeliveries(store, scope, [channel.id], { nextAttemptAt: at });
        keys.push(`${event.id} ${channel.id}`);
      }
      return keys;
    }
    const claimedKeys = (jobs: Array<{ delivery: DeliveryRecord }>) => jobs.map((j) => `${j.delivery.eventId} ${j.delivery.channelId}`);

    test("claimDueDeliveries() takes every organization's earliest first, then their second: one with many due never crowds out the others", async () => {
      const store = get();
      await parkLeftovers(store);
      const busy = await dueDeliveries(store, (await newOrganization(store)).live, [NOW - 50, NOW - 49, NOW - 48, NOW - 47, NOW - 46]);
      const [quiet] = await dueDeliveries(store, (await newOrganization(store)).live, [NOW - 1]);
      const pair = await dueDeliveries(store, (await newOrganization(store)).live, [NOW - 10, NOW - 9]);
      const lease = { owner: "one", now: NOW, leaseUntil: NOW + MINUTE };
      expect(claimedKeys(await store.events.claimDueDeliveries({ ...lease, limit: 3 }))).toEqual([busy[0]!, pair[0]!, quiet!]);
      expect(claimedKeys(await store.events.claimDueDeliveries({ ...lease, limit: 3 }))).toEqual([busy[1]!, pair[1]!, busy[2]!]);
      expect(claimedKeys(await store.events.claimDueDeliveries({ ...lease, limit: 10 }))).toEqual([busy[3]!, busy[4]!]);
    });

    test("claimDueDeliveries() goes round-robin among equal ranks: the organizations after `after` first, wrapping around", async () => {
      const store = get();
      await parkLeftovers(store);
      const organizations = [await newOrganization(store), await newOrganization(store), await newOrganization(store)];
      organizations.sort((x, y) => (x.org.id < y.org.id ? -1 : 1));
      // The first organization's deliveries are the oldest: without `after`, they would go first.
      const [first, second, third] = [
        await dueDeliveries(store, organizations[0]!.live, [NOW - 30, NOW - 29]),
        await dueDeliveries(store, organizations[1]!.live, [NOW - 20, NOW - 19]),
        await dueDeliveries(store, organizations[2]!.live, [NOW - 10, NOW - 9]),
      ];
      const lease = { owner: "one", now: NOW, leaseUntil: NOW + MINUTE };
      const claim = async (after: string, limit: number) => claimedKeys(await store.events.claimDueDeliveries({ ...lease, after, limit }));
      expect(await claim(organizations[1]!.org.id, 2)).toEqual([third![0]!, first![0]!]);
      expect(await claim(organizations[0]!.org.id, 1)).toEqual([second![0]!]);
      expect(await claim(organizations[1]!.org.id, 10)).toEqual([third![1]!, first![1]!, second![1]!]);
    });

    test("claimDueDeliveries() counts what the caller has in flight: at most `perOrganization` each, the least busy first", async () => {
      const store = get();
      await parkLeftovers(store);
      const a = await newOrganization(store);
      const b = await newOrganization(store);
      const loaded = await dueDeliveries(store, a.live, [NOW - 50, NOW - 49, NOW - 48, NOW - 47]);
      const light = await dueDeliveries(store, b.live, [NOW - 5, NOW - 4, NOW - 3]);
      // Test mode is the same organization: it shares the organization's count.
      const [testMode] = await dueDeliveries(store, a.test, [NOW - 60]);
      const lease = { owner: "one", now: NOW, leaseUntil: NOW + MINUTE, perOrganization: 4 };
      const inFlight = { [a.org.id]: 2, [b.org.id]: 1, org_unrelated: 4 };
      // Ranks: a's 3 (testMode), 4, then over the cap; b's 2, 3, 4.
      expect(claimedKeys(await store.events.claimDueDeliveries({ ...lease, inFlight, limit: 3 }))).toEqual([light[0]!, testMode!, light[1]!]);
      // Ranks now: b's 2; a's 3, 4, then over the cap.
      expect(claimedKeys(await store.events.claimDueDeliveries({ ...lease, inFlight, limit: 10 }))).toEqual([light[2]!, loaded[0]!, loaded[1]!]);
      // Nothing more while the caller is that busy; all of a's once it is not.
      expect(await store.events.claimDueDeliveries({ ...lease, inFlight: { [a.org.id]: 4 }, limit: 10 })).toEqual([]);
      expect(claimedKeys(await store.events.claimDueDeliveries({ ...lease, limit: 10 }))).toEqual(loaded.slice(2));
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

    test("completeDelivery() moves the channel's health with the outcome, in one write; an outcome not recorded moves nothing", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const health = async () => (await store.channels.get(live, channel.id))!.health;
      const { event } = await eventWithDeliveries(store, live, [channel.id]);
      await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      const retry = { eventId: event.id, channelId: channel.id, status: "pending" as const, attempts: 1, nextAttemptAt: NOW + 10, lastError: "HTTP 503", updatedAt: NOW + 1 };
      expect(await store.events.completeDelivery("one", retry)).toBe(true);
      expect(await health()).toEqual({ lastDeliveryAt: NOW + 1, lastStatus: "pending", lastError: "HTTP 503", failingSince: NOW + 1 });

      // A lease it no longer holds: neither the outcome nor the health.
      expect(await store.events.completeDelivery("one", { ...retry, status: "delivered", attempts: 2, lastError: null, updatedAt: NOW + 5 })).toBe(false);
      expect((await health())?.lastStatus).toBe("pending");

      await store.events.claimDueDeliveries({ owner: "two", now: NOW + 10, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(await store.events.completeDelivery("two", { ...retry, status: "delivered", attempts: 2, lastError: null, updatedAt: NOW + 20 })).toBe(true);
      expect(await health()).toEqual({ lastDeliveryAt: NOW + 20, lastStatus: "delivered", lastError: null, failingSince: null });
    });

    test("a cancelled retry leaves the channel's health failed, not pending, once nothing tried is left to send (the channel switched off, the certificate deleted, the channel off during the attempt)", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const status = async (id: string) => (await store.channels.get(live, id))!.health?.lastStatus;
      const failOnce = async (owner: string, channelIds: string[]) => {
        const { event } = await eventWithDeliveries(store, live, channelIds);
        const claimed = await store.events.claimDueDeliveries({ owner, now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
        for (const { delivery } of claimed) {
          expect(await store.events.completeDelivery(owner, { ...delivery, status: "pending", attempts: 1, nextAttemptAt: NOW + HOUR, lastError: "HTTP 500", updatedAt: NOW + 1 })).toBe(true);
        }
        return event;
      };

      // Switched off: its retry is cancelled, and nothing is left to try.
      const off = await addChannel(store, channelRecord(live));
      await failOnce("one", [off.id]);
      expect(await status(off.id)).toBe("pending");
      // Answered as it now is, and read so.
      expect((await store.channels.update(live, off.id, { enabled: false, updatedAt: NOW + 2 }))?.health?.lastStatus).toBe("failed");
      expect(await status(off.id)).toBe("failed");

      // The certificate deleted: its events' retries are cancelled; a channel with another tried
      // delivery still pending (another certificate's) keeps pending, as that one will be tried again.
      const certificate = await addCertificate(store, certificateRecord(live));
      const other = await addCertificate(store, certificateRecord(live));
      const a = await addChannel(store, channelRecord(live));
      const b = await addChannel(store, channelRecord(live));
      const ofCertificate = eventRecord(live, { certificateId: certificate.id });
      const ofOther = eventRecord(live, { certificateId: other.id });
      await store.events.insert(ofCertificate, [deliveryRecord(ofCertificate.id, a.id), deliveryRecord(ofCertificate.id, b.id)]);
      await store.events.insert(ofOther, [deliveryRecord(ofOther.id, b.id)]);
      const claimed = await store.events.claimDueDeliveries({ owner: "two", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(claimed).toHaveLength(3);
      for (const { delivery } of claimed) {
        await store.events.completeDelivery("two", { ...delivery, status: "pending", attempts: 1, nextAttemptAt: NOW + HOUR, lastError: "HTTP 500", updatedAt: NOW + 1 });
      }
      expect(await store.certificates.remove(live, certificate.id, NOW + 2)).toBe(true);
      expect([await status(a.id), await status(b.id)]).toEqual(["failed", "pending"]);

      // Switched off while its attempt was under way: the retry is cancelled as it is recorded.
      const during = await addChannel(store, channelRecord(live));
      const { event } = await eventWithDeliveries(store, live, [during.id]);
      const [leased] = await store.events.claimDueDeliveries({ owner: "three", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(leased?.delivery.eventId).toBe(event.id);
      await store.channels.update(live, during.id, { enabled: false, updatedAt: NOW + 1 });
      expect(await store.events.completeDelivery("three", { ...leased!.delivery, status: "pending", attempts: 1, nextAttemptAt: NOW + HOUR, lastError: "HTTP 500", updatedAt: NOW + 2 })).toBe(true);
      expect((await deliveriesOf(store, live, event.id))[0]?.status).toBe("failed");
      expect(await status(during.id)).toBe("failed");
    });

    test("a cancellation settles only the channels whose tried deliveries it cancelled: a retry ended without an attempt (PagerDuty's resolved since) keeps the health its last attempt left", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const { event } = await eventWithDeliveries(store, live, [channel.id]);
      const [first] = await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      await store.events.completeDelivery("one", { ...first!.delivery, status: "pending", attempts: 1, nextAttemptAt: NOW + 10, lastError: "HTTP 500", updatedAt: NOW + 1 });
      const [retry] = await store.events.claimDueDeliveries({ owner: "two", now: NOW + 10, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(retry?.delivery.eventId).toBe(event.id);
      await store.events.completeDelivery("two", { ...retry!.delivery, status: "delivered", attempts: 1, nextAttemptAt: NOW + 11, lastError: null, updatedAt: NOW + 11 }, { health: false });
      const status = async () => (await store.channels.get(live, channel.id))!.health?.lastStatus;
      expect(await status()).toBe("pending");
      const unrelated = await addCertificate(store, certificateRecord(live));
      const ofUnrelated = eventRecord(live, { certificateId: unrelated.id });
      await store.events.insert(ofUnrelated, [deliveryRecord(ofUnrelated.id, channel.id)]);
      expect(await store.certificates.remove(live, unrelated.id, NOW + 12)).toBe(true);
      expect(await status()).toBe("pending");
    });

    test("completeDelivery() with health false ends the delivery and leaves the channel's health as it was (no attempt was made)", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const health = async () => (await store.channels.get(live, channel.id))!.health;
      const { event } = await eventWithDeliveries(store, live, [channel.id]);
      await store.events.claimDueDeliveries({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      const retry = { eventId: event.id, channelId: channel.id, status: "pending" as const, attempts: 1, nextAttemptAt: NOW + 10, lastError: "HTTP 503", updatedAt: NOW + 1 };
      expect(await store.events.completeDelivery("one", retry)).toBe(true);
      const failing = await health();
      await store.events.claimDueDeliveries({ owner: "two", now: NOW + 10, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(await store.events.completeDelivery("two", { ...retry, status: "delivered", lastError: null, updatedAt: NOW + 20 }, { health: false })).toBe(true);
      expect(await health()).toEqual(failing);
      expect((await deliveriesOf(store, live, event.id)).map((d) => [d.status, d.attempts])).toEqual([["delivered", 1]]);
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
