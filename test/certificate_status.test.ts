/**
 * The status rule is written once (core/certificates/status.ts): the timeline a store keeps to filter
 * by status agrees with the status computed at the moment of asking, at every moment, for every kind
 * of certificate.
 */
import { describe, expect, test } from "bun:test";
import { DAY } from "../core/base/mod.ts";
import { certificateRenewalState, certificateStatus, endpointStatus, statusTimeline, TIMELINE_END, TIMELINE_START, type StatusInput } from "../core/certificates/mod.ts";

const NOW = Date.UTC(2026, 10, 20);

function record(overrides: Partial<StatusInput> & { notBefore?: number; notAfter?: number } = {}): StatusInput {
  const { notBefore = NOW - 30 * DAY, notAfter = NOW + 60 * DAY, ...rest } = overrides;
  return {
    details: { notBefore, notAfter } as StatusInput["details"],
    problem: null,
    failure: null,
    alertThresholds: [30, 14, 7, 3, 1],
    ...rest,
  };
}

/** Deterministic pseudo-random numbers (a test that fails must fail again). */
function random(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe("statusTimeline", () => {
  test("days policy: invalid before notBefore, valid, expiring from the largest threshold, expired after notAfter; overdue from the deadline", () => {
    const notBefore = NOW - 30 * DAY;
    const notAfter = NOW + 60 * DAY;
    // A 90-day lifetime: the deadline is three quarters in, 22.5 days before expiry.
    const deadline = notBefore + 67.5 * DAY;
    expect(statusTimeline(record({ notBefore, notAfter, alertPolicy: "days" }))).toEqual([
      { from: TIMELINE_START, until: notBefore, status: "invalid", statusReason: "not_yet_valid", renewal: "not_due" },
      { from: notBefore, until: notAfter - 31 * DAY + 1, status: "valid", statusReason: null, renewal: "not_due" },
      { from: notAfter - 31 * DAY + 1, until: deadline, status: "expiring", statusReason: "expiring_soon", renewal: "not_due" },
      { from: deadline, until: notAfter + 1, status: "expiring", statusReason: "expiring_soon", renewal: "overdue" },
      { from: notAfter + 1, until: TIMELINE_END, status: "expired", statusReason: "expired", renewal: "overdue" },
    ]);
  });

  test("renewal policy: valid until the renewal deadline whatever the thresholds, then expiring (renewal_overdue)", () => {
    const notBefore = NOW - 30 * DAY;
    const notAfter = NOW + 60 * DAY;
    const deadline = notBefore + 67.5 * DAY;
    expect(statusTimeline(record({ notBefore, notAfter, alertPolicy: "renewal" }))).toEqual([
      { from: TIMELINE_START, until: notBefore, status: "invalid", statusReason: "not_yet_valid", renewal: "not_due" },
      { from: notBefore, until: deadline, status: "valid", statusReason: null, renewal: "not_due" },
      { from: deadline, until: notAfter + 1, status: "expiring", statusReason: "renewal_overdue", renewal: "overdue" },
      { from: notAfter + 1, until: TIMELINE_END, status: "expired", statusReason: "expired", renewal: "overdue" },
    ]);
  });

  test("renewal policy: a 160-hour certificate is valid for two thirds of its life, whatever its thresholds", () => {
    const notBefore = NOW;
    const notAfter = NOW + 160 * 3600_000;
    const deadline = notBefore + Math.ceil((160 * 3600_000 * 2) / 3);
    const timeline = statusTimeline(record({ notBefore, notAfter, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] }));
    expect(timeline.find((p) => p.from === notBefore)).toEqual({ from: notBefore, until: deadline, status: "valid", statusReason: null, renewal: "not_due" });
    expect(certificateStatus(record({ notBefore, notAfter, alertPolicy: "days" }), notBefore).status).toBe("expiring");
  });

  test("an unreachable certificate stays unreachable until it expires, and is never overdue", () => {
    const notAfter = NOW + 5 * DAY;
    expect(statusTimeline(record({ notAfter, failure: "timeout" }))).toEqual([
      { from: TIMELINE_START, until: notAfter + 1, status: "unreachable", statusReason: "timeout", renewal: "not_due" },
      { from: notAfter + 1, until: TIMELINE_END, status: "expired", statusReason: "expired", renewal: "not_due" },
    ]);
  });

  test("renewal policy: past the deadline, a CAA set that forbids the issuer names the renewal blocked, not overdue; days policy is unchanged", () => {
    const notBefore = NOW - 80 * DAY;
    const notAfter = NOW + 10 * DAY;
    const dns = { caa: { status: "forbidden" } } as unknown as StatusInput["dns"];
    const judged = (alertPolicy: "renewal" | "days", withDns: boolean) => {
      const { status, statusReason } = certificateStatus(record({ notBefore, notAfter, alertPolicy, ...(withDns ? { dns } : {}) }), NOW);
      return [status, statusReason];
    };
    expect(judged("renewal", true)).toEqual(["expiring", "renewal_blocked"]);
    expect(judged("renewal", false)).toEqual(["expiring", "renewal_overdue"]);
    expect(judged("days", true)).toEqual(["expiring", "expiring_soon"]);
    // Before the deadline, a blocked renewal changes no status (the warning says it).
    expect(certificateStatus(record({ notBefore: NOW - DAY, notAfter: NOW + 89 * DAY, alertPolicy: "renewal", dns }), NOW).status).toBe("valid");
  });

  test("renewal policy: an endpoint's leaf is renewal_blocked only when its issuer maps to the CA domain CAA forbids", () => {
    const notBefore = NOW - 80 * DAY;
    const leaf = (issuer: string, notAfter: number) => ({ notBefore, notAfter, issuer, chain: [{ issuer: `${issuer} R1` }] }) as unknown as StatusInput["details"];
    const endpoint = (address: string, details: StatusInput["details"]) => ({ address, fingerprint: address, details, problem: null, failure: null, tls: null });
    const forbidden = leaf("Let's Encrypt", NOW + 8 * DAY);
    const sameCa = leaf("Let's Encrypt", NOW + 9 * DAY);
    const otherCa = leaf("DigiCert Inc", NOW + 10 * DAY);
    const blocking = { name: "example.com", setAt: "example.com", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com"'], key: "k" };
    const input = (issuers?: string[]) =>
      record({
        details: forbidden,
        alertPolicy: "renewal",
        dns: { caa: { status: "forbidden", issuerDomain: "letsencrypt.org", blocking: { ...blocking, ...(issuers ? { issuers } : {}) } } } as StatusInput["dns"],
        endpoints: [endpoint("192.0.2.1", forbidden), endpoint("192.0.2.2", sameCa), endpoint("192.0.2.3", otherCa)],
      });
    const judged = (r: StatusInput) => r.endpoints!.map((e) => endpointStatus(e, r, NOW).statusReason);
    expect(judged(input(["let's encrypt"]))).toEqual(["renewal_blocked", "renewal_blocked", "renewal_overdue"]);
    // A verdict stored without its issuers: the judged leaf's own issuer names stand in.
    expect(judged(input())).toEqual(["renewal_blocked", "renewal_blocked", "renewal_overdue"]);
    expect(certificateStatus(input(["let's encrypt"]), NOW).statusReason).toBe("renewal_blocked");
  });

  test("a CA's request for early replacement makes the leaf expiring (renewal_requested) under both policies", () => {
    const renewalInfo = { window: { start: NOW - DAY, end: NOW - 1 }, explanationUrl: null, checkedAt: NOW - DAY, requestedEnd: NOW - 1, nextAt: NOW + DAY, lastError: null };
    for (const alertPolicy of ["renewal", "days"] as const) {
      const input = record({ alertPolicy });
      input.details = { ...input.details, renewalInfo };
      expect({ alertPolicy, ...certificateStatus(input, NOW), renewal: certificateRenewalState(input, NOW) }).toEqual({
        alertPolicy,
        status: "expiring",
        statusReason: "renewal_requested",
        daysUntilExpiry: 60,
        renewal: "requested",
      });
    }
  });

  test("agrees with certificateStatus at every moment, at and around every change, for a thousand certificates", () => {
    const next = random(42);
    const reasons = [null, "self_signed", "untrusted_issuer", "hostname_mismatch"] as const;
    const failures = [null, null, "dns_error", "timeout"] as const;
    let compared = 0;
    for (let i = 0; i < 1000; i++) {
      const notBefore = NOW + Math.round((next() - 0.7) * 400 * DAY);
      const notAfter = notBefore + Math.round(next() * 400 * DAY);
      const thresholds = next() < 0.2 ? [] : [Math.floor(next() * 731), Math.floor(next() * 60)];
      const input = record({
        notBefore,
        notAfter,
        problem: reasons[Math.floor(next() * reasons.length)]!,
        failure: failures[Math.floor(next() * failures.length)]!,
        alertThresholds: thresholds,
        alertPolicy: next() < 0.5 ? "renewal" : "days",
      });
      if (next() < 0.3) {
        const end = notBefore + Math.round(next() * (notAfter - notBefore));
        const requested = next() < 0.3 ? end : null;
        input.details = { ...input.details, renewalInfo: { window: { start: end - DAY, end }, explanationUrl: null, checkedAt: NOW, requestedEnd: requested, nextAt: NOW, lastError: null } };
      }
      const timeline = statusTimeline(input);
      expect(timeline[0]!.from).toBe(TIMELINE_START);
      expect(timeline.at(-1)!.until).toBe(TIMELINE_END);
      for (let p = 1; p < timeline.length; p++) expect(timeline[p]!.from).toBe(timeline[p - 1]!.until);
      const moments = [NOW, notBefore, notAfter, ...timeline.flatMap((p) => [p.from, p.from - 1, p.from + 1, p.until - 1])]
        .concat(Array.from({ length: 20 }, () => NOW + Math.round((next() - 0.5) * 900 * DAY)))
        .filter((moment) => moment > TIMELINE_START && moment < TIMELINE_END);
      for (const now of moments) {
        const period = timeline.find((p) => p.from <= now && now < p.until)!;
        const { status, statusReason } = certificateStatus(input, now);
        const renewal = certificateRenewalState(input, now);
        expect({ now, status: period.status, statusReason: period.statusReason, renewal: period.renewal }).toEqual({ now, status, statusReason, renewal });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(10_000);
  });
});
