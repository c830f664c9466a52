/** The store conformance suite's part for changeToken(): it moves with every kind of write, and only then. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import type { Scope } from "../../../core/base/records.ts";
import { HOUR, MINUTE } from "../../../core/base/time.ts";
import {
  apiKeyRecord,
  certificateRecord,
  channelRecord,
  deliveryRecord,
  eventRecord,
  NOW,
  organizationRecord,
  sessionRecord,
  userRecord,
} from "./factories.ts";
import { newOrganization, PARKED } from "./_helpers.ts";

export function describeChangeToken(get: () => Store, offered: boolean) {
  describe("changeToken", () => {
    if (!offered) {
      test("is not offered: the store cannot tell what others wrote", () => {
        expect(get().changeToken).toBeUndefined();
      });
      return;
    }

    test("changes after every kind of write", async () => {
      const store = get();
      expect(store.changeToken).toBeFunction();
      const token = () => store.changeToken!();
      const org = organizationRecord();
      const scope: Scope = { organizationId: org.id, mode: "live" };
      const user = userRecord(org.id);
      const key = apiKeyRecord(user);
      const record = certificateRecord(scope, { nextCheckAt: NOW - 1 });
      const channel = channelRecord(scope);
      const event = eventRecord(scope);
      const session = sessionRecord(user);
      const writes: Array<[string, () => Promise<unknown>]> = [
        ["organizations.create", () => store.organizations.create(org)],
        ["users.create", () => store.users.create(user)],
        ["users.update", () => store.users.update(user.id, { role: "member" })],
        ["apiKeys.create", () => store.apiKeys.create(key)],
        ["apiKeys.touch", () => store.apiKeys.touch([{ id: key.id, at: NOW }])],
        ["apiKeys.revoke", () => store.apiKeys.revoke(key.id, NOW)],
        ["users.remove", () => store.users.remove(user.id, NOW)],
        ["channels.insert", () => store.channels.insert(channel, { limit: 10 })],
        ["channels.update", () => store.channels.update(scope, channel.id, { name: "New", updatedAt: NOW })],
        ["certificates.insert", () => store.certificates.insert(record, { limit: 10, events: [eventRecord(scope)] })],
        ["certificates.updateSettings", () => store.certificates.updateSettings(scope, record.id, { name: "x", updatedAt: NOW })],
        ["certificates.claimDue", () => store.certificates.claimDue({ owner: "t", now: PARKED - 1, leaseUntil: PARKED, limit: 1000 })],
        ["certificates.saveCheck", () => store.certificates.saveCheck({ ...record, version: 1, lastCheckedAt: NOW }, [])],
        ["events.insert", () => store.events.insert(event, [deliveryRecord(event.id, channel.id)])],
        ["events.claimDueDeliveries", () => store.events.claimDueDeliveries({ owner: "t", now: PARKED - 1, leaseUntil: PARKED, limit: 1000 })],
        ["events.completeDelivery", () => store.events.completeDelivery("t", { ...deliveryRecord(event.id, channel.id), status: "delivered" })],
        ["channels.disable", () => store.channels.disable(channel.id, NOW)],
        ["channels.remove", () => store.channels.remove(scope, channel.id, NOW)],
        ["certificates.remove", () => store.certificates.remove(scope, record.id, NOW)],
        ["rateLimits.hit", () => store.rateLimits.hit(key.id, NOW, MINUTE, 10 * MINUTE)],
        ["sessions.create", () => store.sessions.create(session)],
        ["sessions.touch", () => store.sessions.touch(session.id, { lastSeenAt: NOW + 1, expiresAt: NOW + HOUR })],
        ["sessions.remove", () => store.sessions.remove(session.id)],
        ["signInAttempts.fail", () => store.signInAttempts.fail(`email:${key.id}`, { now: NOW, windowMs: MINUTE })],
        ["signInAttempts.clear", () => store.signInAttempts.clear(`email:${key.id}`)],
      ];
      // A check's save and lease may be told to listeners instead, naming the certificate they changed.
      const told: string[] = [];
      store.onCertificatesWritten?.((certificates) => told.push(...certificates.map((c) => `${c.organizationId} ${c.mode} ${c.id}`)));
      const mayTell = new Set(["certificates.claimDue", "certificates.saveCheck"]);
      for (const [name, write] of writes) {
        const before = token();
        told.length = 0;
        const result = await write();
        // Each write must have done something, or a token that never changes could pass.
        expect({ name, result: result === false || result === null ? result : "done" }).toEqual({ name, result: "done" });
        const seen = token() !== before || (mayTell.has(name) && told.includes(`${scope.organizationId} live ${record.id}`));
        expect({ name, changed: seen }).toEqual({ name, changed: true });
        // Only those two are ever told.
        if (!mayTell.has(name)) expect({ name, told }).toEqual({ name, told: [] });
      }
    });

    test("stays the same while nothing is written", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const before = store.changeToken!();
      await store.certificates.list(live, { limit: 10, now: NOW });
      await store.organizations.get(live.organizationId);
      expect(store.changeToken!()).toBe(before);
    });
  });
}
