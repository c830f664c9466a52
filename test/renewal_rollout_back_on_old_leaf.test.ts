/**
 * A rollout that goes back and forth (a node serving the new leaf, then the old one again for a while,
 * as a CDN rolling a renewal out does): the new leaf, no longer served at the last check, is the
 * certificate-level leaf again as soon as the old one goes. Its renewal deadline keeps a check of its
 * own (CONTRACT §18: "a check is made at the deadline"), so a stalled renewal of the new leaf is
 * announced at its deadline, not at the next regular check hours later. A healthy rotation's old leaf,
 * expiring before the new one, adds no such check.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

describe("a new leaf whose node went back to the old one keeps its deadline's check", () => {
  test("the new leaf served again after its deadline is announced overdue by the check made at that deadline", () => {
    const domain = "rolling.example.com";
    // 24-hour leaves: the old one expired six hours ago; the new one's deadline (two thirds) is NOW + 4 h.
    const old = certificateDetails(domain, { notBefore: NOW - 30 * HOUR, notAfter: NOW - 6 * HOUR });
    const fresh = certificateDetails(domain, { notBefore: NOW - 12 * HOUR, notAfter: NOW + 12 * HOUR });
    const deadline = NOW + 4 * HOUR;
    let record: CertificateRecord = certificateRecord(scope, { domain, details: old, alertPolicy: "renewal", alertThresholds: [] });
    record = applyCheck(record, servedOutcome(old), NOW - 3 * HOUR, policy, { isNew: true }).record;
    // The node moves to the new leaf…
    const moved = applyCheck(record, servedOutcome(fresh), NOW - 2 * HOUR, policy);
    expect(moved.record.details.serialNumber).toBe(fresh.serialNumber);
    // …then serves the old one again: the certificate-level leaf is the old one now.
    const back = applyCheck(moved.record, servedOutcome(old), NOW, policy);
    expect(back.record.details.serialNumber).toBe(old.serialNumber);
    // The next check comes by the new leaf's deadline, not six hours later.
    expect(back.record.nextCheckAt).toBeGreaterThan(NOW);
    expect(back.record.nextCheckAt).toBeLessThanOrEqual(deadline);
    // Checks between (the old leaf still served) raise nothing about the new one.
    let current = back.record;
    while (current.nextCheckAt < deadline) {
      const between = applyCheck(current, servedOutcome(old), current.nextCheckAt, policy);
      expect(between.events.map((e) => e.type)).not.toContain("certificate.renewal_overdue");
      current = between.record;
    }
    expect(current.nextCheckAt).toBe(deadline);
    // At the deadline the node has settled on the new leaf, never renewed: announced then.
    const at = applyCheck(current, servedOutcome(fresh), deadline, policy);
    const overdue = at.events.filter((e) => e.type === "certificate.renewal_overdue");
    expect(overdue).toHaveLength(1);
    expect((overdue[0]!.data.certificate as { serialNumber: string }).serialNumber).toBe(fresh.serialNumber);
  });

  test("a healthy rotation's old leaf, expiring first, adds no check at its own deadline", () => {
    const domain = "rotated.example.com";
    // 90-day leaves, re-checked every six hours: the old one's deadline (three quarters) is NOW + 2 h;
    // it is replaced an hour before it.
    const oldNotBefore = NOW + 2 * HOUR - 67.5 * 24 * HOUR;
    const old = certificateDetails(domain, { notBefore: oldNotBefore, notAfter: oldNotBefore + 90 * 24 * HOUR });
    const fresh = certificateDetails(domain, { notBefore: NOW - HOUR, notAfter: NOW - HOUR + 90 * 24 * HOUR });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: old, alertPolicy: "renewal", alertThresholds: [] });
    record = applyCheck(record, servedOutcome(old), NOW - 2 * HOUR, policy, { isNew: true }).record;
    expect(record.nextCheckAt).toBeLessThanOrEqual(NOW + 2 * HOUR);
    const renewed = applyCheck(record, servedOutcome(fresh), NOW, policy);
    expect(renewed.events.map((e) => e.type)).toEqual(["certificate.renewed"]);
    // The checks until the old leaf's deadline has passed: on the certificate's own phase, none at it.
    const checks: number[] = [];
    let current = renewed.record;
    while (current.nextCheckAt <= NOW + 2 * HOUR) {
      checks.push(current.nextCheckAt);
      current = applyCheck(current, servedOutcome(fresh), current.nextCheckAt, policy).record;
    }
    expect(checks).not.toContain(NOW + 2 * HOUR);
  });
});
