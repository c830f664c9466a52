/** The store conformance suite's part for Certificate Transparency watches and the revocation cache. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import type { RevocationAnswer, Scope, WatchRecord } from "../../../core/base/records.ts";
import { newId } from "../../../core/base/ids.ts";
import { DAY, HOUR } from "../../../core/base/time.ts";
import { channelRecord, eventRecord, hex, NOW } from "./factories.ts";
import { addChannel, deliveriesOf, ids, newOrganization } from "./_helpers.ts";

export function watchRecord(scope: Scope, overrides: Partial<WatchRecord> = {}): WatchRecord {
  return {
    id: newId("wch"),
    ...scope,
    domain: `${hex(5)}.example.com`,
    includeSubdomains: true,
    autoMonitor: false,
    allowedIssuers: [],
    lastPolledAt: null,
    lastError: null,
    issuancesSeen: 0,
    cursor: null,
    baselineDone: false,
    pendingNames: [],
    nextPollAt: NOW,
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  };
}

const FAR = 8e15; // after anything other tests lease, before the parking time of _helpers.ts

export function describeWatches(get: () => Store) {
  describe("watches", () => {
    test("insert() stores a watch that get() and list() return, newest first, per scope", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const older = watchRecord(live, { createdAt: NOW - DAY, allowedIssuers: ["Let's Encrypt", "DigiCert Inc"] });
      const newer = watchRecord(live);
      const hidden = watchRecord(testScope);
      for (const w of [older, newer, hidden]) expect(await store.watches.insert(w, { limit: 10 })).toBe("created");
      expect(await store.watches.get(live, older.id)).toEqual(older);
      expect(await store.watches.get(testScope, older.id)).toBeNull();
      expect(ids(await store.watches.list(live, { limit: 10 }))).toEqual([newer.id, older.id]);
      expect(ids(await store.watches.list(live, { limit: 1 }))).toEqual([newer.id]);
      expect(ids(await store.watches.list(live, { limit: 10, before: { createdAt: newer.createdAt, id: newer.id } }))).toEqual([older.id]);
    });

    test("insert() refuses the same domain in a scope (duplicate) and a full scope (limit_reached)", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const first = watchRecord(live);
      expect(await store.watches.insert(first, { limit: 2 })).toBe("created");
      expect(await store.watches.insert(watchRecord(live, { domain: first.domain }), { limit: 2 })).toBe("duplicate");
      expect(await store.watches.insert(watchRecord(testScope, { domain: first.domain }), { limit: 2 })).toBe("created");
      expect(await store.watches.insert(watchRecord(live), { limit: 2 })).toBe("created");
      expect(await store.watches.insert(watchRecord(live), { limit: 2 })).toBe("limit_reached");
    });

    test("pullForwardPolls() makes due now every next poll later than `latest` after a last poll later than `polledAfter`, and leaves the others", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      // Far beyond any other test's watches: polled on a clock since set back.
      const polledAfter = NOW + 50 * DAY;
      const latest = NOW + 100 * DAY;
      const far = watchRecord(live, { lastPolledAt: NOW + 60 * DAY, nextPollAt: NOW + 200 * DAY });
      const atLatest = watchRecord(live, { lastPolledAt: NOW + 60 * DAY, nextPollAt: latest });
      // Never polled, created (and so first due, or leased) on a clock since set back: moved too.
      const created = watchRecord(live, { lastPolledAt: null, createdAt: NOW + 60 * DAY, nextPollAt: NOW + 200 * DAY });
      // As far ahead after a last poll, or a creation, in the past (a long Retry-After on a good clock): left.
      const waiting = watchRecord(live, { lastPolledAt: NOW, nextPollAt: NOW + 200 * DAY });
      const fresh = watchRecord(live, { lastPolledAt: null, createdAt: NOW, nextPollAt: NOW + 200 * DAY });
      const all = [far, atLatest, created, waiting, fresh];
      for (const watch of all) expect(await store.watches.insert(watch, { limit: 100 })).toBe("created");
      expect(await store.watches.pullForwardPolls({ now: NOW, latest, polledAfter, owner: "proc_self" })).toBe(2);
      const nextOf = async (watch: WatchRecord) => (await store.watches.get(live, watch.id))?.nextPollAt;
      expect(await Promise.all(all.map(nextOf))).toEqual([NOW, latest, NOW, NOW + 200 * DAY, NOW + 200 * DAY]);
      expect(await store.watches.pullForwardPolls({ now: NOW, latest, polledAfter, owner: "proc_self" })).toBe(0);
      for (const watch of all) expect(await store.watches.remove(live, watch.id)).toBe(true);
    });

    test("pullForwardPolls() leaves the watches the caller is polling (its save plans the next), not another owner's", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const polledAfter = NOW + 50 * DAY;
      const latest = NOW + 100 * DAY;
      const mine = watchRecord(live, { lastPolledAt: NOW + 60 * DAY, nextPollAt: NOW + 59 * DAY });
      const theirs = watchRecord(live, { lastPolledAt: NOW + 60 * DAY, nextPollAt: NOW + 59.5 * DAY });
      for (const watch of [mine, theirs]) expect(await store.watches.insert(watch, { limit: 100 })).toBe("created");
      // Each leased on the clock ahead by its poller: its next poll becomes the lease's end, beyond `latest`.
      const leaseUntil = NOW + 200 * DAY;
      const ids = (claimed: WatchRecord[]) => claimed.map((w) => w.id).filter((id) => id === mine.id || id === theirs.id);
      expect(ids(await store.watches.claimDue({ owner: "proc_self", now: NOW + 59 * DAY, leaseUntil, limit: 1000 }))).toEqual([mine.id]);
      expect(ids(await store.watches.claimDue({ owner: "proc_other", now: NOW + 59.5 * DAY, leaseUntil, limit: 1000 }))).toEqual([theirs.id]);
      expect(await store.watches.pullForwardPolls({ now: NOW, latest, polledAfter, owner: "proc_self" })).toBe(1);
      const nextOf = async (watch: WatchRecord) => (await store.watches.get(live, watch.id))?.nextPollAt;
      expect([await nextOf(mine), await nextOf(theirs)]).toEqual([leaseUntil, NOW]);
      for (const watch of [mine, theirs]) expect(await store.watches.remove(live, watch.id)).toBe(true);
    });

    test("update() changes only the given settings; remove() deletes within the scope only", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const watch = watchRecord(live);
      await store.watches.insert(watch, { limit: 10 });
      const updated = await store.watches.update(live, watch.id, { autoMonitor: true, allowedIssuers: ["Sectigo"], updatedAt: NOW + 5 });
      expect(updated).toEqual({ ...watch, autoMonitor: true, allowedIssuers: ["Sectigo"], updatedAt: NOW + 5 });
      expect(await store.watches.update(live, watch.id, { includeSubdomains: false, updatedAt: NOW + 6 })).toEqual({
        ...watch,
        autoMonitor: true,
        allowedIssuers: ["Sectigo"],
        includeSubdomains: false,
        updatedAt: NOW + 6,
      });
      expect(await store.watches.update(testScope, watch.id, { autoMonitor: false, updatedAt: NOW })).toBeNull();
      expect(await store.watches.remove(testScope, watch.id)).toBe(false);
      expect(await store.watches.remove(live, watch.id)).toBe(true);
      expect(await store.watches.get(live, watch.id)).toBeNull();
    });

    test("pollSoon() makes a watch due now, never later, not while it is leased, and only in its scope", async () => {
      const store = get();
      const { live, test: other } = await newOrganization(store);
      const watch = watchRecord(live, { nextPollAt: FAR + DAY });
      await store.watches.insert(watch, { limit: 10 });
      expect(await store.watches.pollSoon(other, watch.id, FAR)).toBeNull();
      expect(await store.watches.pollSoon(live, newId("wch"), FAR)).toBeNull();
      expect(await store.watches.pollSoon(live, watch.id, FAR + 2 * DAY)).toEqual({ ...watch, nextPollAt: FAR + DAY });
      expect(await store.watches.pollSoon(live, watch.id, FAR)).toEqual({ ...watch, nextPollAt: FAR });
      const claimed = await store.watches.claimDue({ owner: "a", now: FAR, leaseUntil: FAR + HOUR, limit: 1000 });
      expect(claimed.some((w) => w.id === watch.id)).toBe(true);
      // Under a lease (a poll under way), the lease's time stands.
      expect((await store.watches.pollSoon(live, watch.id, FAR + 1))!.nextPollAt).toBe(FAR + HOUR);
    });

    test("claimDue() leases a due watch once; savePoll() writes only under the lease, with the events", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const watch = watchRecord(live, { nextPollAt: FAR });
      await store.watches.insert(watch, { limit: 10 });
      const mine = (await store.watches.claimDue({ owner: "a", now: FAR, leaseUntil: FAR + HOUR, limit: 1000 })).filter((w) => w.id === watch.id);
      expect(mine).toEqual([watch]);
      expect(await store.watches.nextPollAt()).not.toBeNull();
      const again = await store.watches.claimDue({ owner: "b", now: FAR + 1, leaseUntil: FAR + HOUR, limit: 1000 });
      expect(again.some((w) => w.id === watch.id)).toBe(false);

      const progress = {
        id: watch.id,
        cursor: "1001",
        newIssuances: 3,
        baselineDone: true,
        pendingNames: ["new.example.com"],
        lastPolledAt: FAR + 10,
        lastError: null,
        nextPollAt: FAR + DAY,
        release: true,
        updatedAt: FAR + 10,
      };
      const event = eventRecord(live, { type: "certificate.issued", certificateId: null, data: { watchId: watch.id } });
      expect(await store.watches.savePoll({ ...progress, owner: "b" }, [event])).toBe(false);
      expect(await store.events.get(live, event.id)).toBeNull();
      expect(await store.watches.savePoll({ ...progress, owner: "a" }, [event])).toBe(true);
      expect(await store.watches.get(live, watch.id)).toEqual({
        ...watch,
        cursor: "1001",
        issuancesSeen: 3,
        baselineDone: true,
        pendingNames: ["new.example.com"],
        lastPolledAt: FAR + 10,
        nextPollAt: FAR + DAY,
        updatedAt: FAR + 10,
      });
      expect((await deliveriesOf(store, live, event.id)).map((d) => [d.channelId, d.status])).toEqual([[channel.id, "pending"]]);
      // The lease was released: the same owner cannot write again until it claims again.
      expect(await store.watches.savePoll({ ...progress, owner: "a" }, [])).toBe(false);
    });

    test("savePoll() with release false keeps the lease for the next page", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const watch = watchRecord(live, { nextPollAt: FAR + 2 });
      await store.watches.insert(watch, { limit: 10 });
      await store.watches.claimDue({ owner: "pager", now: FAR + 2, leaseUntil: FAR + HOUR, limit: 1000 });
      const page = { id: watch.id, owner: "pager", baselineDone: false, pendingNames: [], lastPolledAt: null, lastError: null, nextPollAt: FAR + HOUR, updatedAt: FAR + 3 };
      expect(await store.watches.savePoll({ ...page, cursor: "5", newIssuances: 2, release: false }, [])).toBe(true);
      expect(await store.watches.savePoll({ ...page, cursor: "9", newIssuances: 1, release: true }, [])).toBe(true);
      expect(await store.watches.get(live, watch.id)).toMatchObject({ cursor: "9", issuancesSeen: 3 });
    });
  });

  describe("revocation cache", () => {
    const answer = (overrides: Partial<RevocationAnswer> = {}): RevocationAnswer => ({
      status: "revoked",
      source: "ocsp",
      checkedAt: NOW,
      revokedAt: NOW - DAY,
      reason: "keyCompromise",
      validUntil: NOW + HOUR,
      ...overrides,
    });

    test("put() then get() before validUntil returns the answer; after it, nothing", async () => {
      const store = get();
      const key = `issuer:${hex(8)}`;
      expect(await store.revocations.get(key, NOW)).toBeNull();
      await store.revocations.put(key, answer());
      expect(await store.revocations.get(key, NOW + 1)).toEqual(answer());
      expect(await store.revocations.get(key, NOW + HOUR)).toBeNull();
    });

    test("put() replaces the answer under the same key", async () => {
      const store = get();
      const key = `issuer:${hex(8)}`;
      await store.revocations.put(key, answer({ status: "good", revokedAt: null, reason: null }));
      await store.revocations.put(key, answer({ validUntil: NOW + 2 * HOUR }));
      expect(await store.revocations.get(key, NOW + HOUR + 1)).toEqual(answer({ validUntil: NOW + 2 * HOUR }));
    });
  });

  describe("renewal information claims", () => {
    /** How much later than the claim asked for another's may end and still hold. */
    const LATE = 10 * 60_000;
    test("claim(): one owner at a time asks about a leaf, until its claim ends; its own claim it may renew", async () => {
      const store = get();
      const certId = `leaf.${hex(8)}`;
      expect(await store.renewalInfo.claim(certId, "proc_a", NOW, NOW + 5_000, NOW + 5_000 + LATE)).toBe(true);
      expect(await store.renewalInfo.claim(certId, "proc_b", NOW + 1_000, NOW + 6_000, NOW + 6_000 + LATE)).toBe(false);
      expect(await store.renewalInfo.claim(certId, "proc_a", NOW + 2_000, NOW + 7_000, NOW + 7_000 + LATE)).toBe(true);
      expect(await store.renewalInfo.claim(certId, "proc_b", NOW + 6_999, NOW + 12_000, NOW + 12_000 + LATE)).toBe(false);
      // Ended (its process died, or it answered long ago): another takes it.
      expect(await store.renewalInfo.claim(certId, "proc_b", NOW + 7_000, NOW + 12_000, NOW + 12_000 + LATE)).toBe(true);
      expect(await store.renewalInfo.claim(certId, "proc_a", NOW + 8_000, NOW + 13_000, NOW + 13_000 + LATE)).toBe(false);
      // Another leaf is claimed on its own.
      expect(await store.renewalInfo.claim(`leaf.${hex(8)}`, "proc_a", NOW + 8_000, NOW + 13_000, NOW + 13_000 + LATE)).toBe(true);
    });

    test("claim(): another owner's claim ending later than `latest` (taken on a clock since set back) is taken over", async () => {
      const store = get();
      const certId = `leaf.${hex(8)}`;
      // Taken a day ahead of the clock now.
      expect(await store.renewalInfo.claim(certId, "proc_a", NOW + DAY, NOW + DAY + 5_000, NOW + DAY + 5_000 + LATE)).toBe(true);
      expect(await store.renewalInfo.claim(certId, "proc_b", NOW, NOW + 5_000, NOW + 5_000 + LATE)).toBe(true);
      expect(await store.renewalInfo.claim(certId, "proc_a", NOW + 1_000, NOW + 6_000, NOW + 6_000 + LATE)).toBe(false);
    });
  });
}
