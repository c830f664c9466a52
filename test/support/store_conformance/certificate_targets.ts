/**
 * The store conformance suite's part for what CONTRACT §11-§13 added to a certificate: protocol and
 * connectTo (part of its identity), every endpoint, the connection, and the alert memory.
 */
import { describe, expect, test } from "bun:test";
import type { CertificateRecord } from "../../../core/base/records.ts";
import { targetKey, type Store } from "../../../core/store/ports.ts";
import { HOUR } from "../../../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./factories.ts";
import { addCertificate, newOrganization } from "./_helpers.ts";

function withEndpoints(record: CertificateRecord): CertificateRecord {
  const stale = certificateDetails(record.domain, { notAfter: NOW + 10 * 24 * HOUR });
  return {
    ...record,
    protocol: "smtp",
    port: 25,
    connectTo: "2001:db8::25",
    tls: { protocol: "TLSv1.1", cipher: "ECDHE-RSA-AES128-SHA" },
    endpoints: [
      { address: "192.0.2.1", fingerprint: "fp-a", details: record.details, problem: null, failure: null, tls: { protocol: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256" } },
      { address: "192.0.2.2", fingerprint: "fp-b", details: stale, problem: "hostname_mismatch", failure: null, tls: record.tls },
      { address: "2001:db8::1", fingerprint: null, details: null, problem: null, failure: "starttls_refused", tls: null },
    ],
    alertMemory: {
      leaves: [{ key: "0A:1B@1", notAfter: 1, alertedThreshold: 7, expiryAlerted: true, chainExpiry: null }],
      chain: [{ serial: "0C:1D", alertedThreshold: 14 }],
    },
  };
}

export function describeCertificateTargets(get: () => Store) {
  describe("certificates: protocol, connectTo, endpoints", () => {
    test("insert() and get() keep protocol, connectTo, endpoints, the connection and the alert memory exactly", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = withEndpoints(certificateRecord(live));
      await addCertificate(store, record);
      expect(await store.certificates.get(live, record.id)).toEqual(record);
      expect(await store.certificates.findByDomain(live, record)).toEqual(record);
    });

    test("a target is domain, port, protocol and connectTo together: any one different is another certificate", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const first = await addCertificate(store, certificateRecord(live));
      await addCertificate(store, certificateRecord(live, { domain: first.domain, connectTo: "192.0.2.7" }));
      await addCertificate(store, certificateRecord(live, { domain: first.domain, protocol: "imap" }));
      await addCertificate(store, certificateRecord(live, { domain: first.domain, protocol: "imap", connectTo: "192.0.2.7" }));
      for (const overrides of [{}, { connectTo: "192.0.2.7" }, { protocol: "imap" as const }]) {
        expect(await store.certificates.insert(certificateRecord(live, { domain: first.domain, ...overrides }), { limit: 10, events: [] })).toBe("duplicate");
      }
      expect(await store.certificates.count(live)).toBe(4);
      expect((await store.certificates.findByDomain(live, { ...first, connectTo: "192.0.2.7" }))?.connectTo).toBe("192.0.2.7");
      expect(await store.certificates.findByDomain(live, { ...first, connectTo: "192.0.2.8" })).toBeNull();
    });

    test("existing() names the targets monitored in the scope, whole: domain, port, protocol and connectTo", async () => {
      const store = get();
      const { live, test: other } = await newOrganization(store);
      const pinned = await addCertificate(store, certificateRecord(live, { connectTo: "192.0.2.7" }));
      const mail = await addCertificate(store, certificateRecord(live, { protocol: "smtp", port: 25 }));
      const asked = [
        { domain: pinned.domain, port: pinned.port },
        { domain: pinned.domain, port: pinned.port, connectTo: "192.0.2.7" },
        { domain: mail.domain, port: 25 },
        { domain: mail.domain, port: 25, protocol: "smtp" as const },
      ];
      expect([...(await store.certificates.existing(live, asked))].sort()).toEqual([targetKey(asked[1]!), targetKey(asked[3]!)].sort());
      expect(await store.certificates.existing(other, asked)).toEqual(new Set());
    });

    test("updateSettings() with a connectTo changes it and makes the certificate due; null goes back to the domain", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live, { nextCheckAt: NOW + 6 * HOUR }));
      const moved = await store.certificates.updateSettings(live, record.id, { connectTo: "lb-4.example.net", updatedAt: NOW });
      expect(moved).toEqual({ ...record, connectTo: "lb-4.example.net", updatedAt: NOW, nextCheckAt: NOW, version: 1 });
      const back = await store.certificates.updateSettings(live, record.id, { connectTo: null, updatedAt: NOW + 1 });
      expect(back).toEqual({ ...record, connectTo: null, updatedAt: NOW + 1, nextCheckAt: NOW, version: 2 });
    });

    test("updateSettings() to the target of another certificate is \"duplicate\" and changes nothing", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const one = await addCertificate(store, certificateRecord(live, { connectTo: "192.0.2.9" }));
      const two = await addCertificate(store, certificateRecord(live, { domain: one.domain }));
      expect(await store.certificates.updateSettings(live, two.id, { connectTo: "192.0.2.9", updatedAt: NOW })).toBe("duplicate");
      expect(await store.certificates.get(live, two.id)).toEqual(two);
    });

    test("saveCheck() with changed details writes endpoints, connection and alert memory; without, leaves them", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const record = await addCertificate(store, certificateRecord(live));
      const checked = withEndpoints(record);
      const saved = { ...checked, protocol: record.protocol, port: record.port, connectTo: record.connectTo };
      expect(await store.certificates.saveCheck(saved, [], { detailsChanged: true })).toBe(true);
      expect(await store.certificates.get(live, record.id)).toEqual({ ...saved, version: 1 });
      const unchanged = { ...saved, version: 1, lastCheckedAt: NOW + HOUR };
      expect(await store.certificates.saveCheck(unchanged, [], { detailsChanged: false })).toBe(true);
      expect(await store.certificates.get(live, record.id)).toEqual({ ...unchanged, version: 2 });
    });
  });
}
