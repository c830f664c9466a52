/** Certificate Transparency watches and the shared revocation cache, in memory. */
import { LONGEST_RETRY_AFTER_MS, type RevocationCache, type WatchStore } from "../../core/store/mod.ts";
import type { RevocationAnswer, WatchRecord } from "../../core/base/mod.ts";
import { copy, inScope, type MemoryState } from "./state.ts";

export function memoryWatches(state: MemoryState): WatchStore {
  const watches = state.watches;
  /** Watches whose last poll the CT service rate-limited: until when (the SQL store's retry_at). */
  const retryAts = new Map<string, number>();
  return {
    async insert(record, { limit }) {
      const scoped = [...watches.values()].filter((w) => inScope(w, record));
      if (scoped.some((w) => w.domain === record.domain)) return "duplicate";
      if (scoped.length >= limit) return "limit_reached";
      state.write();
      watches.set(record.id, { ...copy(record), leaseOwner: null });
      return "created";
    },
    async get(scope, id) {
      const watch = watches.get(id);
      return watch && inScope(watch, scope) ? strip(watch) : null;
    },
    async list(scope, { limit, before }) {
      return [...watches.values()]
        .filter((w) => inScope(w, scope))
        .filter((w) => !before || w.createdAt < before.createdAt || (w.createdAt === before.createdAt && w.id < before.id))
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
        .slice(0, limit)
        .map(strip);
    },
    async update(scope, id, patch) {
      const watch = watches.get(id);
      if (!watch || !inScope(watch, scope)) return null;
      state.write();
      const { updatedAt, ...fields } = copy(patch);
      for (const [key, value] of Object.entries(fields)) if (value !== undefined) Object.assign(watch, { [key]: value });
      watch.updatedAt = updatedAt;
      return strip(watch);
    },
    async remove(scope, id) {
      const watch = watches.get(id);
      if (!watch || !inScope(watch, scope)) return false;
      state.write();
      watches.delete(id);
      return true;
    },
    async pollSoon(scope, id, at) {
      const watch = watches.get(id);
      if (!watch || !inScope(watch, scope)) return null;
      // Not before the end of a wait the CT service asked for (unless planned on a clock since set back).
      const retryAt = retryAts.get(id);
      const earliest = retryAt === undefined || retryAt > at + LONGEST_RETRY_AFTER_MS ? at : Math.max(at, retryAt);
      if (watch.leaseOwner === null && earliest < watch.nextPollAt) {
        state.write();
        watch.nextPollAt = earliest;
      }
      return strip(watch);
    },
    async claimDue({ owner, now, leaseUntil, limit }) {
      const due = [...watches.values()]
        .filter((w) => w.nextPollAt <= now)
        .sort((a, b) => a.nextPollAt - b.nextPollAt || (a.id < b.id ? -1 : 1))
        .slice(0, limit);
      if (due.length > 0) state.write();
      return due.map((watch) => {
        const before = strip(watch);
        watch.nextPollAt = leaseUntil;
        watch.leaseOwner = owner;
        return before;
      });
    },
    async pullForwardPolls({ now, latest, polledAfter, owner }) {
      let moved = 0;
      for (const watch of watches.values()) {
        if (watch.nextPollAt > latest && (watch.lastPolledAt ?? watch.createdAt) > polledAfter && watch.leaseOwner !== owner) {
          if (moved++ === 0) state.write();
          watch.nextPollAt = now;
        }
      }
      return moved;
    },
    async nextPollAt() {
      let earliest: number | null = null;
      for (const watch of watches.values()) if (earliest === null || watch.nextPollAt < earliest) earliest = watch.nextPollAt;
      return earliest;
    },
    async savePoll(progress, events) {
      const watch = watches.get(progress.id);
      if (!watch || watch.leaseOwner !== progress.owner) return false;
      state.write();
      watch.cursor = progress.cursor;
      watch.issuancesSeen += progress.newIssuances;
      // Issuances the CT follower recorded while this poll held the lease: the next poll is due now.
      const recordedMeanwhile = progress.release && progress.issuancesSeen !== undefined && watch.issuancesSeen > progress.issuancesSeen;
      watch.baselineDone = progress.baselineDone;
      watch.pendingNames = [...progress.pendingNames];
      watch.lastPolledAt = progress.lastPolledAt;
      watch.lastError = progress.lastError;
      watch.nextPollAt = recordedMeanwhile ? Math.min(progress.nextPollAt, progress.updatedAt) : progress.nextPollAt;
      watch.updatedAt = progress.updatedAt;
      if (progress.release) watch.leaseOwner = null;
      if (progress.release && progress.rateLimited) retryAts.set(progress.id, progress.nextPollAt);
      else if (progress.release) retryAts.delete(progress.id);
      state.addEvents(events);
      return true;
    },
  };
}

function strip(watch: WatchRecord & { leaseOwner: string | null }): WatchRecord {
  const { leaseOwner: _, ...rest } = watch;
  return copy(rest);
}

export function memoryRevocations(state: MemoryState): RevocationCache {
  return {
    async get(key, now) {
      const answer = state.revocations.get(key);
      return answer && now < answer.validUntil ? copy(answer) : null;
    },
    async put(key, answer: RevocationAnswer) {
      state.revocations.set(key, copy(answer));
      // Expired answers are never read again; drop them now and then so the map stays small.
      if (state.revocations.size % 1024 === 0) {
        for (const [other, stored] of state.revocations) if (stored.validUntil <= answer.checkedAt) state.revocations.delete(other);
      }
    },
  };
}
