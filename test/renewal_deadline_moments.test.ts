/**
 * The moments of CONTRACT §18's deadline and of the checks it schedules (core/renewal/deadline.ts and
 * the scheduling steps of core/monitor):
 *
 * - A renewal window kept from before that ends after the expiry still makes the deadline the expiry.
 * - `renewal.state` is `overdue` only "while an answering endpoint still serves that leaf": a
 *   certificate whose last check reached no endpoint stays `not_due`.
 * - The twelfth-of-the-lifetime re-check holds for a trusted leaf only: a server that makes up an
 *   untrusted leaf of a minute is checked at the regular interval, not every 5 seconds; a leaf with
 *   no lifetime to speak of keeps the interval too; after the expiry the wait doubles only until it is
 *   a twelfth of the time since the expiry (core/renewal/deadline.ts's own rule).
 * - `certificate.expired` is raised by a check made right after the expiry (notAfter + 1 ms), not at
 *   the next regular check.
 * - Under `renewal`, a threshold crossed before the deadline is covered by the overdue alert: it gets
 *   no check of its own (under `days` it does).
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import { checkIntervalFor, renewalDeadline } from "../core/renewal/mod.ts";
import { presentCertificate } from "../core/certificates/mod.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };

describe("renewal deadline (CONTRACT §18)", () => {
  test("a window kept from before that ends after the expiry gives the expiry as the deadline", () => {
    const notBefore = NOW - 10 * DAY;
    const notAfter = notBefore + 90 * DAY;
    const window = { start: notAfter - DAY, end: notAfter + 5 * DAY };
    const renewalInfo = { window, explanationUrl: null, checkedAt: NOW - HOUR, requestedEnd: null, nextAt: NOW + 5 * HOUR, lastError: null };
    const got = renewalDeadline({ notBefore, notAfter, renewalInfo });
    expect(got).toEqual({ deadline: notAfter, source: "ari", window });
  });

  test("renewal.state is not overdue while the last check reached no endpoint, overdue once one answers again", () => {
    const domain = "state-unreachable.example.com";
    const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
    // 90 days; the deadline (67.5 days in) is one hour before NOW.
    const notBefore = NOW - 67.5 * DAY - HOUR;
    const details = certificateDetails(domain, { notBefore, notAfter: notBefore + 90 * DAY });
    let record: CertificateRecord = certificateRecord(scope, { domain, details, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    record = applyCheck(record, servedOutcome(details), NOW - 2 * HOUR, policy, { isNew: true }).record;
    expect(presentCertificate(record, NOW - 2 * HOUR).renewal?.state).toBe("not_due");

    const down = applyCheck(record, { ok: false, reason: "timeout", message: "no answer" }, NOW, policy).record;
    expect(presentCertificate(down, NOW).renewal?.state).toBe("not_due");
    expect(presentCertificate(down, NOW + HOUR).renewal?.state).toBe("not_due");

    const back = applyCheck(down, servedOutcome(details), NOW + HOUR, policy).record;
    expect(presentCertificate(back, NOW + HOUR).renewal?.state).toBe("overdue");
  });

  test("renewal.state is overdue at the deadline exactly (now ≥ deadline), not_due a millisecond before", () => {
    const domain = "state-at-deadline.example.com";
    const policy = { intervalMs: 6 * HOUR, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
    const details = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY });
    const { deadline } = renewalDeadline(details);
    const record = applyCheck(certificateRecord(scope, { domain, details, alertPolicy: "days", alertThresholds: [] }), servedOutcome(details), NOW, policy, { isNew: true }).record;
    expect(presentCertificate(record, deadline - 1).renewal?.state).toBe("not_due");
    expect(presentCertificate(record, deadline).renewal).toMatchObject({ state: "overdue", deadline: new Date(deadline).toISOString() });
  });
});

describe("re-check interval (CONTRACT §18)", () => {
  test("an untrusted leaf of a minute is checked at the regular interval; a trusted one every twelfth of its lifetime", () => {
    const leaf = { notBefore: NOW - 10_000, notAfter: NOW - 10_000 + MINUTE };
    expect(checkIntervalFor(leaf, 6 * HOUR, NOW, false)).toBe(6 * HOUR);
    expect(checkIntervalFor(leaf, 6 * HOUR, NOW, true)).toBe(5_000);
    const day = { notBefore: NOW - HOUR, notAfter: NOW - HOUR + DAY };
    expect(checkIntervalFor(day, 6 * HOUR, NOW, false)).toBe(6 * HOUR);
    expect(checkIntervalFor(day, 6 * HOUR, NOW, true)).toBe(2 * HOUR);
  });

  test("after the expiry the wait doubles only until it is at least a twelfth of the time since the expiry", () => {
    // core/renewal/deadline.ts: a replacement is still seen soon after the expiry.
    const leaf = { notBefore: NOW - DAY, notAfter: NOW };
    expect(checkIntervalFor(leaf, DAY, NOW - HOUR, true)).toBe(2 * HOUR);
    expect(checkIntervalFor(leaf, DAY, NOW + HOUR, true)).toBe(2 * HOUR);
    expect(checkIntervalFor(leaf, DAY, NOW + DAY, true)).toBe(2 * HOUR);
    expect(checkIntervalFor(leaf, DAY, NOW + DAY + 1, true)).toBe(4 * HOUR);
    expect(checkIntervalFor(leaf, DAY, NOW + 2 * DAY, true)).toBe(4 * HOUR);
    expect(checkIntervalFor(leaf, DAY, NOW + 10 * DAY, true)).toBe(DAY);
  });

  test("a leaf with no lifetime to speak of (notAfter at notBefore) keeps the regular interval, not a check every second", () => {
    expect(checkIntervalFor({ notBefore: NOW, notAfter: NOW }, 6 * HOUR, NOW - HOUR, true)).toBe(6 * HOUR);
    expect(checkIntervalFor({ notBefore: NOW, notAfter: NOW + 11 }, 6 * HOUR, NOW - HOUR, true)).toBe(6 * HOUR);
  });

  test("following the stored next check, certificate.expired is raised 1 ms after notAfter, not at a later regular check", () => {
    const domain = "expires-on-time.example.com";
    const policy = { intervalMs: DAY, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
    const notAfter = NOW + 10 * MINUTE;
    const details = certificateDetails(domain, { notBefore: notAfter - 90 * DAY, notAfter });
    let record: CertificateRecord = certificateRecord(scope, { domain, details, alertPolicy: "days", alertThresholds: [] });
    let at = NOW;
    let expiredAt: number | null = null;
    for (let i = 0; i < 5 && expiredAt === null; i++) {
      const applied = applyCheck(record, servedOutcome(details), at, policy, { isNew: i === 0 });
      if (applied.events.some((e) => e.type === "certificate.expired")) expiredAt = at;
      record = applied.record;
      at = record.nextCheckAt!;
    }
    expect(expiredAt).toBe(notAfter + 1);
  });

  test("under renewal, a threshold crossed before the deadline gets no check of its own; under days it does", () => {
    const domain = "threshold-before-deadline.example.com";
    // 90 days, 31 days left: threshold 30 is crossed 1 ms from now; the deadline is 8.5 days away.
    const notAfter = NOW + 31 * DAY;
    const details = certificateDetails(domain, { notBefore: notAfter - 90 * DAY, notAfter });
    const crossing = NOW + 1;
    const { deadline } = renewalDeadline(details);
    expect(deadline).toBe(NOW + 8.5 * DAY);
    for (const alertPolicy of ["renewal", "days"] as const) {
      const policy = { intervalMs: 7 * DAY, alertPolicy, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
      const record = certificateRecord(scope, { domain, details, alertPolicy, alertThresholds: [30, 14, 7, 3, 1] });
      const applied = applyCheck(record, servedOutcome(details), NOW, policy, { isNew: true });
      expect(applied.events.map((e) => e.type)).toEqual([]);
      if (alertPolicy === "days") expect(applied.record.nextCheckAt).toBe(crossing);
      else {
        expect(applied.record.nextCheckAt!).toBeGreaterThan(crossing);
        expect(applied.record.nextCheckAt!).toBeLessThanOrEqual(deadline);
      }
    }
  });
});
