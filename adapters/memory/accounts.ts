/** Organizations, users, API keys and rate-limit windows in memory. */
import { DuplicateError, LastOwnerError, RoleChangedError, type ApiKeyStore, type OrganizationStore, type RateLimitStore, type UserStore } from "../../core/store/mod.ts";
import { copy, type MemoryState } from "./state.ts";
import type { Mode, UserRecord } from "../../core/base/mod.ts";

export function memoryAccounts(state: MemoryState): {
  organizations: OrganizationStore;
  users: UserStore;
  apiKeys: ApiKeyStore;
  rateLimits: RateLimitStore;
} {
  const byNewest = <T extends { createdAt: number; id: string }>(a: T, b: T) =>
    b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  const byOldest = <T extends { createdAt: number; id: string }>(a: T, b: T) => -byNewest(a, b);

  const organizations: OrganizationStore = {
    async create(org) {
      state.write();
      state.organizations.set(org.id, copy(org));
    },
    async get(id) {
      return copy(state.organizations.get(id) ?? null);
    },
    async list() {
      return copy([...state.organizations.values()].sort(byOldest));
    },
    async update(id, patch) {
      const org = state.organizations.get(id);
      if (!org) return null;
      state.write();
      if (patch.name !== undefined) org.name = patch.name;
      if (patch.plan !== undefined) org.plan = patch.plan;
      if (patch.limits !== undefined) org.limits = copy(patch.limits);
      return copy(org);
    },
    async usage(id) {
      const count = (records: Iterable<{ organizationId: string; mode: Mode }>, mode: Mode) =>
        [...records].filter((r) => r.organizationId === id && r.mode === mode).length;
      const of = (mode: Mode) => ({
        certificates: count(state.certificates.values(), mode),
        channels: count(state.channels.values(), mode),
        watches: count(state.watches.values(), mode),
      });
      return { live: of("live"), test: of("test") };
    },
  };

  const isLastOwner = (user: UserRecord) =>
    user.role === "owner" &&
    [...state.users.values()].filter((u) => u.organizationId === user.organizationId && u.role === "owner").length <= 1;

  const users: UserStore = {
    async create(user) {
      const email = user.email.toLowerCase();
      if ([...state.users.values()].some((u) => u.email === email)) throw new DuplicateError(`A user with email ${email}`);
      state.write();
      state.users.set(user.id, copy(user));
    },
    async get(id) {
      return copy(state.users.get(id) ?? null);
    },
    async findByEmail(email) {
      return copy([...state.users.values()].find((u) => u.email === email.toLowerCase()) ?? null);
    },
    async list(organizationId) {
      return copy([...state.users.values()].filter((u) => u.organizationId === organizationId).sort(byOldest));
    },
    async update(id, patch, options = {}) {
      const user = state.users.get(id);
      if (!user) return null;
      if (options.whenRole && user.role !== options.whenRole) throw new RoleChangedError();
      if (options.keepOwner && patch.role !== undefined && patch.role !== "owner" && isLastOwner(user)) throw new LastOwnerError();
      state.write();
      if (patch.role !== undefined) user.role = patch.role;
      if (patch.passwordHash !== undefined && patch.passwordHash !== null) user.passwordHash = patch.passwordHash;
      return copy(user);
    },
    async remove(id, at, options = {}) {
      const user = state.users.get(id);
      if (!user) return false;
      if (options.whenRole && user.role !== options.whenRole) throw new RoleChangedError();
      if (options.keepOwner && isLastOwner(user)) throw new LastOwnerError();
      state.write();
      for (const key of state.apiKeys.values()) if (key.userId === id && key.revokedAt === null) key.revokedAt = at;
      state.users.delete(id);
      return true;
    },
  };

  const apiKeys: ApiKeyStore = {
    async create(key) {
      if ([...state.apiKeys.values()].some((k) => k.hash === key.hash)) throw new DuplicateError("An API key with this hash");
      state.write();
      state.apiKeys.set(key.id, copy(key));
    },
    async get(id) {
      return copy(state.apiKeys.get(id) ?? null);
    },
    async revoke(id, at) {
      const key = state.apiKeys.get(id);
      if (!key) return null;
      state.write();
      key.revokedAt ??= at;
      return copy(key);
    },
    async list(organizationId) {
      return copy([...state.apiKeys.values()].filter((k) => k.organizationId === organizationId).sort(byNewest));
    },
    async findByHash(hash) {
      const key = [...state.apiKeys.values()].find((k) => k.hash === hash);
      const organization = key && state.organizations.get(key.organizationId);
      if (!key || !organization) return null;
      return copy({ key, user: state.users.get(key.userId) ?? null, organization });
    },
    async touch(uses) {
      state.write();
      for (const use of uses) {
        const key = state.apiKeys.get(use.id);
        if (key) key.lastUsedAt = Math.max(key.lastUsedAt ?? 0, use.at);
      }
    },
  };

  const rateLimits: RateLimitStore = {
    async hit(keyId, now, windowMs, aheadMs) {
      // A count is a write like any other: the change token must move with it.
      state.write();
      let window = state.rateLimits.get(keyId);
      // Over, or beginning too far ahead (opened on a clock since set back): a new window.
      if (!window || window.windowStart + windowMs <= now || window.windowStart > now + windowMs + aheadMs) {
        window = { windowStart: now, count: 0 };
        state.rateLimits.set(keyId, window);
      }
      window.count++;
      return { ...window };
    },
    async prune(before) {
      let deleted = 0;
      for (const [keyId, window] of state.rateLimits) {
        if (window.windowStart < before && state.rateLimits.delete(keyId)) deleted++;
      }
      if (deleted > 0) state.write();
      return deleted;
    },
  };

  return { organizations, users, apiKeys, rateLimits };
}
