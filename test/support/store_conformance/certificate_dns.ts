/**
 * The store conformance suite's part for what CONTRACT §22 added to a certificate: an smtp
 * certificate's mailDomain (a setting, kept by checks) and the DNS findings of its checks, with each
 * endpoint's DANE verdict.
 */
import { describe, expect, test } from "bun:test";
import type { CertificateRecord, DnsFindings } from "../../../core/base/records.ts";
import type { Store } from "../../../core/store/ports.ts";
import { HOUR } from "../../../core/base/time.ts";
import { certificateRecord, NOW } from "./factories.ts";
import { addCertificate, newOrganization } from "./_helpers.ts";

const FINDINGS: DnsFindings = {
  caaSets: [{ from: "mx1.example.net", setAt: "example.net", records: [{ flags: 0, tag: "issue", value: "digicert.com; validationmethods=dns-01" }] }],
  caa: {
    status: "forbidden",
    issuerDomain: "letsencrypt.org",
    blocking: { name: "mx1.example.net", setAt: "example.net", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com; validationmethods=dns-01"'], key: "5f1c" },
  },
  tlsa: { name: "_25._tcp.mx1.example.net", validated: true, records: [{ usage: 3, selector: 1, matchingType: 1, data: "ab".repeat(32) }] },
  mtaSts: { mailDomain: "example.net", id: "20260101T000000", policy: { mode: "enforce", mx: ["*.example.net"], maxAge: 86400 }, fetchedAt: NOW, mismatch: false },
};

function smtp(record: CertificateRecord): CertificateRecord {
  return { ...record, protocol: "smtp", port: 25 };
}

/** What a caller sees of a record: mailDomain and dns absent or null are the same "nothing". */
function seen(record: CertificateRecord | null | "duplicate") {
  if (record === null || record === "duplicate") return record;
  return { ...record, mailDomain: record.mailDomain ?? null, dns: record.dns ?? null };
}

export function describeCertificateDns(get: () => Store) {
  describe("certificates: mailDomain and DNS findings (CONTRACT §22)", () => {
    test("insert() and get() keep the mailDomain, the findings and each endpoint's DANE verdict exactly", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const base = smtp(certificateRecord(live));
      const record: CertificateRecord = {
        ...base,
        mailDomain: "example.net",
        dns: FINDINGS,
        endpoints: [{ address: "192.0.2.1", fingerprint: "fp", details: base.details, problem: null, failure: null, tls: null, dane: { status: "match", validated: true } }],
      };
      await addCertificate(store, record);
      expect(await store.certificates.get(live, record.id)).toEqual(record);
    });

    test("updateSettings() sets and clears the mailDomain; saveCheck() never writes it (it is a setting, like the name)", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, smtp(certificateRecord(live)));
      const set = await store.certificates.updateSettings(live, record.id, { mailDomain: "mail.example.org", updatedAt: NOW });
      expect(seen(set)).toEqual(seen({ ...record, mailDomain: "mail.example.org", updatedAt: NOW, version: 1 }));
      const checked = { ...(set as CertificateRecord), mailDomain: null, lastCheckedAt: NOW + HOUR };
      expect(await store.certificates.saveCheck(checked, [], { detailsChanged: false })).toBe(true);
      expect((await store.certificates.get(live, record.id))?.mailDomain).toBe("mail.example.org");
      const cleared = await store.certificates.updateSettings(live, record.id, { mailDomain: null, updatedAt: NOW + 2 });
      expect((cleared as CertificateRecord).mailDomain ?? null).toBeNull();
      expect((await store.certificates.get(live, record.id))?.mailDomain ?? null).toBeNull();
    });

    test("saveCheck() with changed details writes the findings; without, leaves them", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, smtp(certificateRecord(live)));
      const checked = { ...record, dns: FINDINGS, lastCheckedAt: NOW + HOUR };
      expect(await store.certificates.saveCheck(checked, [], { detailsChanged: true })).toBe(true);
      expect((await store.certificates.get(live, record.id))?.dns).toEqual(FINDINGS);
      const unchanged = { ...checked, version: 1, lastCheckedAt: NOW + 2 * HOUR };
      expect(await store.certificates.saveCheck(unchanged, [], { detailsChanged: false })).toBe(true);
      expect((await store.certificates.get(live, record.id))?.dns).toEqual(FINDINGS);
    });
  });
}
