/**
 * CONTRACT §18–§19, alert memory per serial:
 * - `certificate.renewal_overdue` is "at most once per serial" and "the new leaf starts at not_due":
 *   a leaf renewed late, whose replacement is then itself left past its deadline, gets a second
 *   renewal_overdue (for the new serial), not certificate.expiring for its thresholds.
 * - `certificate.renewal_requested` is "one per serial and window end": a CA that moves the window
 *   end earlier again for the same serial is announced again.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import { presentCertificate } from "../core/certificates/mod.ts";
import type { CertificateRecord, RenewalInfo } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

describe("renewal alerts are remembered per serial (CONTRACT §18)", () => {
  test("a replacement left past its own deadline gets its own renewal_overdue", () => {
    const domain = "late-twice.example.com";
    const first = certificateDetails(domain, { notBefore: NOW - 70 * DAY, notAfter: NOW + 20 * DAY });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: first, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    const overdue = applyCheck(record, servedOutcome(first), NOW, policy, { isNew: true });
    expect(overdue.events.map((e) => e.type)).toEqual(["certificate.renewal_overdue"]);
    record = overdue.record;

    // Renewed: a 30-day leaf (deadline 22.5 days in).
    const second = certificateDetails(domain, { notBefore: NOW + DAY, notAfter: NOW + 31 * DAY });
    const renewed = applyCheck(record, servedOutcome(second), NOW + DAY + HOUR, policy);
    expect(renewed.events.map((e) => e.type)).toEqual(["certificate.renewed"]);
    expect(presentCertificate(renewed.record, NOW + DAY + HOUR).renewal?.state).toBe("not_due");
    record = renewed.record;

    // The new leaf is left past its deadline (and past the 14- and 7-day thresholds).
    const at = second.notBefore + 22.5 * DAY + HOUR;
    const late = applyCheck(record, servedOutcome(second), at, policy);
    expect(late.events.map((e) => e.type)).toEqual(["certificate.renewal_overdue"]);
    expect(late.events[0]!.data).toMatchObject({ deadline: new Date(second.notBefore + 22.5 * DAY).toISOString(), source: "lifetime" });
    expect(presentCertificate(late.record, at)).toMatchObject({ status: "expiring", statusReason: "renewal_overdue", renewal: { state: "overdue" } });
  });
});

describe("renewal_requested is remembered per serial and window end (CONTRACT §19)", () => {
  test("a window moved earlier again for the same serial is a second request", () => {
    const domain = "moved-twice.example.com";
    const notBefore = NOW - 10 * DAY;
    const notAfter = NOW + 80 * DAY;
    const info = (end: number, requestedEnd: number | null): RenewalInfo => ({
      window: { start: end - DAY, end },
      explanationUrl: null,
      checkedAt: NOW,
      requestedEnd,
      nextAt: NOW + 6 * HOUR,
      lastError: null,
    });
    const base = certificateDetails(domain, { notBefore, notAfter, renewalInfo: info(NOW + 50 * DAY, null) });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: base, alertPolicy: "renewal", alertThresholds: [] });
    const quiet = applyCheck(record, servedOutcome(base), NOW, policy, { isNew: true });
    expect(quiet.events.map((e) => e.type)).toEqual([]);
    record = quiet.record;

    const firstEnd = NOW + 20 * DAY;
    const firstAsk = { ...base, renewalInfo: info(firstEnd, firstEnd) };
    const asked = applyCheck(record, servedOutcome(firstAsk), NOW + HOUR, policy);
    expect(asked.events.map((e) => e.type)).toEqual(["certificate.renewal_requested"]);
    record = asked.record;
    // The same request again: nothing.
    const same = applyCheck(record, servedOutcome(firstAsk), NOW + 2 * HOUR, policy);
    expect(same.events.map((e) => e.type)).toEqual([]);
    record = same.record;

    const secondEnd = NOW + 5 * DAY;
    const secondAsk = { ...base, renewalInfo: info(secondEnd, secondEnd) };
    const again = applyCheck(record, servedOutcome(secondAsk), NOW + 3 * HOUR, policy);
    expect(again.events.map((e) => e.type)).toEqual(["certificate.renewal_requested"]);
    expect(again.events[0]!.data.window).toEqual({ start: new Date(secondEnd - DAY).toISOString(), end: new Date(secondEnd).toISOString() });
  });
});
