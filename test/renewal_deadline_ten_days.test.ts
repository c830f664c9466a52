/**
 * CONTRACT §18: the lifetime rule's deadline is three quarters of the lifetime, two thirds only when the
 * lifetime is *under* 10 days. A leaf of exactly 10 days takes three quarters (7.5 days), not two thirds
 * (6.67 days): at 7 days it is not due, and no renewal_overdue is raised.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import { presentCertificate } from "../core/certificates/mod.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR, SECOND } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

function leafOf(lifetime: number, now: number) {
  const domain = "ten-days.example.com";
  const notBefore = now - 7 * DAY;
  const details = certificateDetails(domain, { notBefore, notAfter: notBefore + lifetime });
  const record: CertificateRecord = certificateRecord(scope, { domain, details, alertPolicy: "renewal" });
  return { notBefore, details, record };
}

describe("the lifetime rule at the 10-day boundary (CONTRACT §18)", () => {
  test("a lifetime of exactly 10 days uses three quarters: 7 days in, not due, no event", () => {
    const { notBefore, details, record } = leafOf(10 * DAY, NOW);
    const applied = applyCheck(record, servedOutcome(details), NOW, policy, { isNew: true });
    expect(applied.events.map((e) => e.type)).toEqual([]);
    const view = presentCertificate(applied.record, NOW);
    expect(view.renewal).toMatchObject({ deadline: new Date(notBefore + 7.5 * DAY).toISOString(), source: "lifetime", state: "not_due" });
    expect(view.status).toBe("valid");
  });

  test("a lifetime just under 10 days uses two thirds: 7 days in, overdue, one renewal_overdue", () => {
    const lifetime = 10 * DAY - SECOND;
    const { notBefore, details, record } = leafOf(lifetime, NOW);
    const applied = applyCheck(record, servedOutcome(details), NOW, policy, { isNew: true });
    expect(applied.events.map((e) => e.type)).toEqual(["certificate.renewal_overdue"]);
    const view = presentCertificate(applied.record, NOW);
    expect(view.renewal).toMatchObject({ deadline: new Date(notBefore + Math.ceil((lifetime * 2) / 3)).toISOString(), state: "overdue" });
  });
});
