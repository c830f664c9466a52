/**
 * The store conformance suite's part for the CT log follower (CONTRACT §21): its one lease, the logs
 * it follows and their positions (written only while the lease holds, and only from where the log
 * is), and the issuances it records per watch with their events, once each.
 */
import { describe, expect, test } from "bun:test";
import type { CtBatch, CtIssuanceRecord, CtLogRecord, Store } from "../../../core/store/ports.ts";
import type { EventRecord, Scope } from "../../../core/base/records.ts";
import { newId } from "../../../core/base/ids.ts";
import { channelRecord, hex, NOW } from "./factories.ts";
import { addChannel, deliveriesOf, newOrganization } from "./_helpers.ts";
import { watchRecord } from "./watches.ts";

/** Lease times of this part's tests: each test starts after the leases of those before it ran out. */
let clock = 7e15;
const later = () => (clock += 1e9);

async function holdLease(store: Store): Promise<{ owner: string; now: number }> {
  const owner = `proc_${hex(6)}`;
  const now = later();
  expect(await store.ctLogs.leaseFollower({ owner, now, leaseUntil: now + 60_000 })).toBe(true);
  return { owner, now };
}

function issuance(watchId: string, overrides: Partial<CtIssuanceRecord> = {}): CtIssuanceRecord {
  return {
    watchId,
    issuanceKey: hex(32),
    dnsNames: ["www.example.com", "example.com"],
    issuerOrganization: "Let's Encrypt",
    issuerCommonName: "E7",
    notBefore: NOW - 86_400_000,
    notAfter: NOW + 89 * 86_400_000,
    fingerprint: null,
    loggedAt: NOW,
    ...overrides,
  };
}

function issuedEvent(scope: Scope, watchId: string): EventRecord {
  return { ...scope, id: newId("evt"), type: "certificate.issued", certificateId: null, data: { watchId, domain: "example.com" }, createdAt: NOW };
}

function batch(owner: string, url: string, from: number, position: number, matches: CtBatch["matches"] = []): CtBatch {
  return { owner, url, from, position, compactRange: [hex(32)], matches, updatedAt: NOW + position };
}

export function describeCtLogs(get: () => Store) {
  describe("CT log follower", () => {
    test("leaseFollower() gives the one lease to one owner at a time, extends it for its holder, and lets another take it once it runs out", async () => {
      const store = get();
      const now = later();
      expect(await store.ctLogs.leaseFollower({ owner: "proc_a", now, leaseUntil: now + 1000 })).toBe(true);
      expect(await store.ctLogs.leaseFollower({ owner: "proc_b", now: now + 500, leaseUntil: now + 1500 })).toBe(false);
      expect(await store.ctLogs.leaseFollower({ owner: "proc_a", now: now + 900, leaseUntil: now + 1900 })).toBe(true);
      expect(await store.ctLogs.leaseFollower({ owner: "proc_b", now: now + 1500, leaseUntil: now + 2500 })).toBe(false);
      expect(await store.ctLogs.leaseFollower({ owner: "proc_b", now: now + 2000, leaseUntil: now + 3000 })).toBe(true);
      expect(await store.ctLogs.leaseFollower({ owner: "proc_a", now: now + 2100, leaseUntil: now + 3100 })).toBe(false);
      await store.ctLogs.releaseFollower("proc_a");
      expect(await store.ctLogs.leaseFollower({ owner: "proc_c", now: now + 2200, leaseUntil: now + 3200 })).toBe(false);
      await store.ctLogs.releaseFollower("proc_b");
      expect(await store.ctLogs.leaseFollower({ owner: "proc_c", now: now + 2200, leaseUntil: now + 3200 })).toBe(true);
    });

    test("leaseFollower() takes over another owner's lease ending later than `latest` (taken on a clock since set back)", async () => {
      const store = get();
      const now = later();
      // Taken a day ahead of the clock now, by a process since gone.
      expect(await store.ctLogs.leaseFollower({ owner: "proc_ahead", now: now + 86_400_000, leaseUntil: now + 86_400_000 + 1000 })).toBe(true);
      expect(await store.ctLogs.leaseFollower({ owner: "proc_b", now, leaseUntil: now + 1000 })).toBe(false);
      expect(await store.ctLogs.leaseFollower({ owner: "proc_b", now, leaseUntil: now + 1000, latest: now + 1000 + 600_000 })).toBe(true);
      // A lease within `latest` holds as ever.
      expect(await store.ctLogs.leaseFollower({ owner: "proc_c", now: now + 10, leaseUntil: now + 1010, latest: now + 1010 + 600_000 })).toBe(false);
      await store.ctLogs.releaseFollower("proc_b");
    });

    test("setListed() adds logs unseen, keeps known ones' state, and unlists the rest; only for the lease holder", async () => {
      const store = get();
      const { owner } = await holdLease(store);
      const [a, b, c] = ["a", "b", "c"].map((name) => `https://${hex(4)}.ct.example/${name}/`) as [string, string, string];
      expect(await store.ctLogs.setListed(owner, [{ url: a, kind: "rfc6962" }, { url: b, kind: "tiled" }], NOW)).toBe(true);
      expect(await store.ctLogs.startLog(owner, a, { position: 10, compactRange: ["x", "y"], updatedAt: NOW + 1 })).toBe(true);
      expect(await store.ctLogs.setListed(owner, [{ url: a, kind: "rfc6962" }, { url: c, kind: "tiled" }], NOW + 2)).toBe(true);
      const logs = (await store.ctLogs.list()).filter((log) => [a, b, c].includes(log.url));
      const expected: CtLogRecord[] = [
          { url: a, kind: "rfc6962", treeSize: null, rootHash: null, headTimestamp: null, position: 10, compactRange: ["x", "y"], lastError: null, retryAt: null, listed: true, updatedAt: NOW + 1 },
          { url: b, kind: "tiled", treeSize: null, rootHash: null, headTimestamp: null, position: null, compactRange: [], lastError: null, retryAt: null, listed: false, updatedAt: NOW },
          { url: c, kind: "tiled", treeSize: null, rootHash: null, headTimestamp: null, position: null, compactRange: [], lastError: null, retryAt: null, listed: true, updatedAt: NOW + 2 },
      ];
      expect(logs).toEqual(expected.sort((x, y) => (x.url < y.url ? -1 : 1)));
      expect(await store.ctLogs.setListed("proc_stranger", [], NOW)).toBe(false);
      expect((await store.ctLogs.list()).find((log) => log.url === a)!.listed).toBe(true);
    });

    test("setListed(): a log the list moves to another URL (same key, same kind) keeps its head and position there", async () => {
      const store = get();
      const { owner } = await holdLease(store);
      const [old, moved, other, still] = ["old", "moved", "other", "still"].map((name) => `https://${hex(4)}.ct.example/${name}/`) as [string, string, string, string];
      const key = `k${hex(8)}`;
      const otherKey = `k${hex(8)}`;
      expect(await store.ctLogs.setListed(owner, [{ url: old, kind: "rfc6962", keyBase64: key }, { url: still, kind: "tiled", keyBase64: otherKey }], NOW)).toBe(true);
      expect(await store.ctLogs.updateLog(owner, old, { treeSize: 7, rootHash: "cm9vdA==", headTimestamp: NOW - 5, updatedAt: NOW + 1 })).toBe(true);
      expect(await store.ctLogs.startLog(owner, old, { position: 7, compactRange: ["x"], updatedAt: NOW + 1 })).toBe(true);
      expect(await store.ctLogs.startLog(owner, still, { position: 3, compactRange: ["y"], updatedAt: NOW + 1 })).toBe(true);
      // The log moves; a new URL with another log's key, while that log is still listed, is a new log.
      expect(
        await store.ctLogs.setListed(owner, [{ url: moved, kind: "rfc6962", keyBase64: key }, { url: still, kind: "tiled", keyBase64: otherKey }, { url: other, kind: "tiled", keyBase64: otherKey }], NOW + 2),
      ).toBe(true);
      const logs = (await store.ctLogs.list()).filter((log) => [old, moved, other, still].includes(log.url));
      expect(logs.map((log) => [log.url, log.treeSize, log.position, log.listed]).sort()).toEqual(
        [
          [moved, 7, 7, true],
          [other, null, null, true],
          [still, null, 3, true],
        ].sort(),
      );
      // Another kind under the key is another log.
      const tiled = `https://${hex(4)}.ct.example/tiled/`;
      expect(await store.ctLogs.setListed(owner, [{ url: tiled, kind: "tiled", keyBase64: key }], NOW + 3)).toBe(true);
      expect((await store.ctLogs.list()).filter((log) => [moved, tiled].includes(log.url)).map((log) => [log.url, log.position, log.listed]).sort()).toEqual(
        [
          [moved, 7, false],
          [tiled, null, true],
        ].sort(),
      );
    });

    test("updateLog() and startLog() write only for the lease holder; startLog() only once", async () => {
      const store = get();
      const { owner } = await holdLease(store);
      const url = `https://${hex(4)}.ct.example/log/`;
      await store.ctLogs.setListed(owner, [{ url, kind: "rfc6962" }], NOW);
      expect(await store.ctLogs.updateLog(owner, url, { treeSize: 42, rootHash: "cm9vdA==", headTimestamp: NOW - 5, lastError: "slow", updatedAt: NOW + 3 })).toBe(true);
      expect(await store.ctLogs.updateLog(owner, url, { lastError: null, retryAt: NOW + 7_200_000, updatedAt: NOW + 4 })).toBe(true);
      expect(await store.ctLogs.updateLog("proc_stranger", url, { lastError: "forged", updatedAt: NOW + 5 })).toBe(false);
      expect(await store.ctLogs.startLog(owner, url, { position: 42, compactRange: ["h1", "h2"], updatedAt: NOW + 6 })).toBe(true);
      expect(await store.ctLogs.startLog(owner, url, { position: 0, compactRange: [], updatedAt: NOW + 7 })).toBe(false);
      expect((await store.ctLogs.list()).find((log) => log.url === url)).toEqual({
        url,
        kind: "rfc6962",
        treeSize: 42,
        rootHash: "cm9vdA==",
        headTimestamp: NOW - 5,
        position: 42,
        compactRange: ["h1", "h2"],
        lastError: null,
        retryAt: NOW + 7_200_000,
        listed: true,
        updatedAt: NOW + 6,
      });
    });

    test("commit() moves the log from where it is and records each issuance once per watch, with its event and deliveries", async () => {
      const store = get();
      const { owner } = await holdLease(store);
      const { live, test: testScope } = await newOrganization(store);
      const channel = await addChannel(store, channelRecord(live));
      const watch = watchRecord(live, { autoMonitor: true, nextPollAt: NOW + 3_600_000 });
      const quiet = watchRecord(testScope);
      const gone = watchRecord(live);
      for (const w of [watch, quiet]) expect(await store.watches.insert(w, { limit: 10 })).toBe("created");
      const url = `https://${hex(4)}.ct.example/log/`;
      await store.ctLogs.setListed(owner, [{ url, kind: "tiled" }], NOW);
      await store.ctLogs.startLog(owner, url, { position: 100, compactRange: [], updatedAt: NOW });

      const pre = issuance(watch.id);
      const event = issuedEvent(live, watch.id);
      const matches: CtBatch["matches"] = [
        { issuance: pre, event },
        { issuance: issuance(quiet.id, { issuanceKey: pre.issuanceKey }), event: null },
        { issuance: issuance(gone.id), event: issuedEvent(live, gone.id) },
      ];
      expect(await store.ctLogs.commit(batch(owner, url, 100, 356, matches))).toMatchObject({ saved: true, events: [{ type: "certificate.issued" }] });
      // Not from where the log is, or not the holder: nothing is written.
      expect(await store.ctLogs.commit(batch(owner, url, 100, 612, [{ issuance: issuance(watch.id), event: issuedEvent(live, watch.id) }]))).toEqual({ saved: false, events: [] });
      expect(await store.ctLogs.commit(batch(owner, url, 100, 612))).toEqual({ saved: false, events: [] });
      expect(await store.ctLogs.commit(batch("proc_stranger", url, 356, 612))).toEqual({ saved: false, events: [] });
      // The same issuance again (its certificate, seen later, in another run): no event, the fingerprint kept.
      const again = { ...pre, fingerprint: "ab".repeat(32), loggedAt: NOW + 10 };
      expect(await store.ctLogs.commit(batch(owner, url, 356, 612, [{ issuance: again, event: issuedEvent(live, watch.id) }]))).toEqual({ saved: true, events: [] });

      const log = (await store.ctLogs.list()).find((l) => l.url === url)!;
      expect({ position: log.position, updatedAt: log.updatedAt }).toEqual({ position: 612, updatedAt: NOW + 612 });
      expect(await store.ctLogs.issuances(watch.id, 0, 10)).toEqual([{ ...pre, fingerprint: "ab".repeat(32), seq: expect.any(Number) }]);
      expect((await store.ctLogs.issuances(quiet.id, 0, 10)).map((i) => i.issuanceKey)).toEqual([pre.issuanceKey]);
      expect(await store.ctLogs.issuances(gone.id, 0, 10)).toEqual([]);
      const stored = (await store.watches.get(live, watch.id))!;
      expect(stored.issuancesSeen).toBe(1);
      // Every watch with a new issuance is polled at once (autoMonitor's names, pending deployments).
      expect(stored.nextPollAt).toBe(NOW + 356);
      expect((await store.watches.get(testScope, quiet.id))!).toMatchObject({ issuancesSeen: 1, nextPollAt: Math.min(quiet.nextPollAt, NOW + 356) });
      expect((await store.events.list(live, { limit: 10 })).map((e) => e.id)).toEqual([event.id]);
      expect((await deliveriesOf(store, live, event.id)).map((d) => [d.channelId, d.status])).toEqual([[channel.id, "pending"]]);
      expect(await store.events.list(testScope, { limit: 10 })).toEqual([]);
    });

    test("recordSearched() records what a search poll went through: nothing counted, the follower then announces none of it", async () => {
      const store = get();
      const { owner } = await holdLease(store);
      const { live } = await newOrganization(store);
      const watch = watchRecord(live, { nextPollAt: NOW + 3_600_000 });
      const gone = watchRecord(live);
      await store.watches.insert(watch, { limit: 10 });
      const searched = issuance(watch.id);
      await store.ctLogs.recordSearched([searched, issuance(gone.id)], NOW);
      // Twice (a page read again after a crash): recorded once.
      await store.ctLogs.recordSearched([{ ...searched, fingerprint: "cd".repeat(32) }], NOW + 1);
      expect(await store.ctLogs.issuances(watch.id, 0, 10)).toEqual([{ ...searched, seq: expect.any(Number) }]);
      expect(await store.ctLogs.issuances(gone.id, 0, 10)).toEqual([]);
      expect((await store.watches.get(live, watch.id))!).toMatchObject({ issuancesSeen: 0, nextPollAt: NOW + 3_600_000 });
      // The follower reading the same issuance later (logs followed again): no event, nothing counted.
      const url = `https://${hex(4)}.ct.example/log/`;
      await store.ctLogs.setListed(owner, [{ url, kind: "rfc6962" }], NOW);
      await store.ctLogs.startLog(owner, url, { position: 0, compactRange: [], updatedAt: NOW });
      expect(await store.ctLogs.commit(batch(owner, url, 0, 1, [{ issuance: { ...searched, loggedAt: NOW + 5 }, event: issuedEvent(live, watch.id) }]))).toEqual({ saved: true, events: [] });
      expect((await store.watches.get(live, watch.id))!.issuancesSeen).toBe(0);
      expect(await store.events.list(live, { limit: 10 })).toEqual([]);
    });

    test("issuances() pages a watch's issuances oldest first after a seq", async () => {
      const store = get();
      const { owner } = await holdLease(store);
      const { live } = await newOrganization(store);
      const watch = watchRecord(live);
      await store.watches.insert(watch, { limit: 10 });
      const url = `https://${hex(4)}.ct.example/log/`;
      await store.ctLogs.setListed(owner, [{ url, kind: "rfc6962" }], NOW);
      await store.ctLogs.startLog(owner, url, { position: 0, compactRange: [], updatedAt: NOW });
      const records = [issuance(watch.id), issuance(watch.id), issuance(watch.id)];
      await store.ctLogs.commit(batch(owner, url, 0, 3, records.map((i) => ({ issuance: i, event: null }))));
      const all = await store.ctLogs.issuances(watch.id, 0, 10);
      expect(all.map((i) => i.issuanceKey)).toEqual(records.map((i) => i.issuanceKey));
      expect(all[0]!.seq).toBeLessThan(all[1]!.seq);
      expect((await store.ctLogs.issuances(watch.id, all[0]!.seq, 1)).map((i) => i.issuanceKey)).toEqual([records[1]!.issuanceKey]);
    });

    test("pruneIssuances() forgets issuances of expired certificates and deleted watches, and keeps the rest", async () => {
      const store = get();
      const { owner } = await holdLease(store);
      const { live } = await newOrganization(store);
      const kept = watchRecord(live);
      const deleted = watchRecord(live);
      for (const w of [kept, deleted]) await store.watches.insert(w, { limit: 10 });
      const url = `https://${hex(4)}.ct.example/log/`;
      await store.ctLogs.setListed(owner, [{ url, kind: "rfc6962" }], NOW);
      await store.ctLogs.startLog(owner, url, { position: 0, compactRange: [], updatedAt: NOW });
      const current = issuance(kept.id);
      const expired = issuance(kept.id, { notAfter: NOW - 100 * 86_400_000 });
      const orphan = issuance(deleted.id);
      await store.ctLogs.commit(batch(owner, url, 0, 3, [current, expired, orphan].map((i) => ({ issuance: i, event: null }))));
      await store.watches.remove(live, deleted.id);
      expect(await store.ctLogs.pruneIssuances(NOW - 90 * 86_400_000)).toBeGreaterThanOrEqual(2);
      expect((await store.ctLogs.issuances(kept.id, 0, 10)).map((i) => i.issuanceKey)).toEqual([current.issuanceKey]);
      expect(await store.ctLogs.issuances(deleted.id, 0, 10)).toEqual([]);
      // A pruned issuance seen again is recorded again.
      expect(await store.ctLogs.commit(batch(owner, url, 3, 4, [{ issuance: expired, event: null }]))).toEqual({ saved: true, events: [] });
      expect((await store.ctLogs.issuances(kept.id, 0, 10)).length).toBe(2);
    });

    test("watchesVersion() changes whenever a watch is added, changed or removed; allWatches() has every organization's", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const { test: otherTest } = await newOrganization(store);
      const before = await store.ctLogs.watchesVersion();
      const mine = watchRecord(live, { createdAt: NOW + 7, updatedAt: NOW + 7 });
      const theirs = watchRecord(otherTest);
      await store.watches.insert(mine, { limit: 10 });
      await store.watches.insert(theirs, { limit: 10 });
      const added = await store.ctLogs.watchesVersion();
      expect(added).not.toBe(before);
      const all = await store.ctLogs.allWatches();
      expect(all.find((w) => w.id === mine.id)).toEqual(mine);
      expect(all.find((w) => w.id === theirs.id)).toEqual(theirs);
      await store.watches.update(live, mine.id, { includeSubdomains: false, updatedAt: NOW + 8 });
      const changed = await store.ctLogs.watchesVersion();
      expect(changed).not.toBe(added);
      await store.watches.remove(live, mine.id);
      expect(await store.ctLogs.watchesVersion()).not.toBe(changed);
      expect((await store.ctLogs.allWatches()).some((w) => w.id === mine.id)).toBe(false);
    });

    test("an issuance recorded while a poll holds its watch makes the next poll due as that poll ends (its pages may have been read before it)", async () => {
      const store = get();
      const { owner, now } = await holdLease(store);
      const { live } = await newOrganization(store);
      const watch = watchRecord(live, { nextPollAt: now, baselineDone: true });
      await store.watches.insert(watch, { limit: 10 });
      const url = `https://${hex(4)}.ct.example/log/`;
      await store.ctLogs.setListed(owner, [{ url, kind: "tiled" }], now);
      await store.ctLogs.startLog(owner, url, { position: 0, compactRange: [], updatedAt: now });
      const poll = async (recordMeanwhile: boolean, at: number) => {
        const claimed = (await store.watches.claimDue({ owner: "poller", now: at, leaseUntil: at + 60_000, limit: 1000 })).find((w) => w.id === watch.id);
        expect(claimed).toBeDefined();
        if (recordMeanwhile) {
          const position = (await store.ctLogs.list()).find((log) => log.url === url)!.position!;
          expect((await store.ctLogs.commit({ ...batch(owner, url, position, position + 10, [{ issuance: issuance(watch.id), event: null }]), updatedAt: at + 1 })).saved).toBe(true);
        }
        const saved = await store.watches.savePoll(
          {
            id: watch.id, owner: "poller", cursor: "logs:0", newIssuances: 0, baselineDone: true, pendingNames: [], lastPolledAt: at + 2,
            lastError: null, nextPollAt: at + 3_600_000, release: true, updatedAt: at + 2, issuancesSeen: claimed!.issuancesSeen,
          },
          [],
        );
        expect(saved).toBe(true);
        return (await store.watches.get(live, watch.id))!;
      };
      // Nothing recorded meanwhile: the next poll an interval on.
      expect((await poll(false, now)).nextPollAt).toBe(now + 3_600_000);
      // Recorded while the lease kept the commit from bringing the poll forward: due as the poll ends.
      const after = await poll(true, now + 3_600_000);
      expect([after.nextPollAt, after.issuancesSeen]).toEqual([now + 3_600_000 + 2, 1]);
      // And the poll that reads it plans the next one an interval on again.
      expect((await poll(false, now + 3_600_000 + 2)).nextPollAt).toBe(now + 7_200_000 + 2);
    });
  });
}
