/**
 * A rollout's old leaf expiring while its node may still answer it: a node that served it lately and
 * answers the new leaf at one check (an endpoint alternating between the two, CONTRACT §20) may answer
 * the old one again, expired, to the clients that reach it. Its expiry gets a check of its own when it
 * was replaced late (the new leaf issued within a tenth of the old one's lifetime, a day at most,
 * of its expiry): `certificate.expired` at that check when the old leaf is answered then, rather than
 * a regular interval later. A healthy rotation, replaced long before the old leaf expires, adds no
 * such check.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

/** Two nodes answering: the certificate-level leaf is the one that expires first. */
function twoNodes(a: CertificateDetails, b: CertificateDetails): CheckOutcome {
  const first = a.notAfter <= b.notAfter ? a : b;
  const endpoint = (address: string, details: CertificateDetails) => ({ address, fingerprint: details.fingerprintSha256!, details, problem: null, failure: null, tls: null });
  return { ok: true, fingerprint: first.fingerprintSha256!, details: first, problem: null, endpoints: [endpoint("127.0.0.1", a), endpoint("127.0.0.2", b)] };
}

/** A 160-hour leaf ending at `notAfter`. */
const leaf = (domain: string, notAfter: number) => certificateDetails(domain, { notBefore: notAfter - 160 * HOUR, notAfter });

describe("a rollout's old leaf on another node", () => {
  test("its expiry, an hour after a check that saw its node on the new leaf, gets a check; answered again then, it is announced expired", () => {
    const domain = "rolling-edge.example.com";
    const x = leaf(domain, NOW + 2 * HOUR); // node A's leaf, expiring first: the certificate-level one
    const old = leaf(domain, NOW + 3 * HOUR); // node B's leaf, never the certificate-level one
    const x2 = leaf(domain, NOW + 150 * HOUR);
    const fresh = leaf(domain, NOW + 155 * HOUR);
    let record: CertificateRecord = certificateRecord(scope, { domain, details: x, alertPolicy: "renewal", alertThresholds: [] });
    record = applyCheck(record, twoNodes(x, old), NOW - 6 * HOUR, policy, { isNew: true }).record;
    // Both nodes renewed, as far as this check sees.
    record = applyCheck(record, twoNodes(x2, fresh), NOW, policy).record;
    const checks: number[] = [];
    while (record.nextCheckAt <= old.notAfter + 1) {
      checks.push(record.nextCheckAt);
      if (record.nextCheckAt === old.notAfter + 1) break;
      record = applyCheck(record, twoNodes(x2, fresh), record.nextCheckAt, policy).record;
    }
    expect(checks).toContain(old.notAfter + 1);
    // Node B answers the old leaf again at that check: expired, announced now.
    const back = applyCheck(record, twoNodes(x2, old), old.notAfter + 1, policy);
    const expired = back.events.filter((e) => e.type === "certificate.expired");
    expect(expired.map((e) => (e.data.certificate as { serialNumber: string }).serialNumber)).toEqual([old.serialNumber]);
  });

  test("a healthy rotation's old leaf, expiring days after its node moved on, adds no check at its expiry", () => {
    const domain = "rotated-edge.example.com";
    const x = certificateDetails(domain, { notBefore: NOW - 60 * DAY, notAfter: NOW + 30 * DAY });
    const old = certificateDetails(domain, { notBefore: NOW - 59 * DAY, notAfter: NOW + 31 * DAY });
    const x2 = certificateDetails(domain, { notBefore: NOW - HOUR, notAfter: NOW + 89 * DAY });
    const fresh = certificateDetails(domain, { notBefore: NOW - HOUR, notAfter: NOW + 89 * DAY + HOUR });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: x, alertPolicy: "renewal", alertThresholds: [] });
    record = applyCheck(record, twoNodes(x, old), NOW - 6 * HOUR, policy, { isNew: true }).record;
    record = applyCheck(record, twoNodes(x2, fresh), NOW, policy).record;
    const checks: number[] = [];
    while (record.nextCheckAt <= old.notAfter + 6 * HOUR) {
      checks.push(record.nextCheckAt);
      record = applyCheck(record, twoNodes(x2, fresh), record.nextCheckAt, policy).record;
    }
    expect(checks).not.toContain(old.notAfter + 1);
  });
});
