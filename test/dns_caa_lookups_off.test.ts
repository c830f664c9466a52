/**
 * CONTRACT §22: "An issuer with no known CAA domain is not judged", and caa_forbids_issuer speaks of the
 * *current* issuer's CA. When a check makes no DNS lookups at all (CERTKEEPER_DNS_SERVERS=off after
 * having been on, or no resolver left in /etc/resolv.conf), the findings held stay, but not a CAA
 * verdict about the previous leaf's CA for a leaf of another CA: it is dropped, as it is after a DNS
 * failure (dns_checks.error.test.ts: "a leaf renewed by a CA with no known CAA domain is not judged:
 * the old CA's verdict does not stay").
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import { presentCertificate } from "../core/certificates/mod.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const domain = "shop.example.com";

/** CAA forbids the test CA (by its O), judged while lookups were made. */
const forbidden: NonNullable<CertificateRecord["dns"]> = {
  caaSets: [{ from: domain, setAt: "example.com", records: [{ flags: 0, tag: "issue", value: "digicert.com" }] }],
  caa: {
    status: "forbidden",
    issuerDomain: "certkeeper-test-ca.example",
    blocking: { name: domain, setAt: "example.com", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com"'], key: "set-a", issuers: ["certkeeper test ca"] },
  },
};

describe("a leaf renewed by another CA while no lookups are made", () => {
  test("the old CA's CAA verdict does not follow the new leaf: no caa_forbids_issuer, no renewal_blocked", () => {
    const policy = { intervalMs: HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
    const old = certificateDetails(domain, { notBefore: NOW - 80 * DAY, notAfter: NOW + 10 * DAY });
    const record: CertificateRecord = certificateRecord(scope, { domain, details: old, alertPolicy: "renewal", dns: forbidden });
    expect(presentCertificate(record, NOW).warnings).toEqual(["caa_forbids_issuer"]);
    // Renewed by an internal CA with no CAA domain, configured or built in; a 90-day leaf 70 days in (past its deadline).
    const renewed = certificateDetails(domain, {
      notBefore: NOW - 70 * DAY,
      notAfter: NOW + 20 * DAY,
      issuer: "Internal Issuing CA",
      chain: old.chain!.map((entry, i) => (i === 0 ? { ...entry, issuer: "Internal Issuing CA G2" } : entry)),
    });
    // No lookups: the outcome carries no `dns` (the DnsInspector is null).
    const applied = applyCheck(record, servedOutcome(renewed) as CheckOutcome, NOW, policy);
    const view = presentCertificate(applied.record, NOW);
    expect(view.issuer).toBe("Internal Issuing CA");
    expect({ warnings: view.warnings, status: view.status, statusReason: view.statusReason }).toEqual({ warnings: [], status: "expiring", statusReason: "renewal_overdue" });
  });
});
