/**
 * CONTRACT §5, §11, §13, §14, §18: the status rule's order and boundaries that no other test held
 * (each test here fails on a one-line change of core/certificates/status.ts that the suite let pass):
 * revoked before unreachable, expired before revoked for one endpoint, not_yet_valid first among the
 * invalid reasons, invalid before a CA's early-renewal request, the 30-day horizon without thresholds,
 * chain_expiring only for a certificate above the leaf that expires before it, at the whole-day
 * boundary, and another address serving the same leaf judged on what differs there.
 */
import { describe, expect, test } from "bun:test";
import { DAY } from "../core/base/mod.ts";
import { certificateStatus, endpointStatus, type StatusInput } from "../core/certificates/mod.ts";
import type { EndpointRecord, RevocationState } from "../core/base/records.ts";

const NOW = Date.UTC(2026, 10, 20);

function record(overrides: Omit<Partial<StatusInput>, "details"> & { notBefore?: number; notAfter?: number; details?: Partial<StatusInput["details"]> } = {}): StatusInput {
  const { notBefore = NOW - 30 * DAY, notAfter = NOW + 60 * DAY, details = {}, ...rest } = overrides;
  return {
    details: { serialNumber: "01:02", notBefore, notAfter, ...details } as StatusInput["details"],
    problem: null,
    failure: null,
    alertThresholds: [30, 14, 7, 3, 1],
    ...rest,
  };
}

const revoked: RevocationState = { status: "revoked", source: "ocsp", checkedAt: NOW - DAY, revokedAt: NOW - 2 * DAY, reason: "keyCompromise", validUntil: NOW + DAY };
const good: RevocationState = { status: "good", source: "ocsp", checkedAt: NOW - DAY, revokedAt: null, reason: null, validUntil: NOW + DAY };

function endpoint(address: string, details: StatusInput["details"], problem: EndpointRecord["problem"] = null): EndpointRecord {
  return { address, fingerprint: `fp-${address}`, details, problem, failure: null, tls: null };
}

const judged = (r: StatusInput, at = NOW) => {
  const { status, statusReason } = certificateStatus(r, at);
  return [status, statusReason];
};

describe("precedence of CONTRACT §5 and §14", () => {
  test("a revoked leaf whose latest check could not reach the server is revoked, not unreachable (revoked comes before unreachable)", () => {
    expect(judged(record({ failure: "timeout", details: { revocation: revoked } }))).toEqual(["revoked", "revoked"]);
    expect(judged(record({ failure: "timeout", details: { revocation: good } }))).toEqual(["unreachable", "timeout"]);
  });

  test("an endpoint whose leaf has expired and was revoked is expired (expired comes first)", () => {
    const r = record();
    const expiredAndRevoked = { ...r.details, serialNumber: "0A:0B", notBefore: NOW - 100 * DAY, notAfter: NOW - DAY, revocation: revoked };
    expect(endpointStatus(endpoint("192.0.2.9", expiredAndRevoked), r, NOW)).toEqual({ status: "expired", statusReason: "expired" });
  });

  test("a leaf served before its notBefore that also names another host is not_yet_valid (the first invalid reason)", () => {
    const r = record({ notBefore: NOW + DAY, notAfter: NOW + 90 * DAY, problem: "hostname_mismatch" });
    expect(judged(r)).toEqual(["invalid", "not_yet_valid"]);
    expect(judged(r, NOW + 2 * DAY)).toEqual(["invalid", "hostname_mismatch"]);
  });

  test("an untrusted leaf its CA asks to replace early is invalid, not expiring (invalid comes before expiring)", () => {
    const renewalInfo = { window: { start: NOW - DAY, end: NOW + DAY }, explanationUrl: null, checkedAt: NOW - DAY, requestedEnd: NOW + DAY, nextAt: NOW + DAY, lastError: null };
    const asked = record({ details: { renewalInfo } as Partial<StatusInput["details"]> });
    expect(judged(asked)).toEqual(["expiring", "renewal_requested"]);
    expect(judged({ ...asked, problem: "untrusted_issuer" })).toEqual(["invalid", "untrusted_issuer"]);
  });
});

describe("the expiring horizon", () => {
  test("without alert thresholds, 30 whole days left is expiring and 31 is valid", () => {
    const notAfter = NOW + 60 * DAY;
    const r = record({ notAfter, alertThresholds: [] });
    expect(judged(r, notAfter - 31 * DAY)).toEqual(["valid", null]); // 31 days left
    expect(judged(r, notAfter - 31 * DAY + 1)).toEqual(["expiring", "expiring_soon"]); // 30 days and a bit left
  });
});

describe("chain_expiring (CONTRACT §13)", () => {
  const chainCert = (notAfter: number) => ({ subject: "Intermediate", issuer: "Root", serialNumber: "AA:BB", notAfter });

  test("a certificate above the leaf that expires when the leaf does, or after it, never makes the leaf expiring (renewal policy)", () => {
    const notAfter = NOW + 25 * DAY; // a 90-day leaf, its renewal deadline still 2.5 days ahead
    const notBefore = notAfter - 90 * DAY;
    const same = record({ notBefore, notAfter, alertPolicy: "renewal", details: { chainExpiry: chainCert(notAfter) } });
    expect(judged(same)).toEqual(["valid", null]);
    const later = record({ notBefore, notAfter, alertPolicy: "renewal", details: { chainExpiry: chainCert(notAfter + 5 * DAY) } });
    expect(judged(later)).toEqual(["valid", null]);
    const earlier = record({ notBefore, notAfter, alertPolicy: "renewal", details: { chainExpiry: chainCert(notAfter - DAY) } });
    expect(judged(earlier)).toEqual(["expiring", "chain_expiring"]);
  });

  test("counted in whole days like daysUntilExpiry: 30 days and a millisecond left of the intermediate is within the 30-day horizon", () => {
    const above = NOW + 200 * DAY;
    const r = record({ notBefore: NOW - 10 * DAY, notAfter: NOW + 400 * DAY, details: { chainExpiry: chainCert(above) } });
    expect(judged(r, above - 31 * DAY)).toEqual(["valid", null]);
    expect(judged(r, above - 31 * DAY + 1)).toEqual(["expiring", "chain_expiring"]);
  });
});

describe("another address serving the same leaf (CONTRACT §11)", () => {
  test("the same leaf with an untrusted chain at one address makes the certificate invalid", () => {
    const r = record();
    const same = { ...r.details };
    expect(judged({ ...r, endpoints: [endpoint("192.0.2.1", r.details), endpoint("192.0.2.2", same, "untrusted_issuer")] })).toEqual(["invalid", "untrusted_issuer"]);
  });

  test("the same leaf answered as revoked at one address (its stapled answer) makes the certificate revoked", () => {
    const r = record({ details: { revocation: good } });
    const stapledRevoked = { ...r.details, revocation: revoked };
    expect(judged({ ...r, endpoints: [endpoint("192.0.2.1", r.details), endpoint("192.0.2.2", stapledRevoked)] })).toEqual(["revoked", "revoked"]);
  });

  test("the same leaf sent with an intermediate that expires soon at one address makes the certificate chain_expiring", () => {
    const r = record({ notAfter: NOW + 300 * DAY });
    const shortChain = { ...r.details, chainExpiry: { subject: "Old Intermediate", issuer: "Root", serialNumber: "CC:DD", notAfter: NOW + 10 * DAY } };
    expect(judged({ ...r, endpoints: [endpoint("192.0.2.1", r.details), endpoint("192.0.2.2", shortChain)] })).toEqual(["expiring", "chain_expiring"]);
  });
});
