/**
 * CONTRACT §5: status is `invalid` while "not yet valid"; CONTRACT §7: `certificate.recovered` is raised
 * "back to `valid` or `expiring` from `invalid` or `unreachable`". A leaf served before its notBefore (a
 * certificate installed ahead of its start, or issued by a CA that does not back-date, seen from a
 * clock a little ahead) is announced invalid; at its notBefore the status turns valid by time alone
 * (GET shows `valid` then), and a check is made then: `certificate.recovered` comes at that moment,
 * not at the next regular check.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { certificateStatus } from "../core/certificates/status.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

describe("a leaf served before its notBefore is announced recovered at its notBefore", () => {
  test("the check at notBefore raises certificate.recovered", () => {
    const domain = "early-start.example.com";
    // Valid from ten minutes from now (+37 ms: off the tenth-of-a-second grid of the regular checks).
    const notBefore = NOW + 10 * MINUTE + 37;
    const details = certificateDetails(domain, { notBefore, notAfter: notBefore + 90 * DAY });
    const record: CertificateRecord = certificateRecord(scope, { domain, details, alertPolicy: "days" });
    const first = applyCheck(record, servedOutcome(details), NOW, policy, { isNew: true });
    expect(first.events.map((e) => e.type)).toEqual(["certificate.invalid"]);
    expect(certificateStatus(first.record, NOW).statusReason).toBe("not_yet_valid");
    // At notBefore the status is valid by time alone…
    expect(certificateStatus(first.record, notBefore).status).toBe("valid");
    // …and a check is due then, not at the next regular check.
    expect(first.record.nextCheckAt).toBeLessThanOrEqual(notBefore);
    let current = first.record;
    while (current.nextCheckAt < notBefore) current = applyCheck(current, servedOutcome(details), current.nextCheckAt, policy).record;
    expect(current.nextCheckAt).toBe(notBefore);
    const at = applyCheck(current, servedOutcome(details), notBefore, policy);
    expect(at.events.map((e) => e.type)).toEqual(["certificate.recovered"]);
  });
});
