/** The store conformance suite's part for reading certificates: list (filters, paging) and listAll. */
import { describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import { certificateStatus, CERTIFICATE_STATUSES, type CertificateStatus } from "../../../core/certificates/status.ts";
import type { CertificateRecord, RevocationState } from "../../../core/base/records.ts";
import { randomBase62 } from "../../../core/base/ids.ts";
import { DAY, HOUR } from "../../../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./factories.ts";
import { addCertificate, byExpiry, ids, newOrganization, sortedIds } from "./_helpers.ts";

export function describeCertificateReads(get: () => Store) {
  describe("certificates: list and listAll", () => {
    test("list() orders by notAfter, then id, and returns at most `limit`", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const records: CertificateRecord[] = [];
      for (const days of [50, 10, 30, 10, 10, 70, 30]) records.push(await addCertificate(store, certificateRecord(live, { notAfter: NOW + days * DAY })));
      const expected = [...records].sort(byExpiry);
      expect(await store.certificates.list(live, { limit: 100, now: NOW })).toEqual(expected);
      expect(ids(await store.certificates.list(live, { limit: 3, now: NOW }))).toEqual(ids(expected.slice(0, 3)));
    });

    test("list() pages by `after` without skipping or repeating while certificates come and go between pages", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const model = new Map<string, CertificateRecord>();
      const add = async (notAfter: number) => {
        const record = await addCertificate(store, certificateRecord(live, { notAfter }));
        model.set(record.id, record);
      };
      const drop = async (record: CertificateRecord | undefined) => {
        if (!record) return;
        expect(await store.certificates.remove(live, record.id, NOW)).toBe(true);
        model.delete(record.id);
      };
      for (const days of [5, 5, 5, 9, 12, 12, 20, 20, 20, 20, 31, 40]) await add(NOW + days * DAY);
      const isAfter = (r: CertificateRecord, c: { notAfter: number; id: string }) =>
        r.details.notAfter > c.notAfter || (r.details.notAfter === c.notAfter && r.id > c.id);
      const presentThroughout = new Set(model.keys());

      const seen: string[] = [];
      let cursor: { notAfter: number; id: string } | undefined;
      for (let page = 0; page < 30; page++) {
        const items = await store.certificates.list(live, { limit: 4, now: NOW, ...(cursor ? { after: cursor } : {}) });
        const expected = [...model.values()].filter((r) => !cursor || isAfter(r, cursor)).sort(byExpiry).slice(0, 4);
        expect(ids(items)).toEqual(ids(expected));
        seen.push(...ids(items));
        if (items.length < 4) break;
        const last = items.at(-1)!;
        cursor = { notAfter: last.details.notAfter, id: last.id };
        // Between pages: one added ahead, one behind, one on the cursor's own notAfter; one not yet
        // seen and one already seen removed.
        await add(cursor.notAfter + DAY);
        await add(cursor.notAfter - DAY);
        await add(cursor.notAfter);
        const ahead = [...model.values()].filter((r) => isAfter(r, cursor!)).sort(byExpiry)[0];
        const behind = seen.map((id) => model.get(id)).find(Boolean);
        for (const gone of [ahead, behind]) if (gone) presentThroughout.delete(gone.id);
        await drop(ahead);
        await drop(behind);
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of presentThroughout) expect(seen).toContain(id);
    });

    test("list() with `statuses` returns exactly the certificates certificateStatus() puts in them", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const cases: Array<Parameters<typeof certificateRecord>[1]> = [
        { notAfter: NOW - 1 }, // expired a moment ago
        { notAfter: NOW }, // its last instant: expiring, not expired
        { notAfter: NOW - DAY, failure: "timeout" }, // expired wins over unreachable
        { failure: "dns_error", notAfter: NOW + 90 * DAY },
        { failure: "connection_refused", problem: "untrusted_issuer" }, // unreachable wins over invalid
        { problem: "self_signed" },
        { problem: "hostname_mismatch", notAfter: NOW + 5 * DAY }, // invalid wins over expiring
        { notBefore: NOW + 1, notAfter: NOW + 300 * DAY }, // not yet valid
        { notBefore: NOW + 1, notAfter: NOW + 10 * DAY }, // not yet valid wins over expiring
        { notBefore: NOW, notAfter: NOW + 300 * DAY }, // valid from this instant
        { alertThresholds: [30, 14, 7], notAfter: NOW + 20 * DAY },
        { alertThresholds: [60, 7], notAfter: NOW + 61 * DAY - 1 }, // 60 days left: the largest threshold
        { alertThresholds: [60, 7], notAfter: NOW + 61 * DAY }, // 61 days left
        { alertThresholds: [], notAfter: NOW + 31 * DAY - 1 }, // 30 days left, no thresholds: expiring
        { alertThresholds: [], notAfter: NOW + 31 * DAY }, // 31 days left, no thresholds: valid
        { alertThresholds: [10], notAfter: NOW + 25 * DAY },
        { alertThresholds: [0], notAfter: NOW + DAY - 1 },
        { notAfter: NOW + 200 * DAY },
        { revocation: REVOKED, notAfter: NOW + 90 * DAY },
        { revocation: REVOKED, notAfter: NOW - 1 }, // expired wins over revoked
        { revocation: REVOKED, failure: "timeout", problem: "untrusted_issuer" }, // revoked wins over unreachable
        { revocation: { ...REVOKED, status: "good", revokedAt: null, reason: null }, notAfter: NOW + 200 * DAY },
      ];
      const records: CertificateRecord[] = [];
      for (const overrides of cases) records.push(await addCertificate(store, certificateRecord(live, overrides)));

      for (const now of [NOW, NOW + 45 * DAY]) {
        const statusOf = new Map(records.map((r) => [r.id, certificateStatus(r, now).status]));
        if (now === NOW) expect(new Set(statusOf.values())).toEqual(new Set(CERTIFICATE_STATUSES));
        const filters: CertificateStatus[][] = [...CERTIFICATE_STATUSES.map((s) => [s]), ["expired", "valid"], [...CERTIFICATE_STATUSES]];
        for (const statuses of filters) {
          const listed = await store.certificates.list(live, { limit: 100, now, statuses });
          const expected = records.filter((r) => statuses.includes(statusOf.get(r.id)!)).sort(byExpiry);
          expect({ statuses, ids: ids(listed) }).toEqual({ statuses, ids: ids(expected) });
        }
      }
    });

    test("summarize() counts what list() with each status holds, and expiries per window, in the scope only", async () => {
      const store = get();
      const { live, test: testScope } = await newOrganization(store);
      const WEEK = 7 * DAY;
      const cases: Array<Parameters<typeof certificateRecord>[1]> = [
        { notAfter: NOW - DAY }, // expired: in no window
        { notAfter: NOW }, // window 0, its first instant
        { notAfter: NOW + WEEK - 1 }, // window 0, its last instant
        { notAfter: NOW + WEEK }, // window 1
        { notAfter: NOW + 3 * WEEK, problem: "self_signed" },
        { notAfter: NOW + 3 * WEEK + DAY, failure: "timeout" },
        { notAfter: NOW + 12 * WEEK - 1 }, // window 11
        { notAfter: NOW + 12 * WEEK }, // past the last window
        { notAfter: NOW + 300 * DAY },
      ];
      const records: CertificateRecord[] = [];
      for (const overrides of cases) records.push(await addCertificate(store, certificateRecord(live, overrides)));
      await addCertificate(store, certificateRecord(testScope, { notAfter: NOW + 2 * DAY }));

      const summary = await store.certificates.summarize(live, { now: NOW, from: NOW, bucketMs: WEEK, buckets: 12 });
      const expectedStatus: Record<string, number> = {};
      for (const status of CERTIFICATE_STATUSES) {
        const n = (await store.certificates.list(live, { limit: 100, now: NOW, statuses: [status] })).length;
        if (n > 0) expectedStatus[status] = n;
      }
      expect(Object.fromEntries(Object.entries(summary.byStatus).filter(([, n]) => n! > 0))).toEqual(expectedStatus);
      expect(summary.expiring).toEqual([2, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1]);
      expect(await store.certificates.summarize(testScope, { now: NOW, from: NOW, bucketMs: WEEK, buckets: 12 })).toEqual({
        byStatus: { expiring: 1 },
        byRenewal: { overdue: 1 },
        expiring: [1, ...new Array(11).fill(0)],
      });
      // A certificate removed is counted nowhere, and listed under no status.
      const removed = records[4]!;
      expect(await store.certificates.remove(live, removed.id, NOW)).toBe(true);
      const after = await store.certificates.summarize(live, { now: NOW, from: NOW, bucketMs: WEEK, buckets: 12 });
      const status = certificateStatus(removed, NOW).status;
      expect(after.byStatus[status] ?? 0).toBe(summary.byStatus[status]! - 1);
      expect(ids(await store.certificates.list(live, { limit: 100, now: NOW, statuses: [status] }))).not.toContain(removed.id);
    });

    test("list() statuses follow updateSettings()' thresholds and saveCheck()'s details", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live, { alertThresholds: [10], notAfter: NOW + 25 * DAY }));
      const expiring = { limit: 10, now: NOW, statuses: ["expiring"] as CertificateStatus[] };
      expect(await store.certificates.list(live, expiring)).toEqual([]);
      const updated = (await store.certificates.updateSettings(live, record.id, { alertThresholds: [30], updatedAt: NOW })) as CertificateRecord | null;
      expect(ids(await store.certificates.list(live, expiring))).toEqual([record.id]);
      await store.certificates.updateSettings(live, record.id, { alertThresholds: [], updatedAt: NOW });
      expect(ids(await store.certificates.list(live, expiring))).toEqual([record.id]);
      await store.certificates.updateSettings(live, record.id, { alertThresholds: [20], updatedAt: NOW });
      expect(await store.certificates.list(live, expiring)).toEqual([]);

      const current = (await store.certificates.get(live, record.id))!;
      expect(current.version).toBe(updated!.version + 2);
      const checked = { ...current, details: certificateDetails(record.domain, { notAfter: NOW - HOUR }), lastCheckedAt: NOW };
      expect(await store.certificates.saveCheck(checked, [])).toBe(true);
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, statuses: ["expired"] }))).toEqual([record.id]);
    });

    test("list() with domainContains keeps the domains containing it, with other filters and paging", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const tag = randomBase62(6).toLowerCase();
      const shop = await addCertificate(store, certificateRecord(live, { domain: `shop.${tag}.com`, notAfter: NOW + 40 * DAY }));
      const api = await addCertificate(store, certificateRecord(live, { domain: `api.${tag}.com`, notAfter: NOW + 20 * DAY }));
      const blog = await addCertificate(store, certificateRecord(live, { domain: `blog.${tag}.org`, notAfter: NOW - DAY }));
      await addCertificate(store, certificateRecord(live, { domain: "unrelated.net" }));
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: tag }))).toEqual(ids([blog, api, shop]));
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: `${tag}.com` }))).toEqual(ids([api, shop]));
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: "shop." }))).toEqual(ids([shop]));
      expect(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: `${tag}.io` })).toEqual([]);
      expect(
        ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: tag, statuses: ["expiring", "valid"] })),
      ).toEqual(ids([api, shop]));
      const after = { notAfter: api.details.notAfter, id: api.id };
      expect(ids(await store.certificates.list(live, { limit: 10, now: NOW, domainContains: tag, after }))).toEqual(ids([shop]));
    });

    test("listAll() pages through every organization's certificates by id", async () => {
      const store = get();
      const a = await newOrganization(store);
      const b = await newOrganization(store);
      const ours: CertificateRecord[] = [];
      for (const scope of [a.live, a.test, b.live, b.test, a.live]) ours.push(await addCertificate(store, certificateRecord(scope)));
      const all: CertificateRecord[] = [];
      let afterId: string | undefined;
      for (;;) {
        const page = await store.certificates.listAll({ limit: 3, ...(afterId ? { afterId } : {}) });
        expect(page.length).toBeLessThanOrEqual(3);
        all.push(...page);
        if (page.length < 3) break;
        afterId = page.at(-1)!.id;
      }
      expect(ids(all)).toEqual(sortedIds(all));
      expect(new Set(ids(all)).size).toBe(all.length);
      const byId = new Map(all.map((r) => [r.id, r]));
      for (const record of ours) expect(byId.get(record.id)).toEqual(record);
    });
  });
}

const REVOKED: RevocationState = {
  status: "revoked",
  source: "ocsp",
  checkedAt: NOW - DAY,
  revokedAt: NOW - 2 * DAY,
  reason: "keyCompromise",
  validUntil: NOW + DAY,
};
