/**
 * CONTRACT §18: "When the deadline passes and an answering endpoint, checked at that moment, still
 * serves the leaf: … a check is made at the deadline" and "each renewal deadline gets its own check".
 * CONTRACT §11: the status "is computed over the answering endpoints", so another address's leaf past
 * its deadline is announced (renewal_overdue naming data.endpoint).
 *
 * A rollout's new leaf served only by another address (never the certificate-level leaf), whose node
 * then goes back to the old leaf for a while, keeps a check at its deadline: served again then, it is
 * announced by that check, not by the next regular one.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";
import { nodesOutcome } from "./support/nodes_outcome.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

/** Two addresses: .1 serves `a`, .2 serves `b`; the certificate-level leaf is the one expiring first. */
function twoNodes(a: CertificateDetails, b: CertificateDetails): CheckOutcome {
  return nodesOutcome([["127.0.0.1", a], ["127.0.0.2", b]]);
}

describe("another address's new leaf, its node back on the old leaf for a while, keeps its deadline's check", () => {
  test("the new leaf served again at its deadline is announced overdue by the check made at that deadline", () => {
    const domain = "flipflop.example.com";
    // 24-hour leaves. The old one (node .1 is stuck on it) expires in 6 h; its deadline passed.
    const old = certificateDetails(domain, { notBefore: NOW - 18 * HOUR, notAfter: NOW + 6 * HOUR });
    // The new one: its deadline (two thirds of 24 h) is NOW + 4 h (+37 ms, off the tenth-of-a-second
    // grid the regular checks fall on, so a regular check cannot land on it by chance).
    const freshNotBefore = NOW - 12 * HOUR + 37;
    const fresh = certificateDetails(domain, { notBefore: freshNotBefore, notAfter: freshNotBefore + 24 * HOUR });
    const deadline = freshNotBefore + 16 * HOUR;
    let record: CertificateRecord = certificateRecord(scope, { domain, details: old, alertPolicy: "renewal", alertThresholds: [] });
    record = applyCheck(record, twoNodes(old, old), NOW - 3 * HOUR, policy, { isNew: true }).record;
    // Node .2 moves to the new leaf (the old one, expiring first, stays the certificate-level leaf)…
    const moved = applyCheck(record, twoNodes(old, fresh), NOW - 2 * HOUR, policy);
    expect(moved.record.details.serialNumber).toBe(old.serialNumber);
    expect(moved.record.nextCheckAt).toBeLessThanOrEqual(deadline);
    // …then serves the old one again for a while.
    const back = applyCheck(moved.record, twoNodes(old, old), NOW, policy);
    let current = back.record;
    while (current.nextCheckAt < deadline) {
      const between = applyCheck(current, twoNodes(old, old), current.nextCheckAt, policy);
      expect(between.events.map((e) => e.type)).not.toContain("certificate.renewal_overdue");
      current = between.record;
    }
    // The next check comes at the new leaf's deadline, not at the next regular check (up to 2 h later
    // for 24-hour leaves, 6 h for leaves of three days or more).
    expect(current.nextCheckAt).toBe(deadline);
    // At the deadline node .2 serves the new leaf again, never renewed: announced then, naming it.
    const at = applyCheck(current, twoNodes(old, fresh), deadline, policy);
    const overdue = at.events.filter((e) => e.type === "certificate.renewal_overdue");
    expect(overdue).toHaveLength(1);
    expect((overdue[0]!.data.endpoint as { serialNumber: string }).serialNumber).toBe(fresh.serialNumber);
  });
});
