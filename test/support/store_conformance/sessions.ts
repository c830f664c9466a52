/**
 * The store conformance suite's part for the settings area: browser sessions, failed sign-ins, and
 * the last-owner guard of users.update() and users.remove().
 */
import { describe, expect, test } from "bun:test";
import { LastOwnerError, RoleChangedError, type Store } from "../../../core/store/ports.ts";
import { newId } from "../../../core/base/ids.ts";
import { DAY, HOUR, MINUTE } from "../../../core/base/time.ts";
import { apiKeyRecord, hex, NOW, organizationRecord, sessionRecord, userRecord } from "./factories.ts";

async function organizationWithOwner(store: Store) {
  const org = organizationRecord();
  await store.organizations.create(org);
  const owner = userRecord(org.id, { role: "owner" });
  await store.users.create(owner);
  return { org, owner };
}

export function describeSettingsConformance(get: () => Store): void {
  describe("sessions", () => {
    test("create() stores a session that get() returns as given; an unknown id is null", async () => {
      const store = get();
      const { owner } = await organizationWithOwner(store);
      const session = sessionRecord(owner);
      await store.sessions.create(session);
      expect(await store.sessions.get(session.id)).toEqual(session);
      expect(await store.sessions.get(hex(32))).toBeNull();
    });

    test("touch() moves lastSeenAt and expiresAt only; false for a missing session", async () => {
      const store = get();
      const { owner } = await organizationWithOwner(store);
      const session = sessionRecord(owner);
      await store.sessions.create(session);
      expect(await store.sessions.touch(session.id, { lastSeenAt: NOW + HOUR, expiresAt: NOW + 13 * HOUR })).toBe(true);
      expect(await store.sessions.get(session.id)).toEqual({ ...session, lastSeenAt: NOW + HOUR, expiresAt: NOW + 13 * HOUR });
      expect(await store.sessions.touch(hex(32), { lastSeenAt: NOW, expiresAt: NOW })).toBe(false);
    });

    test("remove() deletes one session; removeByUser() every session of one user, no one else's", async () => {
      const store = get();
      const { org, owner } = await organizationWithOwner(store);
      const colleague = userRecord(org.id);
      await store.users.create(colleague);
      const [a, b, c] = [sessionRecord(owner), sessionRecord(owner), sessionRecord(colleague)];
      for (const session of [a, b, c]) await store.sessions.create(session);

      expect(await store.sessions.remove(a.id)).toBe(true);
      expect(await store.sessions.remove(a.id)).toBe(false);
      expect(await store.sessions.get(a.id)).toBeNull();
      expect(await store.sessions.removeByUser(owner.id)).toBe(1);
      expect(await store.sessions.get(b.id)).toBeNull();
      expect(await store.sessions.get(c.id)).toEqual(c);
      expect(await store.sessions.removeByUser(owner.id)).toBe(0);
    });

    test("removeExpired() deletes the sessions that expired at or before `now`, leaving the rest", async () => {
      const store = get();
      const { owner } = await organizationWithOwner(store);
      // Far in the future, so other tests' sessions (which expire around NOW) are removed too and counted apart.
      const base = NOW + 1000 * DAY;
      const expired = sessionRecord(owner, { expiresAt: base - 1 });
      const expiringNow = sessionRecord(owner, { expiresAt: base });
      const alive = sessionRecord(owner, { expiresAt: base + 1 });
      for (const session of [expired, expiringNow, alive]) await store.sessions.create(session);
      expect(await store.sessions.removeExpired(base)).toBeGreaterThanOrEqual(2);
      expect(await store.sessions.get(expired.id)).toBeNull();
      expect(await store.sessions.get(expiringNow.id)).toBeNull();
      expect(await store.sessions.get(alive.id)).toEqual(alive);
      expect(await store.sessions.removeExpired(base)).toBe(0);
    });
  });

  describe("sign-in attempts", () => {
    test("fail() counts failures per key and starts again once `windowMs` passed since the last one", async () => {
      const store = get();
      const key = `email:${newId("usr")}`;
      const other = `address:${newId("usr")}`;
      expect(await store.signInAttempts.get(key)).toBeNull();
      expect(await store.signInAttempts.fail(key, { now: NOW, windowMs: HOUR })).toEqual({ failures: 1, lastFailureAt: NOW });
      expect(await store.signInAttempts.fail(key, { now: NOW + 30 * MINUTE, windowMs: HOUR })).toEqual({ failures: 2, lastFailureAt: NOW + 30 * MINUTE });
      expect(await store.signInAttempts.fail(other, { now: NOW, windowMs: HOUR })).toEqual({ failures: 1, lastFailureAt: NOW });
      // The window runs from the last failure, not the first.
      expect(await store.signInAttempts.fail(key, { now: NOW + 89 * MINUTE, windowMs: HOUR })).toEqual({ failures: 3, lastFailureAt: NOW + 89 * MINUTE });
      expect(await store.signInAttempts.get(key)).toEqual({ failures: 3, lastFailureAt: NOW + 89 * MINUTE });
      expect(await store.signInAttempts.fail(key, { now: NOW + 149 * MINUTE, windowMs: HOUR })).toEqual({ failures: 1, lastFailureAt: NOW + 149 * MINUTE });
    });

    test("fail() counts concurrent failures of one key exactly", async () => {
      const store = get();
      const key = `email:${newId("usr")}`;
      const results = await Promise.all(Array.from({ length: 8 }, () => store.signInAttempts.fail(key, { now: NOW, windowMs: HOUR })));
      expect(results.map((r) => r.failures).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });

    test("clear() forgets one key; prune() every key whose last failure is before a time", async () => {
      const store = get();
      const [a, b, c] = [`email:${newId("usr")}`, `email:${newId("usr")}`, `email:${newId("usr")}`];
      await store.signInAttempts.fail(a, { now: NOW, windowMs: HOUR });
      await store.signInAttempts.fail(b, { now: NOW - 2 * DAY, windowMs: HOUR });
      await store.signInAttempts.fail(c, { now: NOW - DAY, windowMs: HOUR });
      await store.signInAttempts.clear(a);
      await store.signInAttempts.clear(a);
      expect(await store.signInAttempts.get(a)).toBeNull();
      expect(await store.signInAttempts.prune(NOW - DAY)).toBeGreaterThanOrEqual(1);
      expect(await store.signInAttempts.get(b)).toBeNull();
      expect(await store.signInAttempts.get(c)).toEqual({ failures: 1, lastFailureAt: NOW - DAY });
    });
  });

  describe("users: keepOwner", () => {
    test("update() with keepOwner refuses to demote the only owner, changing nothing; with two owners it demotes one", async () => {
      const store = get();
      const { org, owner } = await organizationWithOwner(store);
      await expect(store.users.update(owner.id, { role: "admin" }, { keepOwner: true })).rejects.toBeInstanceOf(LastOwnerError);
      expect(await store.users.get(owner.id)).toEqual(owner);
      // Keeping the role, or changing only the password, is no demotion.
      expect(await store.users.update(owner.id, { role: "owner" }, { keepOwner: true })).toEqual(owner);
      expect(await store.users.update(owner.id, { passwordHash: "$argon2id$new" }, { keepOwner: true })).toEqual({ ...owner, passwordHash: "$argon2id$new" });
      // A missing user is null, as without the guard.
      expect(await store.users.update(newId("usr"), { role: "admin" }, { keepOwner: true })).toBeNull();

      const second = userRecord(org.id, { role: "owner" });
      await store.users.create(second);
      expect(await store.users.update(owner.id, { role: "member" }, { keepOwner: true })).toMatchObject({ role: "member" });
      await expect(store.users.update(second.id, { role: "admin" }, { keepOwner: true })).rejects.toBeInstanceOf(LastOwnerError);
    });

    test("whenRole: update() and remove() change nothing, throwing RoleChangedError, once the user has another role; with the same role they write", async () => {
      const store = get();
      const { org } = await organizationWithOwner(store);
      const user = userRecord(org.id, { role: "member" });
      await store.users.create(user);
      // Judged a member, made an owner meanwhile: an admin's demotion or removal of a member must not reach an owner.
      expect(await store.users.update(user.id, { role: "owner" })).toMatchObject({ role: "owner" });
      await expect(store.users.update(user.id, { role: "admin" }, { keepOwner: true, whenRole: "member" })).rejects.toBeInstanceOf(RoleChangedError);
      await expect(store.users.remove(user.id, NOW, { keepOwner: true, whenRole: "member" })).rejects.toBeInstanceOf(RoleChangedError);
      expect(await store.users.get(user.id)).toMatchObject({ role: "owner" });
      expect(await store.users.update(user.id, { role: "admin" }, { keepOwner: true, whenRole: "owner" })).toMatchObject({ role: "admin" });
      expect(await store.users.remove(user.id, NOW, { keepOwner: true, whenRole: "admin" })).toBe(true);
      // A missing user is null (update) or false (remove), as without the guard.
      expect(await store.users.update(newId("usr"), { role: "admin" }, { whenRole: "member" })).toBeNull();
      expect(await store.users.remove(newId("usr"), NOW, { whenRole: "member" })).toBe(false);
    });

    test("the only owner of one organization is not counted with another organization's owners", async () => {
      const store = get();
      const { owner } = await organizationWithOwner(store);
      await organizationWithOwner(store);
      await expect(store.users.update(owner.id, { role: "member" }, { keepOwner: true })).rejects.toBeInstanceOf(LastOwnerError);
      await expect(store.users.remove(owner.id, NOW, { keepOwner: true })).rejects.toBeInstanceOf(LastOwnerError);
    });

    test("remove() with keepOwner refuses the only owner, revoking nothing; removes an owner who has a co-owner", async () => {
      const store = get();
      const { org, owner } = await organizationWithOwner(store);
      const key = apiKeyRecord(owner);
      await store.apiKeys.create(key);
      await expect(store.users.remove(owner.id, NOW, { keepOwner: true })).rejects.toBeInstanceOf(LastOwnerError);
      expect(await store.users.get(owner.id)).toEqual(owner);
      expect(await store.apiKeys.get(key.id)).toEqual(key);

      const member = userRecord(org.id, { role: "member" });
      await store.users.create(member);
      expect(await store.users.remove(member.id, NOW, { keepOwner: true })).toBe(true);

      const second = userRecord(org.id, { role: "owner" });
      await store.users.create(second);
      expect(await store.users.remove(owner.id, NOW, { keepOwner: true })).toBe(true);
      expect(await store.apiKeys.get(key.id)).toEqual({ ...key, revokedAt: NOW });
      expect(await store.users.remove(owner.id, NOW, { keepOwner: true })).toBe(false);
    });

    test("two owners demoting each other at once: exactly one succeeds, an owner remains", async () => {
      const store = get();
      const { org, owner } = await organizationWithOwner(store);
      const second = userRecord(org.id, { role: "owner" });
      await store.users.create(second);
      const results = await Promise.allSettled([
        store.users.update(owner.id, { role: "admin" }, { keepOwner: true }),
        store.users.update(second.id, { role: "admin" }, { keepOwner: true }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      const owners = (await store.users.list(org.id)).filter((u) => u.role === "owner");
      expect(owners).toHaveLength(1);
    });
  });
}
