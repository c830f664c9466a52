/**
 * Rules of the store that the conformance suite did not hold: run
 * against the memory store and the SQL store over libSQL, as the conformance suite is.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import type { ImportItemOutcome, Store } from "../core/store/ports.ts";
import type { ImportRecord, Scope } from "../core/base/records.ts";
import { newId } from "../core/base/ids.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import { certificateRecord, channelRecord, deliveryRecord, eventRecord, NOW } from "./support/store_conformance/mod.ts";
import { addCertificate, addChannel, deliveriesOf, newOrganization, PARKED, parkLeftovers } from "./support/store_conformance/_helpers.ts";

const DUP = { code: "duplicate_domain", message: "taken" };
const FULL = { code: "certificate_limit_reached", message: "full" };

function importRecord(scope: Scope, overrides: Partial<ImportRecord> = {}): ImportRecord {
  return { ...scope, id: newId("imp"), certificateLimit: 100, status: "running", total: 2, processed: 0, created: 0, failed: 0, createdAt: NOW, finishedAt: null, ...overrides };
}

function create(scope: Scope, index: number): ImportItemOutcome {
  const domain = `${newId("imp").slice(4).toLowerCase()}.example.com`;
  return { index, kind: "create", record: certificateRecord(scope, { domain }), events: [], duplicate: DUP, limitReached: FULL };
}

function describeRules(name: string, open: () => Promise<Store>) {
  describe(`${name} store`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    test("saveCheck() of unchanged re-checks saved together: a stale version loses and writes nothing, the others win", async () => {
      const { live } = await newOrganization(store);
      const a = await addCertificate(store, certificateRecord(live));
      const b = await addCertificate(store, certificateRecord(live));
      const c = await addCertificate(store, certificateRecord(live));
      // a is saved once: its version is now 1, and a save from version 0 is stale.
      expect(await store.certificates.saveCheck({ ...a, lastCheckedAt: NOW, failureCount: 1 }, [], { detailsChanged: false })).toBe(true);
      const saves = await Promise.all([
        store.certificates.saveCheck({ ...a, lastCheckedAt: NOW + 1, failureCount: 9 }, [], { detailsChanged: false }),
        store.certificates.saveCheck({ ...b, lastCheckedAt: NOW + 1, failureCount: 2 }, [], { detailsChanged: false }),
        store.certificates.saveCheck({ ...c, lastCheckedAt: NOW + 1, failureCount: 3 }, [], { detailsChanged: false }),
      ]);
      expect(saves).toEqual([false, true, true]);
      expect(await store.certificates.get(live, a.id)).toMatchObject({ version: 1, failureCount: 1, lastCheckedAt: NOW });
      expect(await store.certificates.get(live, b.id)).toMatchObject({ version: 1, failureCount: 2 });
    });

    test("saveCheck() of re-checks saved together that now fail moves their status for list() filters and summarize()", async () => {
      const { live } = await newOrganization(store);
      const a = await addCertificate(store, certificateRecord(live));
      const b = await addCertificate(store, certificateRecord(live));
      const ok = await store.certificates.list(live, { limit: 10, statuses: ["unreachable"], now: NOW });
      expect(ok).toEqual([]);
      const failed = (r: typeof a) => ({ ...r, lastCheckedAt: NOW, failure: "timeout" as const, failureCount: 1, health: "unreachable" as const });
      expect(await Promise.all([a, b].map((r) => store.certificates.saveCheck(failed(r), [], { detailsChanged: false })))).toEqual([true, true]);
      const unreachable = await store.certificates.list(live, { limit: 10, statuses: ["unreachable"], now: NOW + MINUTE });
      expect(unreachable.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
    });

    test("saveCheck() of re-checks saved together ends their leases: capNextChecks() then brings their next checks forward", async () => {
      const { live } = await newOrganization(store);
      await parkLeftovers(store);
      const at = NOW - 10 * DAY;
      const a = await addCertificate(store, certificateRecord(live, { nextCheckAt: at }));
      const b = await addCertificate(store, certificateRecord(live, { nextCheckAt: at }));
      const leased = await store.certificates.claimDue({ owner: "p", now: at, leaseUntil: at + MINUTE, limit: 100 });
      expect(leased.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
      const saved = leased.map((r) => ({ ...r, lastCheckedAt: at, nextCheckAt: at + 5 * DAY }));
      expect(await Promise.all(saved.map((r) => store.certificates.saveCheck(r, [], { detailsChanged: false })))).toEqual([true, true]);
      await store.certificates.capNextChecks(HOUR);
      expect((await store.certificates.get(live, a.id))?.nextCheckAt).toBe(at + HOUR);
      expect((await store.certificates.get(live, b.id))?.nextCheckAt).toBe(at + HOUR);
    });

    test("claimDue() with a limit below what is due takes the longest overdue first", async () => {
      const { live } = await newOrganization(store);
      await parkLeftovers(store);
      const at = NOW - 20 * DAY;
      const records = [];
      for (let i = 0; i < 4; i++) records.push(await addCertificate(store, certificateRecord(live, { nextCheckAt: at - i * HOUR })));
      const first = await store.certificates.claimDue({ owner: "p", now: at, leaseUntil: PARKED, limit: 2 });
      expect(first.map((r) => r.id).sort()).toEqual([records[3]!.id, records[2]!.id].sort());
    });

    test("watches.claimDue() with a limit below what is due takes the longest overdue first", async () => {
      const { live } = await newOrganization(store);
      const at = NOW - 30 * DAY;
      // Other tests' watches are leased far away first.
      await store.watches.claimDue({ owner: "park", now: PARKED, leaseUntil: PARKED + 1, limit: 100_000 });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = newId("wch");
        ids.push(id);
        const watch = {
          id, organizationId: live.organizationId, mode: live.mode, domain: `w${i}-${id.slice(4).toLowerCase()}.example.com`, includeSubdomains: false,
          autoMonitor: false, allowedIssuers: [], lastPolledAt: null, lastError: null, issuancesSeen: 0, cursor: null, baselineDone: false,
          pendingNames: [], nextPollAt: at - i * HOUR, createdAt: NOW, updatedAt: NOW,
        };
        expect(await store.watches.insert(watch as never, { limit: 100 })).toBe("created");
      }
      const claimed = await store.watches.claimDue({ owner: "p", now: at, leaseUntil: PARKED, limit: 1 });
      expect(claimed.map((w) => w.id)).toEqual([ids[2]!]);
    });

    test("hasLaterOfCertificate() does not count the event it is asked about, though it is of the asked type", async () => {
      const { live } = await newOrganization(store);
      const renewed = eventRecord(live, { type: "certificate.renewed", certificateId: "cert_self", data: {} });
      await store.events.insert(renewed, []);
      const ask = () => store.events.hasLaterOfCertificate(live, { afterId: renewed.id, certificateId: "cert_self", types: ["certificate.renewed"] });
      expect(await ask()).toBe(false);
      await store.events.insert(eventRecord(live, { type: "certificate.renewed", certificateId: "cert_self", data: {} }), []);
      expect(await ask()).toBe(true);
    });

    test("completeDelivery() after the delivery was cancelled (its certificate deleted) changes nothing and answers false", async () => {
      const { live } = await newOrganization(store);
      await parkLeftovers(store);
      const cert = await addCertificate(store, certificateRecord(live));
      const channel = await addChannel(store, channelRecord(live));
      const event = eventRecord(live, { certificateId: cert.id, createdAt: NOW - 50 * DAY });
      await store.events.insert(event, [deliveryRecord(event.id, channel.id, { nextAttemptAt: NOW - 50 * DAY })]);
      const jobs = await store.events.claimDueDeliveries({ owner: "d", now: NOW - 50 * DAY, leaseUntil: NOW - 49 * DAY, limit: 100 });
      expect(jobs.map((j) => j.delivery.eventId)).toContain(event.id);
      expect(await store.certificates.remove(live, cert.id, NOW - 50 * DAY + 1)).toBe(true);
      const [cancelled] = await deliveriesOf(store, live, event.id);
      expect(cancelled?.status).toBe("failed");
      const done = await store.events.completeDelivery("d", {
        eventId: event.id, channelId: channel.id, status: "delivered", attempts: 1, nextAttemptAt: NOW - 50 * DAY + 2, lastError: null, updatedAt: NOW - 50 * DAY + 2,
      });
      expect(done).toBe(false);
      expect(await deliveriesOf(store, live, event.id)).toEqual([cancelled!]);
    });

    test("insert() with the events of a muted certificate (data.muted) stores them with no delivery; unmuted ones get one", async () => {
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const cert = certificateRecord(live, { mutedUntil: NOW + DAY });
      const muted = eventRecord(live, { certificateId: cert.id, type: "certificate.expiring", data: { muted: true } });
      const loud = eventRecord(live, { certificateId: cert.id, type: "certificate.expiring", data: {} });
      await addCertificate(store, cert, [muted, loud]);
      expect((await store.events.get(live, muted.id))?.deliveries).toEqual([]);
      expect((await store.events.get(live, loud.id))?.deliveries.map((d) => d.channelId)).toEqual([channel.id]);
    });

    test("imports.settle() judges the organization's certificate limit as it is now, and counts only the import's mode", async () => {
      const { live, test: testScope } = await newOrganization(store);
      // The other mode's certificates do not count against this mode's limit.
      await addCertificate(store, certificateRecord(testScope));
      await addCertificate(store, certificateRecord(testScope));
      const org = await store.organizations.get(live.organizationId);
      await store.organizations.update(live.organizationId, { limits: { ...org!.limits, certificates: 2 } });
      const record = importRecord(live, { certificateLimit: 100, total: 3 });
      expect(await store.imports.create(record, ["{}", "{}", "{}"], 1000)).toBe(true);
      const claimed = await store.imports.claim({ owner: "A", now: NOW, leaseUntil: NOW + HOUR, limit: 1000 });
      for (const other of claimed) if (other.id !== record.id) await store.imports.renew(other.id, "A", PARKED);
      const outcomes = [create(live, 0), create(live, 1), create(live, 2)];
      const created = await store.imports.settle(record.id, "A", outcomes, NOW + 1);
      expect(created).toEqual([outcomes[0]!.kind === "create" ? outcomes[0]!.record.id : "", outcomes[1]!.kind === "create" ? outcomes[1]!.record.id : ""]);
      const results = await store.imports.results(record.id);
      expect(results.map((r) => r.error?.code ?? null)).toEqual([null, null, FULL.code]);
    });

    test("imports.nextClaimAt() with `latest` is now (0) for an import leased past it (a clock since set back)", async () => {
      const { live } = await newOrganization(store);
      const record = importRecord(live);
      expect(await store.imports.create(record, ["{}", "{}"], 1000)).toBe(true);
      // Every running import leased far away, this one too.
      await store.imports.claim({ owner: "far", now: PARKED, leaseUntil: PARKED + 10, limit: 100_000 });
      expect(await store.imports.nextClaimAt({ latest: NOW })).toBe(0);
      expect(await store.imports.nextClaimAt()).toBe(PARKED + 10);
    });

    test("updateSettings() with only a new alert policy makes the certificate due at once", async () => {
      const { live } = await newOrganization(store);
      const cert = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW + DAY }));
      const updated = await store.certificates.updateSettings(live, cert.id, { alertPolicy: "renewal", updatedAt: NOW });
      expect(updated).toMatchObject({ alertPolicy: "renewal", nextCheckAt: NOW });
      expect((await store.certificates.get(live, cert.id))?.nextCheckAt).toBe(NOW);
    });

    test("events.list() from a cursor event since pruned goes on from its createdAt, that instant included", async () => {
      const { live } = await newOrganization(store);
      const T = NOW - 3 * DAY;
      const events = [T - 1, T, T + 1].map((createdAt) => eventRecord(live, { createdAt }));
      for (const event of events) await store.events.insert(event, []);
      const page = await store.events.list(live, { limit: 10, beforeId: newId("evt"), beforeCreatedAt: T });
      expect(page.map((e) => e.id)).toEqual([events[1]!.id, events[0]!.id]);
    });

    test("organizations.list() and users.list() are oldest first, not by id", async () => {
      const { organizationRecord, userRecord } = await import("./support/store_conformance/mod.ts");
      const later = organizationRecord({ id: "org_aaaa" + newId("req").slice(4), createdAt: NOW - DAY });
      const earlier = organizationRecord({ id: "org_zzzz" + newId("req").slice(4), createdAt: NOW - 2 * DAY });
      await store.organizations.create(later);
      await store.organizations.create(earlier);
      const listed = (await store.organizations.list()).map((o) => o.id).filter((id) => id === later.id || id === earlier.id);
      expect(listed).toEqual([earlier.id, later.id]);
      const second = userRecord(later.id, { id: "usr_aaaa" + newId("req").slice(4), createdAt: NOW - HOUR });
      const first = userRecord(later.id, { id: "usr_zzzz" + newId("req").slice(4), createdAt: NOW - 2 * HOUR });
      second.email = `${second.id.toLowerCase()}@example.com`;
      first.email = `${first.id.toLowerCase()}@example.com`;
      await store.users.create(second);
      await store.users.create(first);
      expect((await store.users.list(later.id)).map((u) => u.id)).toEqual([first.id, second.id]);
    });

    test("signInAttempts.fail() reported late by another process keeps the latest failure time", async () => {
      const key = `sign-in:${newId("req")}`;
      await store.signInAttempts.fail(key, { now: NOW, windowMs: HOUR });
      expect(await store.signInAttempts.fail(key, { now: NOW - MINUTE, windowMs: HOUR })).toEqual({ failures: 2, lastFailureAt: NOW });
      expect(await store.signInAttempts.get(key)).toEqual({ failures: 2, lastFailureAt: NOW });
    });

    test("events.get() and list() give an event's deliveries ordered by channel id, whatever order they were written in", async () => {
      const { live } = await newOrganization(store);
      const channels = [];
      for (let i = 0; i < 3; i++) channels.push(await addChannel(store, channelRecord(live)));
      const sorted = channels.map((c) => c.id).sort();
      const event = eventRecord(live);
      await store.events.insert(event, [...sorted].reverse().map((channelId) => deliveryRecord(event.id, channelId)));
      expect((await store.events.get(live, event.id))?.deliveries.map((d) => d.channelId)).toEqual(sorted);
      expect((await store.events.list(live, { limit: 1 }))[0]?.deliveries.map((d) => d.channelId)).toEqual(sorted);
    });

    test("events.prune() keeps an event created exactly at `before`", async () => {
      const { live } = await newOrganization(store);
      const at = NOW - 400 * DAY;
      const older = eventRecord(live, { createdAt: at - 1 });
      const exact = eventRecord(live, { createdAt: at });
      await store.events.insert(older, []);
      await store.events.insert(exact, []);
      await store.events.prune({ before: at, limit: 1000 });
      expect(await store.events.get(live, older.id)).toBeNull();
      expect(await store.events.get(live, exact.id)).not.toBeNull();
    });

    test("rateLimits.prune() keeps a window that starts exactly at `before`", async () => {
      const at = NOW - 500 * DAY;
      const [old, exact] = [newId("key"), newId("key")];
      await store.rateLimits.hit(old, at - 1, MINUTE, 0);
      await store.rateLimits.hit(exact, at, MINUTE, 0);
      expect(await store.rateLimits.prune(at)).toBeGreaterThanOrEqual(1);
      // The kept window goes on counting; the pruned one starts again.
      expect(await store.rateLimits.hit(exact, at + 1, MINUTE, 0)).toEqual({ count: 2, windowStart: at });
      expect(await store.rateLimits.hit(old, at, MINUTE, 0)).toEqual({ count: 1, windowStart: at });
    });

    test("pullForwardChecks() moves only certificates checked after `checkedAfter`, not one checked exactly then", async () => {
      const { live } = await newOrganization(store);
      const checkedAfter = NOW - 600 * DAY;
      const exact = await addCertificate(store, certificateRecord(live, { lastCheckedAt: checkedAfter, nextCheckAt: PARKED - 5 }));
      const later = await addCertificate(store, certificateRecord(live, { lastCheckedAt: checkedAfter + 1, nextCheckAt: PARKED - 5 }));
      await store.certificates.pullForwardChecks({ now: NOW, latest: PARKED - 10, checkedAfter });
      expect((await store.certificates.get(live, exact.id))?.nextCheckAt).toBe(PARKED - 5);
      expect((await store.certificates.get(live, later.id))?.nextCheckAt).toBe(NOW);
    });

    test("watches.insert() of a domain already watched in a full scope is a duplicate, not limit_reached", async () => {
      const { live } = await newOrganization(store);
      const id = newId("wch");
      const watch = {
        id, organizationId: live.organizationId, mode: live.mode, domain: `dup-${id.slice(4).toLowerCase()}.example.com`, includeSubdomains: false,
        autoMonitor: false, allowedIssuers: [], lastPolledAt: null, lastError: null, issuancesSeen: 0, cursor: null, baselineDone: false,
        pendingNames: [], nextPollAt: PARKED, createdAt: NOW, updatedAt: NOW,
      };
      expect(await store.watches.insert(watch as never, { limit: 1 })).toBe("created");
      expect(await store.watches.insert({ ...watch, id: newId("wch") } as never, { limit: 1 })).toBe("duplicate");
    });

    test("renewalInfo.put() replaces what was kept for the certID", async () => {
      const certId = newId("req");
      const first = { suggestedWindow: { start: NOW, end: NOW + DAY }, retryAfter: NOW + HOUR, fetchedAt: NOW } as never;
      const second = { suggestedWindow: { start: NOW + DAY, end: NOW + 2 * DAY }, retryAfter: NOW + 2 * HOUR, fetchedAt: NOW + 1 } as never;
      await store.renewalInfo.put(certId, first, NOW + 90 * DAY, NOW);
      await store.renewalInfo.put(certId, second, NOW + 90 * DAY, NOW + 1);
      expect(await store.renewalInfo.get(certId)).toEqual(second);
    });
  });
}

describeRules("memory", async () => createMemoryStore());
describeRules("libSQL :memory:", () => openLibsqlStore({ url: ":memory:" }));
