/**
 * Health and revocation on a certificate's first check (CONTRACT §14; core/monitor/check_answer.ts):
 * what the add stored is no announcement, so a leaf already revoked when it is added is announced at
 * its first check, at once, not only if it comes back after another leaf. And a failed scheduled check
 * is retried on the retry schedule, its first wait first, before the certificate is declared unreachable.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import type { CertificateRecord, RevocationState } from "../core/base/records.ts";
import { DAY, HOUR, MINUTE, SECOND } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: HOUR, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
const revoked: RevocationState = { status: "revoked", source: "ocsp", checkedAt: NOW, revokedAt: NOW - DAY, reason: "keyCompromise", validUntil: null };

describe("certificate.revoked on the first check", () => {
  test("a certificate added while its leaf is revoked raises certificate.revoked at its first check, once", () => {
    const domain = "added-revoked.example.com";
    const details = certificateDetails(domain, { notAfter: NOW + 60 * DAY, revocation: revoked });
    // The record as the add stored it: the same leaf, already seen revoked by the add's retrieval.
    let record: CertificateRecord = certificateRecord(scope, { domain, details, alertThresholds: [] });
    const first = applyCheck(record, servedOutcome(details), NOW, policy, { isNew: true });
    expect(first.events.map((e) => e.type)).toEqual(["certificate.revoked"]);
    record = first.record;
    const again = applyCheck(record, servedOutcome(details), NOW + HOUR, policy);
    expect(again.events.map((e) => e.type)).toEqual([]);
  });
});

describe("retries before certificate.unreachable", () => {
  test("each failure waits its own delay of the retry schedule (the first failure the first delay), then unreachable is raised", () => {
    const domain = "retried.example.com";
    const details = certificateDetails(domain, { notAfter: NOW + 60 * DAY });
    const scheduled = { intervalMs: HOUR, alertPolicy: "days" as const, failuresBeforeUnreachable: 3, retryDelaysMs: [15 * SECOND, MINUTE] };
    let record: CertificateRecord = certificateRecord(scope, { domain, details, alertThresholds: [] });
    record = applyCheck(record, servedOutcome(details), NOW, scheduled, { isNew: true }).record;
    const failed = { ok: false as const, reason: "timeout" as const, message: "no answer" };
    const first = applyCheck(record, failed, NOW + HOUR, scheduled);
    expect(first.events).toEqual([]);
    expect(first.record.nextCheckAt).toBe(NOW + HOUR + 15 * SECOND);
    const second = applyCheck(first.record, failed, first.record.nextCheckAt!, scheduled);
    expect(second.events).toEqual([]);
    expect(second.record.nextCheckAt).toBe(NOW + HOUR + 15 * SECOND + MINUTE);
    const third = applyCheck(second.record, failed, second.record.nextCheckAt!, scheduled);
    expect(third.events.map((e) => e.type)).toEqual(["certificate.unreachable"]);
  });
});
