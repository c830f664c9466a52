/**
 * CONTRACT §18/§22's `renewal_blocked` (core/renewal/renewal_blocked.ts) for other addresses: a leaf
 * another address serves, past its deadline, is blocked when its issuer maps to the CA domain CAA
 * forbids, and an issuer maps when either of its names (O or CN) is one the verdict lists; the
 * verdict names the CA by one of them only (here its O), as CERTKEEPER_CAA_IDENTITIES usually does.
 */
import { describe, expect, test } from "bun:test";
import { caaBlocksRenewal } from "../core/renewal/mod.ts";
import { certificateStatus } from "../core/certificates/mod.ts";
import type { CertificateRecord, EndpointRecord } from "../core/base/records.ts";
import { DAY } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const domain = "blocked-other-node.example.com";

/** CAA forbids the CA of the certificate-level leaf, which the verdict names by its issuer's O alone. */
const forbidden: NonNullable<CertificateRecord["dns"]> = {
  caa: {
    status: "forbidden",
    issuerDomain: "certkeeper-test-ca.example",
    blocking: { name: domain, setAt: "example.com", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com"'], key: "set-a", issuers: ["certkeeper test ca"] },
  },
};

describe("renewal_blocked for another address's leaf (CONTRACT §18, §22)", () => {
  test("a leaf of the same CA (O listed, CN not) past its deadline is renewal_blocked; one of another CA is renewal_overdue", () => {
    // The certificate-level leaf (expires first) is weeks from its deadline.
    const own = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 40 * DAY });
    // Another node's leaf of the same CA: 90 days, its deadline (67.5 days in) passed a day ago.
    const stale = certificateDetails(domain, { notBefore: NOW - 68.5 * DAY, notAfter: NOW + 21.5 * DAY });
    expect([stale.issuer, stale.chain?.[0]?.issuer]).toEqual(["certkeeper Test CA", "certkeeper Test RSA CA"]);
    const otherCa = { ...stale, serialNumber: "0A:0B:0C", issuer: "Other CA", chain: stale.chain!.map((c, i) => (i === 0 ? { ...c, issuer: "Other CA R1" } : c)) };
    const endpoint = (address: string, details: typeof own): EndpointRecord => ({ address, fingerprint: details.fingerprintSha256!, details, problem: null, failure: null, tls: null });

    const record = certificateRecord(scope, { domain, details: own, alertPolicy: "renewal", dns: forbidden, endpoints: [endpoint("127.0.0.1", own), endpoint("127.0.0.2", stale)] });
    expect(caaBlocksRenewal(record, stale)).toBe(true);
    expect(certificateStatus(record, NOW)).toMatchObject({ status: "expiring", statusReason: "renewal_blocked" });

    const mixed = { ...record, endpoints: [endpoint("127.0.0.1", own), endpoint("127.0.0.2", otherCa)] };
    expect(caaBlocksRenewal(mixed, otherCa)).toBe(false);
    expect(certificateStatus(mixed, NOW)).toMatchObject({ status: "expiring", statusReason: "renewal_overdue" });
  });
});
