/** Channels, events and deliveries in memory. */
import { DELIVERY_CANCELLED, fairShare, type ChannelStore, type DeliveryJob, type EventStore, type EventWithDeliveries, type FairShareCandidate } from "../../core/store/mod.ts";
import type { DeliveryRecord, EventRecord } from "../../core/base/mod.ts";
import { copy, copyJson, inScope, withoutLease, type MemoryState } from "./state.ts";

const CANCELLED = DELIVERY_CANCELLED.channelOff;

export function memoryChannels(state: MemoryState): ChannelStore {
  /** A channel switched off: its deliveries waiting for an attempt are cancelled at once (one in flight is settled by its outcome). */
  const cancelWaiting = (channelId: string, at: number) =>
    state.cancelDeliveries((d) => d.channelId === channelId && !d.leaseOwner, CANCELLED, at);
  return {
    async insert(record, { limit }) {
      if ([...state.channels.values()].filter((c) => inScope(c, record)).length >= limit) return false;
      state.write();
      state.channels.set(record.id, copy(record));
      return true;
    },
    async get(scope, id) {
      const channel = state.channels.get(id);
      return channel && inScope(channel, scope) ? copy(channel) : null;
    },
    async list(scope, { limit, before }) {
      return copy(
        [...state.channels.values()]
          .filter((c) => inScope(c, scope))
          .filter((c) => !before || c.createdAt < before.createdAt || (c.createdAt === before.createdAt && c.id < before.id))
          .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
          .slice(0, limit),
      );
    },
    async update(scope, id, patch) {
      const channel = state.channels.get(id);
      if (!channel || !inScope(channel, scope)) return null;
      state.write();
      const { updatedAt, ...fields } = copy(patch);
      for (const [key, value] of Object.entries(fields)) if (value !== undefined) Object.assign(channel, { [key]: value });
      channel.updatedAt = updatedAt;
      if (patch.enabled === false) cancelWaiting(id, updatedAt);
      return copy(channel);
    },
    async remove(scope, id, at) {
      const channel = state.channels.get(id);
      if (!channel || !inScope(channel, scope)) return false;
      state.write();
      state.channels.delete(id);
      state.cancelDeliveries((d) => d.channelId === id, DELIVERY_CANCELLED.channelDeleted, at);
      return true;
    },
    async disable(id, at) {
      const channel = state.channels.get(id);
      if (!channel) return;
      state.write();
      channel.enabled = false;
      channel.updatedAt = at;
      cancelWaiting(id, at);
    },
    async recordAttempt(id, attempt) {
      const channel = state.channels.get(id);
      if (!channel) return;
      const health = channel.health ?? { lastDeliveryAt: null, lastStatus: null, lastError: null, failingSince: null };
      if (health.lastDeliveryAt !== null && health.lastDeliveryAt > attempt.at) return;
      state.write();
      channel.health = {
        lastDeliveryAt: attempt.at,
        lastStatus: attempt.status,
        lastError: attempt.status === "delivered" ? null : attempt.error,
        failingSince: attempt.status === "delivered" ? null : (health.failingSince ?? attempt.at),
      };
    },
  };
}

export function memoryEvents(state: MemoryState): EventStore {
  const channels = memoryChannels(state);
  const deliveriesOf = (eventId: string): DeliveryRecord[] =>
    (state.deliveriesByEvent.get(eventId) ?? [])
      .map((key) => state.deliveries.get(key)!)
      .sort((a, b) => (a.channelId < b.channelId ? -1 : 1))
      .map(withoutLease);
  // Stored events are frozen (state.ts storedEvent): shared, not copied.
  const withDeliveries = (event: EventRecord & { seq: number }): EventWithDeliveries => ({
    ...event,
    deliveries: deliveriesOf(event.id),
  });

  return {
    async insert(event, deliveries, options) {
      state.write();
      state.putEvent(event);
      for (const d of deliveries) {
        state.deliveries.set(`${d.eventId} ${d.channelId}`, { ...copy(d), leaseOwner: options?.leaseOwner ?? null });
        state.indexDelivery(d.eventId, d.channelId, d.status);
      }
    },
    async list(scope, { limit, beforeSeq, beforeId, beforeCreatedAt }) {
      let createdBefore = Infinity; // (inclusive)
      if (beforeId !== undefined) {
        const named = state.events.get(beforeId);
        if (named && inScope(named, scope)) beforeSeq = named.seq;
        else if (beforeCreatedAt !== undefined) createdBefore = beforeCreatedAt;
        else return [];
      }
      // Newest first: backwards from the last event older than the cursor (found by bisection).
      const bySeq = state.eventsBySeq;
      let low = 0;
      let high = bySeq.length;
      if (beforeSeq !== undefined) {
        while (low < high) {
          const mid = (low + high) >>> 1;
          if (bySeq[mid]!.seq < beforeSeq) low = mid + 1;
          else high = mid;
        }
      }
      const page: Array<ReturnType<typeof withDeliveries>> = [];
      for (let i = high - 1; i >= 0 && page.length < limit; i--) {
        const event = bySeq[i]!;
        // (Only as it is stored now: never one pruned since, nor an id stored again.)
        if (inScope(event, scope) && event.createdAt <= createdBefore && state.events.get(event.id) === event) page.push(withDeliveries(event));
      }
      return page;
    },
    async get(scope, id) {
      const event = state.events.get(id);
      return event && inScope(event, scope) ? withDeliveries(event) : null;
    },
    async hasLaterOfCertificate(scope, { afterId, certificateId, types, channelId }) {
      const after = state.events.get(afterId);
      if (!after) return false;
      for (let i = state.eventsBySeq.length - 1; i >= 0; i--) {
        const event = state.eventsBySeq[i]!;
        if (event.seq <= after.seq) break;
        if (event.certificateId !== certificateId || !inScope(event, scope) || !types.includes(event.type) || state.events.get(event.id) !== event) continue;
        if (channelId === undefined || state.deliveries.has(`${event.id} ${channelId}`)) return true;
      }
      return false;
    },
    async claimDueDeliveries({ owner, now, leaseUntil, limit, perOrganization, inFlight, after }) {
      const candidates: Array<FairShareCandidate & { delivery: DeliveryRecord & { leaseOwner: string | null } }> = [];
      let order = 0;
      for (const key of state.pending) {
        const delivery = state.deliveries.get(key)!;
        order++; // the pending set keeps insertion order
        if (delivery.nextAttemptAt > now) continue;
        if (!state.channels.get(delivery.channelId)?.enabled) {
          state.write();
          Object.assign(delivery, { status: "failed", lastError: CANCELLED, updatedAt: now });
          state.pending.delete(key);
          continue;
        }
        candidates.push({ delivery, organizationId: state.events.get(delivery.eventId)!.organizationId, nextAttemptAt: delivery.nextAttemptAt, order });
      }
      const jobs: DeliveryJob[] = [];
      for (const { delivery } of fairShare(candidates, { limit, perOrganization, inFlight, after })) {
        state.write();
        const { seq: _, ...event } = state.events.get(delivery.eventId)!;
        jobs.push({ delivery: withoutLease(delivery), event, channel: copyJson(state.channels.get(delivery.channelId)!) });
        delivery.nextAttemptAt = leaseUntil;
        delivery.leaseOwner = owner;
      }
      return jobs;
    },
    async pullForwardDeliveries({ now, latest, updatedAfter }) {
      let moved = 0;
      for (const key of state.pending) {
        const delivery = state.deliveries.get(key)!;
        if (delivery.nextAttemptAt > latest && delivery.updatedAt > updatedAfter) {
          if (moved++ === 0) state.write();
          delivery.nextAttemptAt = now;
        }
      }
      return moved;
    },
    async nextDeliveryAt() {
      let next: number | null = null;
      for (const key of state.pending) {
        const d = state.deliveries.get(key)!;
        if (next === null || d.nextAttemptAt < next) next = d.nextAttemptAt;
      }
      return next;
    },
    async countPending() {
      return [...state.pending].filter((key) => state.deliveries.get(key)?.status === "pending").length;
    },
    async prune({ before, limit }) {
      const old = [...state.events.values()]
        .filter((e) => e.createdAt < before && !(state.deliveriesByEvent.get(e.id) ?? []).some((key) => state.pending.has(key)))
        .sort((a, b) => a.createdAt - b.createdAt)
        .slice(0, limit);
      if (old.length > 0) state.write();
      for (const event of old) {
        for (const key of state.deliveriesByEvent.get(event.id) ?? []) state.deliveries.delete(key);
        state.deliveriesByEvent.delete(event.id);
        state.events.delete(event.id);
      }
      if (old.length > 0) state.eventsBySeq = state.eventsBySeq.filter((event) => state.events.has(event.id));
      return old.length;
    },
    async completeDelivery(owner, update, { health = true } = {}) {
      const delivery = state.deliveries.get(`${update.eventId} ${update.channelId}`);
      if (!delivery || delivery.leaseOwner !== owner || delivery.status !== "pending") return false;
      state.write();
      Object.assign(delivery, copy(update), { leaseOwner: null });
      // A retry to a channel switched off (or deleted) during the attempt is cancelled instead.
      const cancelled = delivery.status === "pending" && !state.channels.get(update.channelId)?.enabled;
      if (cancelled) Object.assign(delivery, { status: "failed", lastError: CANCELLED });
      if (delivery.status !== "pending") state.pending.delete(`${update.eventId} ${update.channelId}`);
      // The channel's health with it, as the SQL store does in one transaction.
      if (health) {
        await channels.recordAttempt(update.channelId, { at: update.updatedAt, status: update.status, error: update.lastError });
        if (cancelled) state.settleHealth([update.channelId]);
      }
      return true;
    },
  };
}
