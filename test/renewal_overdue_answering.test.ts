/**
 * CONTRACT §18: `certificate.renewal_overdue` is raised when the deadline passes "and an answering
 * endpoint, checked at that moment, still serves the leaf". A check that reaches no endpoint at the
 * deadline (the host down) raises `certificate.unreachable`, not the overdue alert; the overdue alert
 * comes with the first check that reaches the leaf again. And a leaf another address serves is
 * overdue at its deadline exactly (now ≥ deadline), announced by the check made at that moment.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

describe("renewal_overdue needs an answering endpoint (CONTRACT §18)", () => {
  test("a host unreachable when the deadline passes raises unreachable only; the overdue alert comes once it answers again", () => {
    const domain = "down-at-deadline.example.com";
    // 90 days; the deadline (67.5 days in) is one hour before NOW.
    const notBefore = NOW - 67.5 * DAY - HOUR;
    const details = certificateDetails(domain, { notBefore, notAfter: notBefore + 90 * DAY });
    let record: CertificateRecord = certificateRecord(scope, { domain, details, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    // Checked healthy before the deadline: nothing.
    const before = applyCheck(record, servedOutcome(details), NOW - 2 * HOUR, policy, { isNew: true });
    expect(before.events.map((e) => e.type)).toEqual([]);
    record = before.record;

    const down = applyCheck(record, { ok: false, reason: "timeout", message: "no answer" }, NOW, policy);
    expect(down.events.map((e) => e.type)).toEqual(["certificate.unreachable"]);
    record = down.record;

    const back = applyCheck(record, servedOutcome(details), NOW + HOUR, policy);
    expect(back.events.map((e) => e.type).sort()).toEqual(["certificate.recovered", "certificate.renewal_overdue"]);
    const again = applyCheck(back.record, servedOutcome(details), NOW + 2 * HOUR, policy);
    expect(again.events.map((e) => e.type)).toEqual([]);
  });

  test("another address's leaf whose deadline is the moment of the check is announced by that check", () => {
    const domain = "halfway.example.com";
    // The certificate-level leaf: 21 days, expiring first, not due for two weeks.
    const fresh = certificateDetails(domain, { notBefore: NOW - DAY, notAfter: NOW + 20 * DAY });
    // The other node's leaf: 90 days, expiring later; its deadline (three quarters) is NOW exactly.
    const oldNotBefore = NOW - 67.5 * DAY;
    const old = certificateDetails(domain, { notBefore: oldNotBefore, notAfter: oldNotBefore + 90 * DAY });
    const outcome = (at: number): CheckOutcome => ({
      ok: true,
      fingerprint: `${fresh.fingerprintSha256}/${old.fingerprintSha256}`,
      details: fresh,
      problem: null,
      endpoints: [
        { address: "127.0.0.1", fingerprint: fresh.fingerprintSha256!, details: fresh, problem: null, failure: null, tls: null },
        { address: "127.0.0.2", fingerprint: old.fingerprintSha256!, details: old, problem: null, failure: null, tls: null },
      ],
      at,
    });
    const record: CertificateRecord = certificateRecord(scope, { domain, details: fresh, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    const early = applyCheck(record, outcome(NOW - HOUR), NOW - HOUR, policy, { isNew: true });
    expect(early.events.map((e) => e.type)).toEqual([]);
    // A check is due by that deadline at the latest (each renewal deadline gets its own check; the
    // regular one, on the certificate's own phase, may come before it)…
    expect(early.record.nextCheckAt).toBeLessThanOrEqual(NOW);
    // …and that check announces it, naming the node.
    const at = applyCheck(early.record, outcome(NOW), NOW, policy);
    expect(at.events.map((e) => e.type)).toEqual(["certificate.renewal_overdue"]);
    expect(at.events[0]!.data.endpoint).toEqual({ address: "127.0.0.2", serialNumber: old.serialNumber, expiresAt: new Date(old.notAfter).toISOString() });
  });
});
