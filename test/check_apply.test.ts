/**
 * applyCheck, the pure meaning of one check (core/monitor/check_apply.ts): the announcement rules that
 * are hard to reach through a real server in one test, such as a node flipping between certificates.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { CertificateDetails, CertificateRecord, RevocationState } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: HOUR, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

const revocation = (status: RevocationState["status"]): RevocationState => ({
  status,
  source: status === "not_checked" ? null : "ocsp",
  checkedAt: NOW,
  revokedAt: status === "revoked" ? NOW - DAY : null,
  reason: status === "revoked" ? "keyCompromise" : null,
  validUntil: null,
});

const served = (details: CertificateDetails): CheckOutcome => ({
  ok: true,
  fingerprint: details.fingerprintSha256,
  details,
  problem: null,
  endpoints: [{ address: "127.0.0.1", fingerprint: details.fingerprintSha256, details, problem: null, failure: null, tls: null }],
});

describe("applyCheck: certificate.revoked", () => {
  test("a host alternating between a revoked old certificate and a new one announces the revoked serial once (CONTRACT §14)", () => {
    const domain = "flip.example.com";
    const old = certificateDetails(domain, { notAfter: NOW + 40 * DAY, revocation: revocation("revoked") });
    const fresh = certificateDetails(domain, { notAfter: NOW + 80 * DAY, revocation: revocation("good") });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: old, alertThresholds: [] });
    let applied = applyCheck(record, served(old), NOW, policy, { isNew: true });
    const types: string[] = applied.events.map((e) => e.type);
    record = applied.record;
    for (let i = 1; i <= 12; i++) {
      applied = applyCheck(record, served(i % 2 === 1 ? fresh : old), NOW + i * HOUR, policy);
      types.push(...applied.events.map((e) => e.type));
      record = applied.record;
    }
    expect(types.filter((t) => t === "certificate.revoked")).toEqual(["certificate.revoked"]);
  });

  test("many revoked serials in rotation are each announced once", () => {
    const domain = "rotate.example.com";
    const leaves = Array.from({ length: 12 }, (_, i) =>
      certificateDetails(domain, { notAfter: NOW + (40 + i) * DAY, revocation: revocation("revoked") }),
    );
    let record: CertificateRecord = certificateRecord(scope, { domain, details: leaves[0]!, alertThresholds: [] });
    const revoked: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [i, leaf] of leaves.entries()) {
        const applied = applyCheck(record, served(leaf), NOW + (round * 12 + i) * HOUR, policy, { isNew: round === 0 && i === 0 });
        revoked.push(...applied.events.filter((e) => e.type === "certificate.revoked").map((e) => (e.data.certificate as { serialNumber: string }).serialNumber));
        record = applied.record;
      }
    }
    expect(revoked.length).toBe(12);
    expect(new Set(revoked).size).toBe(12);
  });
});
