/**
 * The store conformance suite's part for CONTRACT §20: noteIssuance(), which makes an issuance a
 * watch recorded pending on the certificates whose served leaves it replaces. Which ones is core's
 * rule (core/deployment awaitsIssuance); every store must apply it to the same certificates.
 */
import { describe, expect, test } from "bun:test";
import type { CertificateDetails, CertificateRecord, EndpointRecord, PendingDeployment } from "../../../core/base/records.ts";
import type { Store } from "../../../core/store/ports.ts";
import { DAY, HOUR } from "../../../core/base/time.ts";
import { deploymentDueAt, namesKey } from "../../../core/deployment/mod.ts";
import { certificateDetails, certificateRecord, NOW } from "./factories.ts";
import { addCertificate, newOrganization } from "./_helpers.ts";

function endpoint(address: string, details: CertificateDetails | null): EndpointRecord {
  return details
    ? { address, fingerprint: details.fingerprintSha256!, details, problem: null, failure: null, tls: null }
    : { address, fingerprint: null, details: null, problem: null, failure: "timeout", tls: null };
}

function issuance(details: CertificateDetails, seenAt = NOW): PendingDeployment {
  return { issuedAt: details.notBefore, notAfter: details.notAfter, fingerprintSha256: details.fingerprintSha256 ?? null, issuer: details.issuer, seenAt, announced: false };
}

/** A 90-day leaf 10 days in, and its 6-day replacement (which expires first), for one domain. */
function leaves(domain: string) {
  const names = { subjectAlternativeNames: [domain] };
  return {
    old: certificateDetails(domain, { ...names, notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY }),
    fresh: certificateDetails(domain, { ...names, notBefore: NOW - HOUR, notAfter: NOW - HOUR + 6 * DAY }),
  };
}

export function describeCertificateDeployment(get: () => Store) {
  describe("certificates: pending deployments (CONTRACT §20)", () => {
    test("noteIssuance() compares with every answering endpoint's leaf: one node on the new, shorter-lived leaf (the certificate's own) and two on the old one is pending", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const domain = "shorter.example.com";
      const { old, fresh } = leaves(domain);
      const endpoints = [endpoint("192.0.2.1", fresh), endpoint("192.0.2.2", old), endpoint("192.0.2.3", old)];
      const record = await addCertificate(store, certificateRecord(live, { domain, details: fresh, endpoints }));
      const deployment = issuance(fresh);

      expect(await store.certificates.noteIssuance(live, { namesKey: namesKey([domain]), deployment })).toBe(1);
      expect(await store.certificates.get(live, record.id)).toEqual({ ...record, deployment, nextCheckAt: record.nextCheckAt, version: 1 });
      // Noted again: nothing changes.
      expect(await store.certificates.noteIssuance(live, { namesKey: namesKey([domain]), deployment })).toBe(0);
    });

    test("noteIssuance() leaves a certificate whose answering endpoints all serve it (or a later leaf), or whose older leaf has other names", async () => {
      const store = get();
      const { live } = await newOrganization(store);
      const served = "served.example.com";
      const renamed = "renamed.example.com";
      const a = leaves(served);
      const b = leaves(renamed);
      const oldOtherNames = { ...b.old, subjectAlternativeNames: [renamed, `old.${renamed}`] };
      const everywhere = await addCertificate(
        store,
        certificateRecord(live, { domain: served, details: a.fresh, endpoints: [endpoint("192.0.2.1", a.fresh), endpoint("192.0.2.2", null)] }),
      );
      const otherNames = await addCertificate(
        store,
        certificateRecord(live, { domain: renamed, details: b.fresh, endpoints: [endpoint("192.0.2.1", b.fresh), endpoint("192.0.2.2", oldOtherNames)] }),
      );

      expect(await store.certificates.noteIssuance(live, { namesKey: namesKey([served]), deployment: issuance(a.fresh) })).toBe(0);
      expect(await store.certificates.noteIssuance(live, { namesKey: namesKey([renamed]), deployment: issuance(b.fresh) })).toBe(0);
      expect(await store.certificates.get(live, everywhere.id)).toEqual(everywhere);
      expect(await store.certificates.get(live, otherNames.id)).toEqual(otherNames);
    });

    test("noteIssuance(): only its scope and names, a newer notBefore than a served leaf, a later issuance replacing an earlier one and keeping it until its grace is judged; due when the earlier grace ends at the latest", async () => {
      const store = get();
      const { live, test: testMode } = await newOrganization(store);
      const domain = "pending.example.com";
      const { old, fresh } = leaves(domain);
      // No endpoint answered at the last check: the certificate's own leaf is the one served.
      const record = await addCertificate(store, certificateRecord(live, { domain, details: old, endpoints: [endpoint("192.0.2.1", null)] }));
      const key = namesKey([domain]);

      expect(await store.certificates.noteIssuance(testMode, { namesKey: key, deployment: issuance(fresh) })).toBe(0);
      expect(await store.certificates.noteIssuance(live, { namesKey: namesKey([domain, `www.${domain}`]), deployment: issuance(fresh) })).toBe(0);
      expect(await store.certificates.noteIssuance(live, { namesKey: key, deployment: issuance(old) })).toBe(0);
      expect(await store.certificates.get(live, record.id)).toEqual(record);

      const first = issuance(fresh);
      expect(await store.certificates.noteIssuance(live, { namesKey: key, deployment: first })).toBe(1);
      const later = issuance({ ...fresh, notBefore: fresh.notBefore + HOUR, fingerprintSha256: "AB:CD" }, NOW + HOUR);
      expect(await store.certificates.noteIssuance(live, { namesKey: key, deployment: later })).toBe(1);
      expect(await store.certificates.noteIssuance(live, { namesKey: key, deployment: first })).toBe(0);
      const stored = (await store.certificates.get(live, record.id)) as CertificateRecord;
      expect(stored).toEqual({ ...record, deployment: { ...later, superseded: first }, nextCheckAt: Math.min(record.nextCheckAt, deploymentDueAt(first)), version: 2 });
      // A third keeps the earliest one not yet announced.
      const third = issuance({ ...fresh, notBefore: fresh.notBefore + 2 * HOUR, fingerprintSha256: "EF:01" }, NOW + 2 * HOUR);
      expect(await store.certificates.noteIssuance(live, { namesKey: key, deployment: third })).toBe(1);
      expect(((await store.certificates.get(live, record.id)) as CertificateRecord).deployment).toEqual({ ...third, superseded: first });
    });
  });
}
