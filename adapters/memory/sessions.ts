/** Browser sessions and failed sign-ins in memory. */
import type { SessionStore, SignInAttemptStore } from "../../core/store/mod.ts";
import { copy, type MemoryState } from "./state.ts";

export function memorySessions(state: MemoryState): SessionStore {
  const removeWhere = (match: (session: { userId: string; expiresAt: number }) => boolean) => {
    let removed = 0;
    for (const [id, session] of state.sessions) {
      if (match(session)) {
        if (removed === 0) state.write();
        state.sessions.delete(id);
        removed++;
      }
    }
    return removed;
  };
  return {
    async create(session) {
      state.write();
      state.sessions.set(session.id, copy(session));
    },
    async get(id) {
      return copy(state.sessions.get(id) ?? null);
    },
    async touch(id, { lastSeenAt, expiresAt }) {
      const session = state.sessions.get(id);
      if (!session) return false;
      state.write();
      Object.assign(session, { lastSeenAt, expiresAt });
      return true;
    },
    async remove(id) {
      if (!state.sessions.has(id)) return false;
      state.write();
      return state.sessions.delete(id);
    },
    async removeByUser(userId) {
      return removeWhere((session) => session.userId === userId);
    },
    async removeExpired(now) {
      return removeWhere((session) => session.expiresAt <= now);
    },
  };
}

export function memorySignInAttempts(state: MemoryState): SignInAttemptStore {
  return {
    async fail(key, { now, windowMs }) {
      state.write();
      const previous = state.signInAttempts.get(key);
      const fresh = !previous || previous.lastFailureAt + windowMs <= now;
      const next = {
        failures: fresh ? 1 : previous.failures + 1,
        lastFailureAt: previous ? Math.max(previous.lastFailureAt, now) : now,
      };
      state.signInAttempts.set(key, next);
      return { ...next };
    },
    async get(key) {
      return copy(state.signInAttempts.get(key) ?? null);
    },
    async clear(key) {
      if (!state.signInAttempts.has(key)) return;
      state.write();
      state.signInAttempts.delete(key);
    },
    async prune(before) {
      let removed = 0;
      for (const [key, entry] of state.signInAttempts) {
        if (entry.lastFailureAt < before) {
          if (removed === 0) state.write();
          state.signInAttempts.delete(key);
          removed++;
        }
      }
      return removed;
    },
  };
}
