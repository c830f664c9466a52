/**
 * CONTRACT §18–§19 (core/monitor): a CA's request for early
 * replacement whose window has already ended when it is first seen "covers the overdue alert" (the
 * request is the one event about that leaf), for the certificate-level leaf and for a leaf another
 * address serves, including when the window ends at the very moment of the check (the deadline is
 * then that moment too: now ≥ deadline). Past that moment, a later request from the CA (another
 * window) covers no threshold crossed since: those are owed as under the days policy.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import { presentCertificate } from "../core/certificates/mod.ts";
import type { CertificateDetails, RenewalInfo } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

/** The CA asked for replacement by `end` (a window of a day ending then). */
function requestedBy(end: number): RenewalInfo {
  const window = { start: end - DAY, end };
  return { window, explanationUrl: null, checkedAt: NOW - HOUR, requestedEnd: end, requested: { window, explanationUrl: null }, nextAt: NOW + 5 * HOUR, lastError: null };
}

const types = (events: Array<{ type: string }>) => events.map((e) => e.type);

describe("a request whose window ends at the moment of the check covers the overdue alert (CONTRACT §18, §19)", () => {
  test("the certificate-level leaf: one renewal_requested, no renewal_overdue, now or at the next check", () => {
    const domain = "request-ends-now.example.com";
    const details = certificateDetails(domain, { notBefore: NOW - 30 * DAY, notAfter: NOW + 60 * DAY, renewalInfo: requestedBy(NOW) });
    const record = certificateRecord(scope, { domain, details, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    const first = applyCheck(record, servedOutcome(details), NOW, policy, { isNew: true });
    expect(types(first.events)).toEqual(["certificate.renewal_requested"]);
    const shown = presentCertificate(first.record, NOW);
    expect([shown.status, shown.statusReason, shown.renewal?.state]).toEqual(["expiring", "renewal_requested", "requested"]);
    const next = applyCheck(first.record, servedOutcome(details), NOW + HOUR, policy);
    expect(types(next.events)).toEqual([]);
  });

  test("a leaf another address serves: one renewal_requested naming it, no renewal_overdue for it", () => {
    const domain = "other-request-ends-now.example.com";
    // The certificate-level leaf (expires first) is not due for weeks.
    const own = certificateDetails(domain, { notBefore: NOW - 20 * DAY, notAfter: NOW + 40 * DAY });
    const other: CertificateDetails = certificateDetails(domain, { notBefore: NOW - 30 * DAY, notAfter: NOW + 60 * DAY, renewalInfo: requestedBy(NOW) });
    const outcome: CheckOutcome = {
      ok: true,
      fingerprint: "both",
      details: own,
      problem: null,
      endpoints: [
        { address: "127.0.0.1", fingerprint: "a", details: own, problem: null, failure: null, tls: null },
        { address: "127.0.0.2", fingerprint: "b", details: other, problem: null, failure: null, tls: null },
      ],
    };
    const record = certificateRecord(scope, { domain, details: own, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    const first = applyCheck(record, outcome, NOW, policy, { isNew: true });
    expect(first.events.map((e) => [e.type, (e.data.endpoint as { address: string } | undefined)?.address])).toEqual([["certificate.renewal_requested", "127.0.0.2"]]);
    const next = applyCheck(first.record, outcome, NOW + HOUR, policy);
    expect(types(next.events)).toEqual([]);
  });

  test("a second request, after a threshold crossed since the first, comes with that threshold's alert", () => {
    const domain = "asked-again.example.com";
    const details = certificateDetails(domain, { notBefore: NOW - 2 * DAY, notAfter: NOW + 5 * DAY, renewalInfo: requestedBy(NOW) });
    const record = certificateRecord(scope, { domain, details, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    // The first request covers the overdue alert and the thresholds crossed by then (7 days).
    const first = applyCheck(record, servedOutcome(details), NOW, policy, { isNew: true });
    expect(types(first.events)).toEqual(["certificate.renewal_requested"]);
    // The 3-day threshold is crossed a day later; the CA asks again (a new window) before the next check.
    const later = NOW + 2 * DAY + HOUR;
    const askedAgain = { ...details, renewalInfo: requestedBy(NOW + 2 * DAY) };
    const second = applyCheck(first.record, servedOutcome(askedAgain), later, policy);
    expect(second.events.map((e) => [e.type, e.data.threshold ?? null])).toEqual([
      ["certificate.renewal_requested", null],
      ["certificate.expiring", 3],
    ]);
  });
});
