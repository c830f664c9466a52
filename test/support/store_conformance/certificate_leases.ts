/** The store conformance suite's part for checking certificates: claimDue, nextDueAt, capNextChecks, pullForwardChecks, saveCheck. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import type { CertificateRecord } from "../../../core/base/records.ts";
import { DAY, HOUR, MINUTE } from "../../../core/base/time.ts";
import { certificateDetails, certificateRecord, channelRecord, eventRecord, hex, NOW } from "./factories.ts";
import { addCertificate, addChannel, compareIds, deliveriesOf, ids, newOrganization, PARKED, parkLeftovers, sortedIds } from "./_helpers.ts";

export function describeCertificateLeases(get: () => Store) {
  describe("certificates: claimDue, nextDueAt, capNextChecks, saveCheck", () => {
    test("claimDue() leases what is due, as it was before the lease, until leaseUntil", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live, test: testScope } = await newOrganization(store);
      const [early, due, justDue, notYet] = [
        certificateRecord(live, { nextCheckAt: NOW - 2 * MINUTE }),
        certificateRecord(testScope, { nextCheckAt: NOW - MINUTE }),
        certificateRecord(live, { nextCheckAt: NOW }),
        certificateRecord(live, { nextCheckAt: NOW + 1 }),
      ];
      for (const record of [early, due, justDue, notYet]) await addCertificate(store, record);

      const claimed = await store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: NOW + 5 * MINUTE, limit: 10 });
      expect([...claimed].sort((a, b) => compareIds(a.id, b.id))).toEqual([early, due, justDue].sort((a, b) => compareIds(a.id, b.id)));
      expect((await store.certificates.get(live, early.id))?.nextCheckAt).toBe(NOW + 5 * MINUTE);
      expect(await store.certificates.nextDueAt()).toBe(NOW + 1);

      // Leased: not claimable before the lease runs out, by anyone.
      const second = await store.certificates.claimDue({ owner: "two", now: NOW + 2 * MINUTE, leaseUntil: NOW + 7 * MINUTE, limit: 10 });
      expect(ids(second)).toEqual([notYet.id]);
      // The lease ran out (the process died mid-check): due again.
      const third = await store.certificates.claimDue({ owner: "three", now: NOW + 5 * MINUTE, leaseUntil: NOW + 9 * MINUTE, limit: 10 });
      expect(sortedIds(third)).toEqual(sortedIds([early, due, justDue]));
      expect((await store.certificates.get(testScope, due.id))?.nextCheckAt).toBe(NOW + 9 * MINUTE);
    });

    test("releaseLeases() gives back what the owner still leases until that moment: due at its old next check, for anyone", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const [given, taken, other] = [
        certificateRecord(live, { nextCheckAt: NOW - 3 * MINUTE }),
        certificateRecord(live, { nextCheckAt: NOW - 2 * MINUTE }),
        certificateRecord(live, { nextCheckAt: NOW - MINUTE }),
      ];
      for (const record of [given, taken, other]) await addCertificate(store, record);
      const until = NOW + 5 * MINUTE;
      await store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: until, limit: 2 });
      await store.certificates.claimDue({ owner: "two", now: NOW, leaseUntil: until, limit: 10 });
      // `taken`'s lease by "one" ran out and "three" leased it since: not "one"'s to give back.
      const retaken = await store.certificates.claimDue({ owner: "three", now: until, leaseUntil: until + 5 * MINUTE, limit: 10 });
      expect(sortedIds(retaken)).toEqual(sortedIds([given, taken, other]));
      await store.certificates.releaseLeases("three", [{ id: given.id, nextCheckAt: given.nextCheckAt, leaseUntil: until + 5 * MINUTE }]);
      await store.certificates.releaseLeases("one", [
        { id: taken.id, nextCheckAt: taken.nextCheckAt, leaseUntil: until },
        { id: "cert_0000000000000000gone", nextCheckAt: NOW, leaseUntil: until },
      ]);
      // Another owner's lease, or the right owner with another lease's end: left alone.
      await store.certificates.releaseLeases("two", [{ id: taken.id, nextCheckAt: NOW, leaseUntil: until + 5 * MINUTE }]);
      await store.certificates.releaseLeases("three", [{ id: other.id, nextCheckAt: NOW, leaseUntil: until }]);
      await store.certificates.releaseLeases("three", []);
      expect((await store.certificates.get(live, given.id))?.nextCheckAt).toBe(given.nextCheckAt);
      expect((await store.certificates.get(live, taken.id))?.nextCheckAt).toBe(until + 5 * MINUTE);
      expect((await store.certificates.get(live, other.id))?.nextCheckAt).toBe(until + 5 * MINUTE);
      expect(ids(await store.certificates.claimDue({ owner: "four", now: until, leaseUntil: until + HOUR, limit: 10 }))).toEqual([given.id]);
    });

    test("beat(), giveBackLapsed(), forgetBeat(): a process's leases come back only while its last word is the one judged lapsed", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      // Owners of this test alone (the table outlives each test).
      const [a, b, c] = ["a", "b", "c"].map((name) => `proc_${name}${hex(8)}`) as [string, string, string];
      const words = async (owner: string) => (await store.certificates.beat(owner)).filter((word) => [a, b, c].includes(word.owner)).sort((x, y) => x.owner.localeCompare(y.owner));
      expect(await words(a)).toEqual([]);
      expect(await words(b)).toEqual([{ owner: a, word: 1 }]);
      expect(await words(a)).toEqual([{ owner: b, word: 1 }]);
      expect(await words(b)).toEqual([{ owner: a, word: 2 }]);

      const [long, short, theirs] = [
        certificateRecord(live, { nextCheckAt: NOW - 3 * MINUTE }),
        certificateRecord(live, { nextCheckAt: NOW - 2 * MINUTE }),
        certificateRecord(live, { nextCheckAt: NOW - MINUTE }),
      ];
      for (const record of [long, short, theirs]) await addCertificate(store, record);
      await store.certificates.claimDue({ owner: a, now: NOW, leaseUntil: NOW + 12 * MINUTE, limit: 1 });
      await store.certificates.claimDue({ owner: a, now: NOW, leaseUntil: NOW + 30 * 1000, limit: 1 });
      await store.certificates.claimDue({ owner: b, now: NOW, leaseUntil: NOW + 12 * MINUTE, limit: 1 });
      const at = (record: CertificateRecord) => store.certificates.get(live, record.id).then((stored) => stored?.nextCheckAt);

      // a said a new word since the one judged: nothing given back, its word kept.
      expect(await store.certificates.giveBackLapsed([{ owner: a, word: 1 }], NOW + MINUTE)).toBe(0);
      expect(await at(long)).toBe(NOW + 12 * MINUTE);
      // Its last word judged lapsed: its lease beyond now is due now; the one that ran out is left as it is.
      expect(await store.certificates.giveBackLapsed([{ owner: a, word: 2 }], NOW + MINUTE)).toBe(1);
      expect([await at(long), await at(short), await at(theirs)]).toEqual([NOW + MINUTE, NOW + 30 * 1000, NOW + 12 * MINUTE]);
      expect(ids(await store.certificates.claimDue({ owner: b, now: NOW + MINUTE, leaseUntil: NOW + HOUR, limit: 10 })).sort(compareIds)).toEqual(sortedIds([long, short]));
      // ...and a is forgotten.
      expect(await words(c)).toEqual([{ owner: b, word: 2 }]);

      // b stops while it still leases `theirs` (its give-back failed): its word stays, for the others to judge.
      await store.certificates.forgetBeat(b, NOW + MINUTE);
      expect(await words(c)).toEqual([{ owner: b, word: 2 }]);
      await store.certificates.releaseLeases(b, [{ id: theirs.id, nextCheckAt: theirs.nextCheckAt, leaseUntil: NOW + 12 * MINUTE }]);
      await store.certificates.releaseLeases(b, [
        { id: long.id, nextCheckAt: NOW + MINUTE, leaseUntil: NOW + HOUR },
        { id: short.id, nextCheckAt: NOW + 30 * 1000, leaseUntil: NOW + HOUR },
      ]);
      await store.certificates.forgetBeat(b, NOW + MINUTE);
      expect(await words(c)).toEqual([]);
      expect(await store.certificates.giveBackLapsed([{ owner: b, word: 2 }], NOW + MINUTE)).toBe(0);
    });

    test("claimDue() leases at most `limit`, leaving the rest due", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const records: CertificateRecord[] = [];
      for (let i = 0; i < 5; i++) records.push(await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW - i * MINUTE })));
      const lease = { now: NOW, leaseUntil: NOW + HOUR };
      const first = await store.certificates.claimDue({ ...lease, owner: "one", limit: 2 });
      const rest = await store.certificates.claimDue({ ...lease, owner: "two", limit: 10 });
      expect(first).toHaveLength(2);
      expect(rest).toHaveLength(3);
      expect([...sortedIds(first), ...sortedIds(rest)].sort(compareIds)).toEqual(sortedIds(records));
    });

    test("two claimDue() at once lease disjoint sets", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const records: CertificateRecord[] = [];
      for (let i = 0; i < 8; i++) records.push(await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW - i })));
      const lease = { now: NOW, leaseUntil: NOW + HOUR, limit: 5 };
      const [a, b] = await Promise.all([
        store.certificates.claimDue({ ...lease, owner: "a" }),
        store.certificates.claimDue({ ...lease, owner: "b" }),
      ]);
      expect(a.length + b.length).toBe(8);
      expect([...ids(a), ...ids(b)].sort(compareIds)).toEqual(sortedIds(records));
    });

    test("nextDueAt() is the earliest nextCheckAt, leases included", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const soon = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW + 10 * MINUTE }));
      const later = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW + 20 * MINUTE }));
      expect(await store.certificates.nextDueAt()).toBe(NOW + 10 * MINUTE);
      expect(ids(await store.certificates.claimDue({ owner: "one", now: NOW + 10 * MINUTE, leaseUntil: NOW + 15 * MINUTE, limit: 10 }))).toEqual([soon.id]);
      expect(await store.certificates.nextDueAt()).toBe(NOW + 15 * MINUTE);
      await store.certificates.remove(live, soon.id, NOW);
      expect(await store.certificates.nextDueAt()).toBe(NOW + 20 * MINUTE);
      await store.certificates.updateSettings(live, later.id, { alertThresholds: [7], updatedAt: NOW + MINUTE });
      expect(await store.certificates.nextDueAt()).toBe(NOW + MINUTE);
      expect(ids(await store.certificates.claimDue({ owner: "one", now: NOW + MINUTE, leaseUntil: NOW + HOUR, limit: 10 }))).toEqual([later.id]);
    });

    test("updateSettings() makes the next check due at once for a new alert policy, not for the same policy again nor for a name, tags or a mute", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live, { alertPolicy: "days", nextCheckAt: NOW + DAY }));
      const nextCheck = async () => (await store.certificates.get(live, record.id))?.nextCheckAt;
      await store.certificates.updateSettings(live, record.id, { alertPolicy: "days", name: "Same policy", tags: ["x"], mutedUntil: NOW + HOUR, updatedAt: NOW });
      expect(await nextCheck()).toBe(NOW + DAY);
      await store.certificates.updateSettings(live, record.id, { name: "No policy given", updatedAt: NOW });
      expect(await nextCheck()).toBe(NOW + DAY);
      await store.certificates.updateSettings(live, record.id, { alertPolicy: "renewal", updatedAt: NOW + MINUTE });
      expect(await nextCheck()).toBe(NOW + MINUTE);
    });

    test("pullForwardChecks() makes due now every next check later than `latest` after a last check later than `checkedAfter`, leases included, and leaves the others", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      // Planned on a clock since set back (their last check is later than `checkedAfter`): a next check,
      // and a lease, beyond the latest any planner chooses.
      const future = PARKED - HOUR;
      const far = await addCertificate(store, certificateRecord(live, { lastCheckedAt: future, nextCheckAt: PARKED + DAY }));
      const leased = await addCertificate(store, certificateRecord(live, { lastCheckedAt: future, nextCheckAt: NOW - 1 }));
      expect(ids(await store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: PARKED + 2 * DAY, limit: 10 }))).toEqual([leased.id]);
      const atLatest = await addCertificate(store, certificateRecord(live, { lastCheckedAt: future, nextCheckAt: PARKED + HOUR }));
      // Planned as far ahead, after a last check in the past (another process's longer interval): left.
      const longer = await addCertificate(store, certificateRecord(live, { lastCheckedAt: NOW - HOUR, nextCheckAt: PARKED + DAY }));
      const options = { now: NOW, latest: PARKED + HOUR, checkedAfter: NOW };

      expect(await store.certificates.pullForwardChecks(options)).toBe(2);
      expect((await store.certificates.get(live, far.id))?.nextCheckAt).toBe(NOW);
      expect((await store.certificates.get(live, leased.id))?.nextCheckAt).toBe(NOW);
      expect((await store.certificates.get(live, atLatest.id))?.nextCheckAt).toBe(PARKED + HOUR);
      expect((await store.certificates.get(live, longer.id))?.nextCheckAt).toBe(PARKED + DAY);
      expect(sortedIds(await store.certificates.claimDue({ owner: "two", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 }))).toEqual(sortedIds([far, leased]));
      // Nothing beyond it any more: nothing moves.
      expect(await store.certificates.pullForwardChecks(options)).toBe(0);
      // Gone, so that later tests over every certificate do not meet them.
      for (const record of [far, leased, atLatest, longer]) expect(await store.certificates.remove(live, record.id, NOW)).toBe(true);
    });

    test("capNextChecks() brings next checks forward to lastCheckedAt + interval, leaving earlier ones and leased ones", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const checkedAt = NOW - HOUR;
      // Leased first (its check is in flight: its own save decides its next check).
      const leased = await addCertificate(store, certificateRecord(live, { lastCheckedAt: checkedAt, nextCheckAt: NOW - 2 * HOUR }));
      expect(ids(await store.certificates.claimDue({ owner: "one", now: NOW - 2 * HOUR, leaseUntil: NOW + 3 * HOUR, limit: 10 }))).toEqual([leased.id]);
      // Scheduled under a 6-hour interval, a retry due sooner, and one already exactly at the new interval.
      const late = await addCertificate(store, certificateRecord(live, { lastCheckedAt: checkedAt, nextCheckAt: checkedAt + 6 * HOUR }));
      const retry = await addCertificate(store, certificateRecord(live, { lastCheckedAt: checkedAt, nextCheckAt: checkedAt + 15_000 }));
      const exact = await addCertificate(store, certificateRecord(live, { lastCheckedAt: checkedAt, nextCheckAt: checkedAt + MINUTE }));

      expect(await store.certificates.capNextChecks(MINUTE)).toBe(1);
      // Only the schedule moves: the version stays, so a check computed before still saves.
      expect(await store.certificates.get(live, late.id)).toEqual({ ...late, nextCheckAt: checkedAt + MINUTE });
      expect(await store.certificates.get(live, retry.id)).toEqual(retry);
      expect(await store.certificates.get(live, exact.id)).toEqual(exact);
      expect((await store.certificates.get(live, leased.id))?.nextCheckAt).toBe(NOW + 3 * HOUR);
      expect(await store.certificates.nextDueAt()).toBe(checkedAt + 15_000);
      expect(sortedIds(await store.certificates.claimDue({ owner: "two", now: checkedAt + MINUTE, leaseUntil: NOW, limit: 10 }))).toEqual(
        sortedIds([late, retry, exact]),
      );
      // Nothing left to move; a longer interval moves nothing back.
      expect(await store.certificates.capNextChecks(MINUTE)).toBe(0);
      expect(await store.certificates.capNextChecks(DAY)).toBe(0);
    });

    test("saveCheck() writes the check at the expected version, with its events and deliveries, keeping name and thresholds", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live, test: testScope } = await newOrganization(store);
      const enabled = await addChannel(store, channelRecord(live));
      await addChannel(store, channelRecord(live, { enabled: false }));
      await addChannel(store, channelRecord(testScope));
      const record = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW, version: 7 }));
      const [claimed] = await store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(claimed).toEqual(record);

      const checked: CertificateRecord = {
        ...claimed!,
        name: "Renamed by a stale copy",
        alertThresholds: [2],
        fingerprint: hex(32),
        details: certificateDetails(record.domain, { notAfter: NOW + 20 * DAY }),
        problem: "hostname_mismatch",
        lastCheckedAt: NOW + 1,
        failure: "tls_error",
        failureCount: 2,
        alertedThreshold: 30,
        expiryAlerted: false,
        health: "invalid",
        nextCheckAt: NOW + 6 * HOUR,
        updatedAt: NOW + 1,
      };
      const events = [
        eventRecord(live, { certificateId: record.id, type: "certificate.invalid", createdAt: NOW + 1 }),
        eventRecord(live, { certificateId: record.id, type: "certificate.expiring", createdAt: NOW + 1 }),
      ];
      expect(await store.certificates.saveCheck(checked, events)).toBe(true);
      const stored = await store.certificates.get(live, record.id);
      expect(stored).toEqual({ ...checked, name: record.name, alertThresholds: record.alertThresholds, version: 8 });
      for (const event of events) {
        const deliveries = await deliveriesOf(store, live, event.id);
        expect(deliveries.map((d) => [d.channelId, d.status])).toEqual([[enabled.id, "pending"]]);
      }
      // The lease is over: due again at the nextCheckAt the check chose.
      expect(await store.certificates.claimDue({ owner: "two", now: NOW + 6 * HOUR - 1, leaseUntil: NOW + 7 * HOUR, limit: 10 })).toEqual([]);
      expect(ids(await store.certificates.claimDue({ owner: "two", now: NOW + 6 * HOUR, leaseUntil: NOW + 7 * HOUR, limit: 10 }))).toEqual([record.id]);
    });

    test("saveCheck() at a stale version returns false and writes nothing", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      await addChannel(store, channelRecord(live));
      const record = await addCertificate(store, certificateRecord(live));
      const first = { ...record, lastCheckedAt: NOW, failureCount: 1, nextCheckAt: NOW + MINUTE };
      expect(await store.certificates.saveCheck(first, [])).toBe(true);
      const afterFirst = await store.certificates.get(live, record.id);

      const stale = { ...record, lastCheckedAt: NOW + 2, health: "unreachable" as const, failure: "timeout" as const };
      const staleEvent = eventRecord(live, { certificateId: record.id, type: "certificate.unreachable" });
      expect(await store.certificates.saveCheck(stale, [staleEvent])).toBe(false);
      expect(await store.certificates.get(live, record.id)).toEqual(afterFirst);
      expect(await store.events.get(live, staleEvent.id)).toBeNull();

      // A settings change also makes a check computed before it stale.
      const current = (await store.certificates.get(live, record.id))!;
      const updated = (await store.certificates.updateSettings(live, record.id, { name: "New name", updatedAt: NOW + 3 })) as CertificateRecord | null;
      expect(await store.certificates.saveCheck({ ...current, lastCheckedAt: NOW + 4 }, [])).toBe(false);
      expect(await store.certificates.get(live, record.id)).toEqual(updated);
    });

    test("saveCheck() of a removed certificate returns false and stores no events", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      await store.certificates.remove(live, record.id, NOW);
      const event = eventRecord(live, { certificateId: record.id });
      expect(await store.certificates.saveCheck({ ...record, lastCheckedAt: NOW }, [event])).toBe(false);
      expect(await store.certificates.get(live, record.id)).toBeNull();
      expect(await store.events.get(live, event.id)).toBeNull();
    });

    test("two saveCheck() at once from one version: exactly one wins", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      const checks = ["a", "b"].map((who) => ({
        record: { ...record, fingerprint: `${who}-${hex(8)}`, lastCheckedAt: NOW },
        event: eventRecord(live, { certificateId: record.id }),
      }));
      const results = await Promise.all(checks.map((c) => store.certificates.saveCheck(c.record, [c.event])));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = checks[results.indexOf(true)]!;
      const loser = checks[results.indexOf(false)]!;
      expect(await store.certificates.get(live, record.id)).toEqual({ ...winner.record, version: 1 });
      expect(await store.events.get(live, winner.event.id)).not.toBeNull();
      expect(await store.events.get(live, loser.event.id)).toBeNull();
    });

    // detailsChanged: false is the re-check of an unchanged certificate, which a store may write
    // differently (the SQL store group-commits them): the same semantics must hold.
    test("saveCheck(…, { detailsChanged: false }) of many certificates at once saves each, keeping the details", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const records = await Promise.all(Array.from({ length: 12 }, () => addCertificate(store, certificateRecord(live))));
      const checked = records.map((r, i) => ({ ...r, lastCheckedAt: NOW + i, nextCheckAt: NOW + HOUR + i, failureCount: i % 2 }));
      const results = await Promise.all(checked.map((r) => store.certificates.saveCheck(r, [], { detailsChanged: false })));
      expect(results).toEqual(checked.map(() => true));
      for (const [i, r] of checked.entries()) {
        expect(await store.certificates.get(live, r.id)).toEqual({ ...records[i]!, lastCheckedAt: NOW + i, nextCheckAt: NOW + HOUR + i, failureCount: i % 2, version: 1 });
      }
    });

    test("saveCheck(…, { detailsChanged: false }) twice at once from one version, and at a stale version: one wins", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      const [a, b] = [1, 2].map((n) => ({ ...record, lastCheckedAt: NOW + n }));
      const results = await Promise.all([a, b].map((r) => store.certificates.saveCheck(r!, [], { detailsChanged: false })));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results[0] ? a! : b!;
      expect(await store.certificates.get(live, record.id)).toEqual({ ...winner, version: 1 });
      expect(await store.certificates.saveCheck({ ...record, lastCheckedAt: NOW + 9 }, [], { detailsChanged: false })).toBe(false);
      await store.certificates.remove(live, record.id, NOW);
      expect(await store.certificates.saveCheck({ ...winner, version: 1 }, [], { detailsChanged: false })).toBe(false);
    });

    test("claimDue() after this store saved a check hands out the certificate as stored: saves, settings, stale saves, moved next checks", async () => {
      const store = get();
      await parkLeftovers(store);
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW - MINUTE }));
      let at = NOW;
      /** Claims the certificate (alone due) and expects it exactly as a read gave it just before. */
      const claimAsStored = async () => {
        const stored = await store.certificates.get(live, record.id);
        const claimed = await store.certificates.claimDue({ owner: "one", now: at, leaseUntil: at + MINUTE, limit: 10 });
        expect(claimed).toEqual([stored!]);
        at += 2 * MINUTE;
        return claimed[0]!;
      };
      const check = (from: CertificateRecord, fields: Partial<CertificateRecord>) => ({ ...from, lastCheckedAt: at, nextCheckAt: at, ...fields });

      let current = await claimAsStored();
      // An unchanged re-check, then one with new details and an event.
      expect(await store.certificates.saveCheck(check(current, { failureCount: 1 }), [], { detailsChanged: false })).toBe(true);
      current = await claimAsStored();
      expect(current).toMatchObject({ version: 1, failureCount: 1 });
      const renewed = certificateDetails(record.domain, { notAfter: NOW + 90 * DAY });
      expect(await store.certificates.saveCheck(check(current, { fingerprint: hex(32), details: renewed, failureCount: 0 }), [eventRecord(live, { certificateId: record.id })])).toBe(true);
      current = await claimAsStored();
      expect(current.details).toEqual(renewed);
      // Settings changed after the save.
      await store.certificates.saveCheck(check(current, {}), [], { detailsChanged: false });
      expect(await store.certificates.updateSettings(live, record.id, { name: "Renamed", tags: ["edge"], mutedUntil: NOW + DAY, updatedAt: at })).not.toBeNull();
      current = await claimAsStored();
      expect(current).toMatchObject({ name: "Renamed", tags: ["edge"], mutedUntil: NOW + DAY });
      // A stale save writes nothing and is not what the next claim hands out.
      const fresh = check(current, { failureCount: 5 });
      expect(await store.certificates.saveCheck(fresh, [], { detailsChanged: false })).toBe(true);
      expect(await store.certificates.saveCheck(check(current, { failureCount: 9 }), [], { detailsChanged: false })).toBe(false);
      current = await claimAsStored();
      expect(current.failureCount).toBe(5);
      // A next check moved by capNextChecks after the save.
      expect(await store.certificates.saveCheck(check(current, { lastCheckedAt: at - HOUR, nextCheckAt: at + DAY }), [], { detailsChanged: false })).toBe(true);
      expect(await store.certificates.capNextChecks(MINUTE)).toBe(1);
      current = await claimAsStored();
      expect(current.nextCheckAt).toBe(at - 2 * MINUTE - HOUR + MINUTE);
    });
  });
}
