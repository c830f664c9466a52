/** The store conformance suite's part for organizations, users and API keys. */
import { describe, expect, test } from "bun:test";
import { DuplicateError, type Store } from "../../../core/store/ports.ts";
import { newId } from "../../../core/base/ids.ts";
import { DAY, HOUR } from "../../../core/base/time.ts";
import { apiKeyRecord, certificateRecord, channelRecord, hex, NOW, organizationRecord, userRecord } from "./factories.ts";
import { addCertificate, addChannel, newOrganization, sortedIds } from "./_helpers.ts";
import { watchRecord } from "./watches.ts";

export function describeAccounts(get: () => Store) {
  describe("organizations, users and API keys", () => {
    test("organizations.create() stores an organization that get() and list() return", async () => {
      const store = get();
      const org = organizationRecord({ plan: "free", limits: { certificates: 3, channels: 2, requestsPerMinute: 10, watches: 4 } });
      await store.organizations.create(org);
      expect(await store.organizations.get(org.id)).toEqual(org);
      expect((await store.organizations.list()).filter((o) => o.id === org.id)).toEqual([org]);
      expect(await store.organizations.get(newId("org"))).toBeNull();
    });

    test("organizations.update() changes the name, plan and limits it is given, and only those", async () => {
      const store = get();
      const org = organizationRecord({ name: "Before", plan: "free", limits: { certificates: 25, channels: 5, requestsPerMinute: 60, watches: 1 } });
      await store.organizations.create(org);
      const renamed = await store.organizations.update(org.id, { name: "After" });
      expect(renamed).toEqual({ ...org, name: "After" });
      const limits = { certificates: 500, channels: 50, requestsPerMinute: 600, watches: 10 };
      const upgraded = await store.organizations.update(org.id, { plan: "pro", limits });
      expect(upgraded).toEqual({ ...org, name: "After", plan: "pro", limits });
      expect(await store.organizations.get(org.id)).toEqual(upgraded);
      expect(await store.organizations.update(newId("org"), { name: "Nobody" })).toBeNull();
    });

    test("organizations.usage() counts certificates, channels and watches per mode, the organization's only", async () => {
      const store = get();
      const { org, live, test: testScope } = await newOrganization(store);
      const other = await newOrganization(store);
      expect(await store.organizations.usage(org.id)).toEqual({
        live: { certificates: 0, channels: 0, watches: 0 },
        test: { certificates: 0, channels: 0, watches: 0 },
      });
      for (const scope of [live, live, testScope, other.live]) await addCertificate(store, certificateRecord(scope));
      for (const scope of [live, testScope, testScope, other.live]) await addChannel(store, channelRecord(scope));
      for (const scope of [testScope, other.test]) expect(await store.watches.insert(watchRecord(scope), { limit: 10 })).toBe("created");
      expect(await store.organizations.usage(org.id)).toEqual({
        live: { certificates: 2, channels: 1, watches: 0 },
        test: { certificates: 1, channels: 2, watches: 1 },
      });
    });

    test("users: create, get, findByEmail, list by organization, update", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const other = await newOrganization(store);
      const owner = userRecord(org.id, { role: "owner" });
      const member = userRecord(org.id, { role: "member", passwordHash: null, createdAt: NOW - DAY });
      const stranger = userRecord(other.org.id);
      for (const user of [owner, member, stranger]) await store.users.create(user);

      expect(await store.users.get(owner.id)).toEqual(owner);
      expect(await store.users.get(member.id)).toEqual(member);
      expect(await store.users.findByEmail(member.email)).toEqual(member);
      expect(await store.users.findByEmail("nobody@example.com")).toBeNull();
      expect(sortedIds(await store.users.list(org.id))).toEqual(sortedIds([owner, member]));

      const promoted = await store.users.update(member.id, { role: "admin" });
      expect(promoted).toEqual({ ...member, role: "admin" });
      const withPassword = await store.users.update(member.id, { passwordHash: "$argon2id$new" });
      expect(withPassword).toEqual({ ...member, role: "admin", passwordHash: "$argon2id$new" });
      expect(await store.users.get(member.id)).toEqual(withPassword);
      expect(await store.users.update(newId("usr"), { role: "owner" })).toBeNull();
    });

    test("users.create() throws DuplicateError when the email is taken, and stores nothing", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const first = userRecord(org.id);
      await store.users.create(first);
      const second = userRecord(org.id, { email: first.email });
      await expect(store.users.create(second)).rejects.toBeInstanceOf(DuplicateError);
      expect(await store.users.get(second.id)).toBeNull();
      expect(await store.users.findByEmail(first.email)).toEqual(first);
    });

    test("apiKeys: create, get, list newest first per organization", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const other = await newOrganization(store);
      const user = userRecord(org.id);
      const stranger = userRecord(other.org.id);
      await store.users.create(user);
      await store.users.create(stranger);
      const oldest = apiKeyRecord(user, { createdAt: NOW - 3 * DAY });
      const newest = apiKeyRecord(user, { createdAt: NOW - DAY, mode: "test" });
      const middle = apiKeyRecord(user, { createdAt: NOW - 2 * DAY, lastUsedAt: NOW - DAY, revokedAt: NOW });
      const foreign = apiKeyRecord(stranger);
      for (const key of [oldest, newest, middle, foreign]) await store.apiKeys.create(key);

      expect(await store.apiKeys.get(middle.id)).toEqual(middle);
      expect(await store.apiKeys.get(newId("key"))).toBeNull();
      expect(await store.apiKeys.list(org.id)).toEqual([newest, middle, oldest]);
    });

    test("apiKeys.create() throws DuplicateError when the hash is taken", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const user = userRecord(org.id);
      await store.users.create(user);
      const key = apiKeyRecord(user);
      await store.apiKeys.create(key);
      const copy = apiKeyRecord(user, { hash: key.hash });
      await expect(store.apiKeys.create(copy)).rejects.toBeInstanceOf(DuplicateError);
      expect(await store.apiKeys.get(copy.id)).toBeNull();
    });

    test("findByHash() returns the key with its user and organization; null for an unknown hash", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const user = userRecord(org.id, { role: "member" });
      await store.users.create(user);
      const key = apiKeyRecord(user, { mode: "test" });
      await store.apiKeys.create(key);
      expect(await store.apiKeys.findByHash(key.hash)).toEqual({ key, user, organization: org });
      expect(await store.apiKeys.findByHash(hex(32))).toBeNull();
    });

    test("users.remove() revokes the user's keys at `at` and findByHash() then has no user", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const leaving = userRecord(org.id);
      const staying = userRecord(org.id);
      await store.users.create(leaving);
      await store.users.create(staying);
      const active = apiKeyRecord(leaving);
      const revokedEarlier = apiKeyRecord(leaving, { revokedAt: NOW - DAY });
      const colleagues = apiKeyRecord(staying);
      for (const key of [active, revokedEarlier, colleagues]) await store.apiKeys.create(key);

      expect(await store.users.remove(leaving.id, NOW)).toBe(true);
      expect(await store.users.get(leaving.id)).toBeNull();
      expect(await store.users.findByEmail(leaving.email)).toBeNull();
      expect(await store.apiKeys.findByHash(active.hash)).toEqual({ key: { ...active, revokedAt: NOW }, user: null, organization: org });
      expect(await store.apiKeys.get(revokedEarlier.id)).toEqual(revokedEarlier);
      expect(await store.apiKeys.get(colleagues.id)).toEqual(colleagues);
      expect(await store.users.remove(leaving.id, NOW)).toBe(false);
    });

    test("revoke() sets revokedAt once: revoking again keeps the first time", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const user = userRecord(org.id);
      await store.users.create(user);
      const key = apiKeyRecord(user);
      await store.apiKeys.create(key);
      expect(await store.apiKeys.revoke(key.id, NOW)).toEqual({ ...key, revokedAt: NOW });
      expect(await store.apiKeys.revoke(key.id, NOW + HOUR)).toEqual({ ...key, revokedAt: NOW });
      expect((await store.apiKeys.findByHash(key.hash))?.key.revokedAt).toBe(NOW);
      expect(await store.apiKeys.revoke(newId("key"), NOW)).toBeNull();
    });

    test("touch() keeps the latest lastUsedAt, whatever order uses arrive in", async () => {
      const store = get();
      const { org } = await newOrganization(store);
      const user = userRecord(org.id);
      await store.users.create(user);
      const a = apiKeyRecord(user);
      const b = apiKeyRecord(user);
      await store.apiKeys.create(a);
      await store.apiKeys.create(b);
      await store.apiKeys.touch([
        { id: a.id, at: NOW + 200 },
        { id: a.id, at: NOW + 150 },
        { id: b.id, at: NOW + 10 },
        { id: newId("key"), at: NOW },
      ]);
      expect((await store.apiKeys.get(a.id))?.lastUsedAt).toBe(NOW + 200);
      expect((await store.apiKeys.get(b.id))?.lastUsedAt).toBe(NOW + 10);
      await store.apiKeys.touch([{ id: a.id, at: NOW + 100 }]);
      expect((await store.apiKeys.get(a.id))?.lastUsedAt).toBe(NOW + 200);
      await store.apiKeys.touch([{ id: b.id, at: NOW + 300 }]);
      expect(await store.apiKeys.get(b.id)).toEqual({ ...b, lastUsedAt: NOW + 300 });
      await store.apiKeys.touch([]);
    });
  });
}
