/**
 * The exact moments of time-based alerts (CONTRACT §7, §13; core/monitor/threshold_crossings.ts,
 * core/monitor/check_chain.ts): each test holds a boundary that no other test caught when it was
 * moved by one millisecond.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import { crossingAt, nextAlertAt } from "../core/monitor/threshold_crossings.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };

describe("nextAlertAt: the next moment something becomes due", () => {
  test("expiry is due at the first millisecond past notAfter (the moment a certificate is expired), not at notAfter itself", () => {
    const notAfter = NOW + 10 * DAY;
    expect(nextAlertAt([], notAfter, null, false, NOW)).toBe(notAfter + 1);
    // At notAfter itself the certificate is not expired yet: expiry is still ahead.
    expect(nextAlertAt([], notAfter, null, false, notAfter)).toBe(notAfter + 1);
    expect(nextAlertAt([], notAfter, null, true, NOW)).toBeNull();
  });

  test("a moment equal to now is not ahead: a crossing that happens now is not due again", () => {
    const notAfter = NOW + 10 * DAY;
    const crossing = crossingAt(notAfter, 7);
    // At the crossing of 7 (not announced), expiry is what is ahead, not the crossing itself.
    expect(nextAlertAt([7], notAfter, null, true, crossing)).toBeNull();
    expect(nextAlertAt([7], notAfter, null, false, crossing)).toBe(notAfter + 1);
    expect(nextAlertAt([7], notAfter, null, false, crossing - 1)).toBe(crossing);
  });

  test("the threshold already announced is no moment ahead, even while its crossing is in the future (thresholds raised later)", () => {
    const notAfter = NOW + 40 * DAY;
    // 14 announced; 30 is crossed in 9 days: nothing below 14 is ahead but 7's crossing.
    expect(nextAlertAt([30, 14, 7], notAfter, 14, true, NOW)).toBe(crossingAt(notAfter, 7));
  });
});

describe("certificate.chain_expiring at the intermediate's last millisecond (CONTRACT §13)", () => {
  test("an intermediate is still valid at its notAfter: a certificate added then gets chain_expiring for the lowest threshold", () => {
    const domain = "chain-last-ms.example.com";
    const intermediate = { subject: "Short CA", issuer: "Root", serialNumber: "AB:CD:EF", notAfter: NOW };
    const details = { ...certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY }), chainExpiry: intermediate };
    const policy = { intervalMs: HOUR, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
    const record: CertificateRecord = certificateRecord(scope, { domain, details, alertThresholds: [30, 14, 7, 3, 1] });
    const atNotAfter = applyCheck(record, servedOutcome(details), NOW, policy, { isNew: true });
    const chain = atNotAfter.events.filter((e) => e.type === "certificate.chain_expiring");
    expect(chain.map((e) => e.data.threshold)).toEqual([1]);
    // A millisecond later it has expired: no chain_expiring any more (its expiry is the status's business).
    const later = applyCheck(certificateRecord(scope, { domain, details, alertThresholds: [30, 14, 7, 3, 1] }), servedOutcome(details), NOW + 1, policy, { isNew: true });
    expect(later.events.filter((e) => e.type === "certificate.chain_expiring")).toEqual([]);
  });
});
