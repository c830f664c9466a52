/**
 * CONTRACT §20: "If the grace (24 hours, or a tenth of the new certificate's lifetime when that is
 * shorter) passes from `seenAt` while an answering endpoint still serves an older leaf, one
 * `certificate.not_deployed` … per certificate and issuance".
 *
 * A pending deployment keeps the earlier issuance it replaced. When the earlier one's grace ends during
 * an outage (no endpoint answers, nothing can be judged), the later issuance's own grace end, still
 * ahead, keeps its check: the host back by then, serving the old leaf, is announced at that moment, not
 * at the next regular check.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import type { CertificateRecord, PendingDeployment } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { nextOnPhase } from "../core/monitor/check_phase.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

describe("a superseded issuance's grace, passed during an outage, does not hide the later issuance's grace end", () => {
  test("the later issuance's grace end gets its check, which announces it", () => {
    const domain = "two-issuances.example.com";
    const old = certificateDetails(domain, { notBefore: NOW - 60 * DAY, notAfter: NOW + 30 * DAY });
    // Two issuances of these names recorded an hour apart (90-day certificates: 24-hour graces). The
    // first one's grace ends at NOW; the second's at NOW + 1 h (+37 ms, off the regular checks' grid).
    const firstSeen = NOW - 24 * HOUR;
    const secondSeen = NOW - 23 * HOUR + 37;
    const first = { issuedAt: firstSeen - HOUR, notAfter: firstSeen - HOUR + 90 * DAY, fingerprintSha256: null, issuer: "certkeeper Test CA", seenAt: firstSeen, announced: false };
    const deployment: PendingDeployment = { issuedAt: secondSeen - HOUR, notAfter: secondSeen - HOUR + 90 * DAY, fingerprintSha256: null, issuer: "certkeeper Test CA", seenAt: secondSeen, announced: false, superseded: first };
    const secondGraceEnd = secondSeen + 24 * HOUR;
    // A certificate whose own phase puts its regular check after the outage more than 2 h later (most
    // do: the phase is anywhere in the 6-hour interval), so that only a scheduled moment checks it by then.
    let n = 0;
    while (nextOnPhase(`cert_gracephase0${String(n).padStart(6, "0")}`, NOW, 6 * HOUR) < NOW + 2 * HOUR) n++;
    const id = `cert_gracephase0${String(n).padStart(6, "0")}`;
    let record: CertificateRecord = certificateRecord(scope, { id, domain, details: old, alertPolicy: "renewal", alertThresholds: [] });
    record = applyCheck(record, servedOutcome(old), NOW - 4 * HOUR, policy, { isNew: true }).record;
    record = { ...record, deployment };
    // The check at the first grace's end finds the host down: nothing can be judged.
    const down = applyCheck(record, { ok: false, reason: "timeout", message: "no answer", endpoints: [{ address: "127.0.0.1", fingerprint: null, details: null, problem: null, failure: "timeout", tls: null }] }, NOW, policy);
    expect(down.events.map((e) => e.type)).toEqual(["certificate.unreachable"]);
    // The second issuance's grace end is still ahead: a check is due by then.
    expect(down.record.nextCheckAt).toBeLessThanOrEqual(secondGraceEnd);
    // The host is back by then, still serving the old leaf: both issuances are announced not deployed.
    let current = down.record;
    while (current.nextCheckAt < secondGraceEnd) current = applyCheck(current, servedOutcome(old), current.nextCheckAt, policy).record;
    expect(current.nextCheckAt).toBe(secondGraceEnd);
    const at = applyCheck(current, servedOutcome(old), secondGraceEnd, policy);
    const notDeployed = at.events.filter((e) => e.type === "certificate.not_deployed");
    expect(notDeployed.map((e) => (e.data.deployment as { seenAt: string }).seenAt)).toContain(new Date(secondSeen).toISOString());
  });
});
