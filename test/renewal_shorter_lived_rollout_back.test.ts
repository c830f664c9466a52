/**
 * CONTRACT §18: "When the deadline passes and an answering endpoint, checked at that moment, still
 * serves the leaf (a check is made at the deadline, …): one certificate.renewal_overdue", and "each
 * renewal deadline gets its own check".
 *
 * A rollout to shorter-lived certificates (90-day to 24-hour, as a move to short-lived ACME profiles
 * does): the new leaf expires before the old one. When its node goes back to the old leaf for a while,
 * the new leaf's deadline still has its check, and its overdue alert comes then, not at the old 90-day
 * leaf's next regular check hours later.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

describe("a shorter-lived new leaf whose node went back to the old leaf keeps its deadline's check", () => {
  test("the new leaf served again at its deadline is announced overdue by the check made at that deadline", () => {
    const domain = "to-short-lived.example.com";
    // The old leaf: 90 days, 30 left, its deadline a week away.
    const old = certificateDetails(domain, { notBefore: NOW - 60 * DAY, notAfter: NOW + 30 * DAY });
    // The new leaf: 24 hours; its deadline (two thirds) is NOW + 4 h (+37 ms, off the tenth-of-a-second
    // grid the regular checks fall on).
    const freshNotBefore = NOW - 12 * HOUR + 37;
    const fresh = certificateDetails(domain, { notBefore: freshNotBefore, notAfter: freshNotBefore + 24 * HOUR });
    const deadline = freshNotBefore + 16 * HOUR;
    let record: CertificateRecord = certificateRecord(scope, { domain, details: old, alertPolicy: "renewal", alertThresholds: [] });
    record = applyCheck(record, servedOutcome(old), NOW - 3 * HOUR, policy, { isNew: true }).record;
    // The node moves to the new leaf (announced renewed)…
    const moved = applyCheck(record, servedOutcome(fresh), NOW - 2 * HOUR, policy);
    expect(moved.record.details.serialNumber).toBe(fresh.serialNumber);
    expect(moved.record.nextCheckAt).toBeLessThanOrEqual(deadline);
    // …then serves the old one again for a while.
    const back = applyCheck(moved.record, servedOutcome(old), NOW, policy);
    expect(back.record.details.serialNumber).toBe(old.serialNumber);
    let current = back.record;
    while (current.nextCheckAt < deadline) {
      const between = applyCheck(current, servedOutcome(old), current.nextCheckAt, policy);
      expect(between.events.map((e) => e.type)).not.toContain("certificate.renewal_overdue");
      current = between.record;
    }
    // The next check comes at the new leaf's deadline, as it does for a new leaf expiring after the old.
    expect(current.nextCheckAt).toBe(deadline);
    // At the deadline the node serves the new leaf again, never renewed: announced then.
    const at = applyCheck(current, servedOutcome(fresh), deadline, policy);
    const overdue = at.events.filter((e) => e.type === "certificate.renewal_overdue");
    expect(overdue).toHaveLength(1);
    expect((overdue[0]!.data.certificate as { serialNumber: string }).serialNumber).toBe(fresh.serialNumber);
  });
});
