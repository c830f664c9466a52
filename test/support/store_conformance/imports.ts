/** The store conformance suite's part for imports: items, leases, and settling each item once. */
import { describe, expect, test } from "bun:test";
import type { ImportItemOutcome, Store } from "../../../core/store/ports.ts";
import type { CertificateRecord, ImportRecord, Scope } from "../../../core/base/records.ts";
import { newId } from "../../../core/base/ids.ts";
import { DAY, HOUR } from "../../../core/base/time.ts";
import { certificateRecord, NOW } from "./factories.ts";
import { addCertificate, newOrganization, PARKED } from "./_helpers.ts";

function importRecord(scope: Scope, overrides: Partial<ImportRecord> = {}): ImportRecord {
  return {
    ...scope,
    id: newId("imp"),
    certificateLimit: 100,
    status: "running",
    total: 3,
    processed: 0,
    created: 0,
    failed: 0,
    createdAt: NOW,
    finishedAt: null,
    ...overrides,
  };
}

/** Running imports allowed at once where a test is not about that bound. */
const ANY = 1_000;
const DUP = { code: "duplicate_domain", message: "taken" };
const FULL = { code: "certificate_limit_reached", message: "full" };

function create(scope: Scope, index: number, domain = `${newId("imp").slice(4).toLowerCase()}.example.com`): ImportItemOutcome {
  return { index, kind: "create", record: certificateRecord(scope, { domain }), events: [], duplicate: DUP, limitReached: FULL };
}

/**
 * The organization's certificate limit set to the import's: settle() judges the organization's limit
 * as it is when the outcomes are written (an operator may change it while an import runs).
 */
async function limitOf(store: Store, scope: Scope, certificates: number): Promise<void> {
  const org = await store.organizations.get(scope.organizationId);
  await store.organizations.update(scope.organizationId, { limits: { ...org!.limits, certificates } });
}

/** Leases this test's import only: other tests' imports are parked first. */
async function claimOnly(store: Store, id: string, owner: string, now: number, leaseUntil: number) {
  const claimed = await store.imports.claim({ owner, now, leaseUntil, limit: 1000 });
  for (const other of claimed) if (other.id !== id) await store.imports.renew(other.id, owner, PARKED);
  return claimed.filter((record) => record.id === id);
}

export function describeImports(get: () => Store) {
  describe("imports", () => {
    test("create() stores the import and its items; get() sees only its scope; pending() pages by index", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const record = importRecord(live);
      await store.imports.create(record, ['{"domain":"a.com"}', '{"domain":"b.com"}', '{"__proto__":1}'], ANY);
      expect(await store.imports.get(live, record.id)).toEqual(record);
      expect(await store.imports.get(testScope, record.id)).toBeNull();
      expect(await store.imports.pending(record.id, { afterIndex: -1, limit: 2 })).toEqual([
        { index: 0, body: '{"domain":"a.com"}' },
        { index: 1, body: '{"domain":"b.com"}' },
      ]);
      expect(await store.imports.pending(record.id, { afterIndex: 1, limit: 2 })).toEqual([{ index: 2, body: '{"__proto__":1}' }]);
      expect(await store.imports.results(record.id)).toEqual([]);
    });

    test("create() stores nothing and answers false when the organization's mode already runs that many; a finished one frees its place", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const { live: elsewhere } = await newOrganization(store);
      const first = importRecord(live, { total: 1 });
      expect(await store.imports.create(first, ["{}"], 2)).toBe(true);
      expect(await store.imports.create(importRecord(live), ["{}"], 2)).toBe(true);
      const refused = importRecord(live);
      expect(await store.imports.create(refused, ["{}"], 2)).toBe(false);
      expect(await store.imports.get(live, refused.id)).toBeNull();
      expect(await store.imports.pending(refused.id, { afterIndex: -1, limit: 10 })).toEqual([]);
      // The other mode's count is its own (CONTRACT §3: live and test keys see separate data), and so
      // is another organization's.
      expect(await store.imports.create(importRecord(testScope), ["{}"], 2)).toBe(true);
      expect(await store.imports.create(importRecord(testScope), ["{}"], 2)).toBe(true);
      expect(await store.imports.create(importRecord(testScope), ["{}"], 2)).toBe(false);
      expect(await store.imports.create(importRecord(elsewhere), ["{}"], 2)).toBe(true);
      // Two at once for the last place: one stored.
      const racing = [importRecord(live), importRecord(live)];
      expect(await claimOnly(store, first.id, "A", NOW, NOW + 100)).toHaveLength(1);
      expect(await store.imports.settle(first.id, "A", [{ index: 0, kind: "failed", error: DUP }], NOW + 1)).toEqual([]);
      expect((await store.imports.get(live, first.id))?.status).toBe("finished");
      const answers = await Promise.all(racing.map((record) => store.imports.create(record, ["{}"], 2)));
      expect(answers.sort()).toEqual([false, true]);
    });

    test("claim() takes an import whose lease ends later than `latest` (taken on a clock since set back by a process since gone)", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const t = PARKED - 1000;
      const record = importRecord(live);
      await store.imports.create(record, ["{}"], ANY);
      // Leased a day ahead of the clock now.
      expect((await claimOnly(store, record.id, "ahead", t, t + DAY)).map((r) => r.id)).toEqual([record.id]);
      // (Other tests' imports, parked beyond `latest` here, are parked again.)
      const ours = async (latest?: number) => {
        const claimed = await store.imports.claim({ owner: "B", now: t + 1, leaseUntil: t + 100, limit: 1000, ...(latest === undefined ? {} : { latest }) });
        for (const other of claimed) if (other.id !== record.id) await store.imports.renew(other.id, "B", PARKED);
        return claimed.map((r) => r.id).filter((id) => id === record.id);
      };
      expect(await ours()).toEqual([]);
      expect(await ours(t + 1 + HOUR)).toEqual([record.id]);
      // Now B's, within `latest`: held.
      expect(await ours(t + 2 + HOUR)).toEqual([]);
      await store.imports.renew(record.id, "B", PARKED);
    });

    test("claim() takes the import whose lease ran out first first: new ones in order of creation, then the one given up longest ago", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const first = importRecord(live, { createdAt: NOW });
      const second = importRecord(live, { createdAt: NOW + 1 });
      await store.imports.create(first, ["{}"], ANY);
      await store.imports.create(second, ["{}"], ANY);
      const ours = (claimed: ImportRecord[]) => claimed.map((r) => r.id).filter((id) => id === first.id || id === second.id);
      const t = PARKED - 1000;
      const claim = async (now: number) => {
        const claimed = await store.imports.claim({ owner: "A", now, leaseUntil: now + 100, limit: 1000 });
        for (const other of claimed) if (other.id !== first.id && other.id !== second.id) await store.imports.renew(other.id, "A", PARKED);
        return ours(claimed);
      };
      expect(await claim(t)).toEqual([first.id, second.id]);
      // The first given up after the second: the second's turn comes first.
      await store.imports.renew(second.id, "A", t + 1);
      await store.imports.renew(first.id, "A", t + 2);
      expect(await claim(t + 3)).toEqual([second.id, first.id]);
      for (const record of [first, second]) await store.imports.renew(record.id, "A", PARKED);
    });

    test("claim() lets organizations take turns: one with an import under way waits behind another's new import", async () => {
      const store = get();
      const { live: a } = await newOrganization(store);
      const { live: b } = await newOrganization(store);
      const t = PARKED - 1000;
      const underWay = importRecord(a, { createdAt: NOW });
      const waiting = importRecord(a, { createdAt: NOW + 1 });
      const other = importRecord(b, { createdAt: NOW + 2 });
      await store.imports.create(underWay, ["{}"], ANY);
      expect((await claimOnly(store, underWay.id, "A", t, t + 100)).map((r) => r.id)).toEqual([underWay.id]);
      await store.imports.create(waiting, ["{}"], ANY);
      await store.imports.create(other, ["{}"], ANY);
      const claimed = await store.imports.claim({ owner: "B", now: t + 1, leaseUntil: t + 50, limit: 1000 });
      for (const record of claimed) if (![waiting.id, other.id].includes(record.id)) await store.imports.renew(record.id, "B", PARKED);
      // b has nothing under way: its import first, though created after a's.
      expect(claimed.map((r) => r.id).filter((id) => id === waiting.id || id === other.id)).toEqual([other.id, waiting.id]);
      for (const [record, owner] of [[underWay, "A"], [waiting, "B"], [other, "B"]] as const) await store.imports.renew(record.id, owner, PARKED);
    });

    test("trim() deletes a scope's finished imports but its last ones, with their items; running ones and the other mode's stay", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const { live: elsewhere } = await newOrganization(store);
      const finished: ImportRecord[] = [];
      for (let i = 0; i < 4; i++) {
        const record = importRecord(live, { total: 1 });
        await store.imports.create(record, ["{}"], ANY);
        finished.push(record);
      }
      // The test mode's finished imports: never the live mode's trim to make (CONTRACT §3).
      const otherMode = importRecord(testScope, { total: 1 });
      await store.imports.create(otherMode, ["{}"], ANY);
      const running = importRecord(live, { total: 1 });
      await store.imports.create(running, ["{}"], ANY);
      const theirs = importRecord(elsewhere, { total: 1 });
      await store.imports.create(theirs, ["{}"], ANY);
      // Leased (with any other test's import left claimable, parked), then finished one after another.
      const claimed = (await store.imports.claim({ owner: "A", now: NOW, leaseUntil: PARKED, limit: 1000 })).map((record) => record.id);
      for (const record of [...finished, running, theirs]) expect(claimed).toContain(record.id);
      expect(await store.imports.settle(otherMode.id, "A", [{ index: 0, kind: "failed", error: DUP }], NOW - 1)).toEqual([]);
      for (const [i, record] of finished.entries()) {
        expect(await store.imports.settle(record.id, "A", [{ index: 0, kind: "failed", error: DUP }], NOW + i)).toEqual([]);
      }
      expect(await store.imports.trim(live, 2)).toBe(2);
      const scopeOf = (record: ImportRecord) => ({ organizationId: record.organizationId, mode: record.mode });
      const left = await Promise.all(finished.map((record) => store.imports.get(scopeOf(record), record.id)));
      expect(left.map((record) => record !== null)).toEqual([false, false, true, true]);
      expect(await store.imports.results(finished[0]!.id)).toEqual([]);
      expect(await store.imports.get(live, running.id)).not.toBeNull();
      expect(await store.imports.get(elsewhere, theirs.id)).not.toBeNull();
      expect(await store.imports.get(testScope, otherMode.id)).not.toBeNull();
      expect(await store.imports.trim(live, 2)).toBe(0);
      expect(await store.imports.trim(testScope, 1)).toBe(0);
    });

    test("claim() leases a running import to one owner until its lease runs out; renew() keeps it; the other takes it after", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = importRecord(live);
      await store.imports.create(record, ["{}", "{}", "{}"], ANY);
      const t = PARKED - 1000;
      expect((await claimOnly(store, record.id, "A", t, t + 10)).map((r) => r.id)).toEqual([record.id]);
      expect(await claimOnly(store, record.id, "B", t + 5, t + 15)).toEqual([]);
      expect(await store.imports.renew(record.id, "A", t + 20)).toBe(true);
      expect(await claimOnly(store, record.id, "B", t + 15, t + 25)).toEqual([]);
      expect((await claimOnly(store, record.id, "B", t + 20, t + 30)).map((r) => r.id)).toEqual([record.id]);
      expect(await store.imports.renew(record.id, "A", t + 40)).toBe(false);
      expect(await store.imports.settle(record.id, "A", [{ index: 0, kind: "failed", error: DUP }], t)).toBe(false);
      expect(await store.imports.pending(record.id, { afterIndex: -1, limit: 10 })).toHaveLength(3);
    });

    test("settle(): a failed retrieval fails as a duplicate when its target is taken, as over the limit when full, else as itself", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      await addCertificate(store, certificateRecord(live, { domain: "taken.example.com" }));
      const record = importRecord(live, { total: 3, certificateLimit: 2 });
      await limitOf(store, live, 2);
      await store.imports.create(record, ["{}", "{}", "{}"], ANY);
      await claimOnly(store, record.id, "A", PARKED - 1000, PARKED - 500);
      const none = { code: "certificate_not_found", message: "none" };
      const blocked = (domain: string) => ({ target: { domain, port: 443 }, duplicate: DUP, limitReached: FULL });
      const outcomes: ImportItemOutcome[] = [
        { index: 0, kind: "failed", error: none, unlessBlocked: blocked("free.example.com") },
        { index: 1, kind: "failed", error: none, unlessBlocked: blocked("taken.example.com") },
        create(live, 2),
      ];
      expect(await store.imports.settle(record.id, "A", outcomes, NOW)).toEqual([(outcomes[2] as Extract<ImportItemOutcome, { kind: "create" }>).record.id]);
      expect((await store.imports.results(record.id)).map((r) => r.error?.code ?? r.status)).toEqual(["certificate_not_found", "duplicate_domain", "created"]);
    });

    test("settle(): a failed retrieval is a duplicate only of the same target: domain, port, protocol and connection address", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      await addCertificate(store, certificateRecord(live, { domain: "pinned.example.com", connectTo: "192.0.2.7" }));
      const record = importRecord(live, { total: 4 });
      await store.imports.create(record, ["{}", "{}", "{}", "{}"], ANY);
      await claimOnly(store, record.id, "A", PARKED - 1000, PARKED - 500);
      const none = { code: "certificate_not_found", message: "none" };
      const failed = (index: number, target: { domain: string; port: number; protocol?: "smtp"; connectTo?: string }): ImportItemOutcome => ({
        index,
        kind: "failed",
        error: none,
        unlessBlocked: { target, duplicate: DUP, limitReached: FULL },
      });
      const outcomes: ImportItemOutcome[] = [
        failed(0, { domain: "pinned.example.com", port: 443 }), // stored only with another connection address
        failed(1, { domain: "pinned.example.com", port: 443, connectTo: "192.0.2.7" }),
        { ...(create(live, 2, "mail.example.com") as Extract<ImportItemOutcome, { kind: "create" }>), record: certificateRecord(live, { domain: "mail.example.com", port: 25, protocol: "smtp" }) },
        failed(3, { domain: "mail.example.com", port: 25 }), // TLS from the first byte: not the SMTP target just added
      ];
      expect(await store.imports.settle(record.id, "A", outcomes, NOW)).toEqual([(outcomes[2] as Extract<ImportItemOutcome, { kind: "create" }>).record.id]);
      expect((await store.imports.results(record.id)).map((r) => r.error?.code ?? r.status)).toEqual(["certificate_not_found", "duplicate_domain", "created", "certificate_not_found"]);
    });

    test("settle() creates certificates, settles each item once, keeps limits in order and finishes the import", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      await addCertificate(store, certificateRecord(live, { domain: "taken.example.com" }));
      const record = importRecord(live, { total: 5, certificateLimit: 3 });
      await limitOf(store, live, 3);
      await store.imports.create(record, ["{}", "{}", "{}", "{}", "{}"], ANY);
      await claimOnly(store, record.id, "A", PARKED - 1000, PARKED - 500);
      const first = create(live, 0);
      expect(await store.imports.settle(record.id, "A", [first, create(live, 1, "taken.example.com")], NOW)).toEqual([(first as Extract<ImportItemOutcome, { kind: "create" }>).record.id]);
      // Settled again (a process that lost its lease and came back): left alone, nothing created twice.
      expect(await store.imports.settle(record.id, "A", [{ ...create(live, 0), index: 0 }], NOW)).toEqual([]);
      expect(await store.imports.get(live, record.id)).toMatchObject({ status: "running", processed: 2, created: 1, failed: 1 });
      const unreachable = { code: "certificate_not_found", message: "none" };
      expect(
        await store.imports.settle(
          record.id,
          "A",
          [create(live, 2), { index: 3, kind: "failed", error: unreachable, unlessBlocked: { target: { domain: "free.example.com", port: 443 }, duplicate: DUP, limitReached: FULL } }, create(live, 4)],
          NOW + 1,
        ),
      ).toHaveLength(1);
      expect(await store.imports.get(live, record.id)).toEqual({ ...record, status: "finished", processed: 5, created: 2, failed: 3, finishedAt: NOW + 1 });
      expect(await store.imports.results(record.id)).toEqual([
        { index: 0, status: "created", certificateId: first.kind === "create" ? first.record.id : "", error: null },
        { index: 1, status: "failed", certificateId: null, error: DUP },
        { index: 2, status: "created", certificateId: expect.stringMatching(/^cert_/), error: null },
        { index: 3, status: "failed", certificateId: null, error: FULL },
        { index: 4, status: "failed", certificateId: null, error: FULL },
      ]);
      expect(await store.certificates.count(live)).toBe(3);
      expect(await store.imports.claim({ owner: "B", now: PARKED, leaseUntil: PARKED, limit: 1000 }).then((all) => all.map((r) => r.id))).not.toContain(record.id);
    });

    test("settle() of one large batch judges in item order against what the batch itself added: duplicates, other protocols, tags, the limit", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const LARGE = 450; // more rows than one statement carries
      const record = importRecord(live, { total: LARGE + 6, certificateLimit: LARGE + 2 });
      await limitOf(store, live, LARGE + 2);
      await store.imports.create(record, Array.from({ length: LARGE + 6 }, () => "{}"), ANY);
      await claimOnly(store, record.id, "A", PARKED - 1000, PARKED - 500);
      const tagged = (index: number, domain: string, overrides: Partial<CertificateRecord> = {}): ImportItemOutcome => ({
        ...(create(live, index, domain) as Extract<ImportItemOutcome, { kind: "create" }>),
        record: certificateRecord(live, { domain, tags: [`batch:${index % 3}`], ...overrides }),
      });
      const unreachable = { code: "certificate_not_found", message: "none" };
      const outcomes: ImportItemOutcome[] = [
        ...Array.from({ length: LARGE }, (_, i) => tagged(i, `n${i}.batch.example.com`)),
        tagged(LARGE, "n7.batch.example.com"), // the same target as item 7, added by this very batch
        tagged(LARGE + 1, "n7.batch.example.com", { protocol: "smtp", port: 25 }), // another target on the same name
        { index: LARGE + 2, kind: "failed", error: unreachable, unlessBlocked: { target: { domain: "n8.batch.example.com", port: 443 }, duplicate: DUP, limitReached: FULL } },
        tagged(LARGE + 3, "last.batch.example.com"),
        tagged(LARGE + 4, "over.batch.example.com"),
        tagged(LARGE + 5, "n9.batch.example.com"), // taken, the plan full: a duplicate, as POST answers
      ];
      expect(await store.imports.settle(record.id, "A", outcomes, NOW)).not.toBe(false);
      const results = await store.imports.results(record.id);
      expect(results.slice(0, LARGE).every((r) => r.status === "created")).toBe(true);
      expect(results.slice(LARGE).map((r) => r.error?.code ?? r.status)).toEqual(["duplicate_domain", "created", "duplicate_domain", "created", "certificate_limit_reached", "duplicate_domain"]);
      expect(await store.imports.get(live, record.id)).toMatchObject({ status: "finished", created: LARGE + 2, failed: 4 });
      expect(await store.certificates.count(live)).toBe(LARGE + 2);
      // Every created certificate is found by its tag, as one added through the API is.
      const byTag = await store.certificates.list(live, { limit: 1000, tags: ["batch:1"], now: NOW });
      expect(byTag).toHaveLength(outcomes.filter((o, i) => o.kind === "create" && i % 3 === 1 && results[i]!.status === "created").length);
      expect(byTag.map((c) => c.id).sort()).toEqual(results.flatMap((r, i) => (i % 3 === 1 && r.certificateId ? [r.certificateId] : [])).sort());
    });

    test("prune() deletes imports finished before a time, with their items; running ones never", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const past = NOW - 1000 * 86_400_000;
      const old = importRecord(live, { total: 1 });
      const running = importRecord(live, { total: 1, createdAt: past - 10 });
      await store.imports.create(old, ["{}"], ANY);
      await store.imports.create(running, ["{}"], ANY);
      await claimOnly(store, old.id, "A", PARKED - 1000, PARKED - 500);
      expect(await store.imports.settle(old.id, "A", [{ index: 0, kind: "failed", error: DUP }], past - 5)).toEqual([]);
      expect(await store.imports.prune({ before: past - 5, limit: 10 })).toBe(0);
      expect(await store.imports.prune({ before: past, limit: 10 })).toBe(1);
      expect(await store.imports.get(live, old.id)).toBeNull();
      expect(await store.imports.results(old.id)).toEqual([]);
      expect(await store.imports.get(live, running.id)).not.toBeNull();
    });
  });
}
