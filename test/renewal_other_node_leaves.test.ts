/**
 * Leaves other nodes serve (CONTRACT §18/§20, core/monitor): another address's overdue leaf
 * is owed `certificate.renewed` (once no node serves it) only when it is OLDER than the
 * certificate-level leaf (a rollout stopped half way). A node whose leaf was issued after the
 * certificate-level one (each node with a certificate of its own) renewing its own leaf is no renewal
 * of the certificate: the certificate-level leaf is still served, unchanged.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";
import { nodesOutcome } from "./support/nodes_outcome.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "renewal" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

/** Two nodes; the certificate-level leaf is the one that expires first. */
function twoNodes(first: CertificateDetails, second: CertificateDetails): CheckOutcome {
  return nodesOutcome([["127.0.0.1", first], ["127.0.0.2", second]]);
}

describe("another node's overdue leaf, issued after the certificate-level one (CONTRACT §18, §20)", () => {
  test("that node renewing its own leaf raises no certificate.renewed while the certificate-level leaf is still served", () => {
    const domain = "own-cert-per-node.example.com";
    // Node 1: 110 days, its deadline passed 17.5 days ago; expires first (the certificate-level leaf).
    const a = certificateDetails(domain, { notBefore: NOW - 100 * DAY, notAfter: NOW + 10 * DAY });
    // Node 2: issued 50 days after it, 65 days, its deadline passed 1.25 days ago; expires later.
    const b = certificateDetails(domain, { notBefore: NOW - 50 * DAY, notAfter: NOW + 15 * DAY });
    // Node 2's replacement.
    const c = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 90 * DAY });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: a, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    const first = applyCheck(record, twoNodes(a, b), NOW, policy, { isNew: true });
    // One overdue alert per serial: the certificate-level leaf's, and node 2's (naming its address).
    expect(first.events.map((e) => [e.type, (e.data.endpoint as { address: string } | undefined)?.address ?? null])).toEqual([
      ["certificate.renewal_overdue", null],
      ["certificate.renewal_overdue", "127.0.0.2"],
    ]);
    record = first.record;
    const types: string[] = [];
    for (const [i, outcome] of [twoNodes(a, c), twoNodes(a, c), twoNodes(a, c)].entries()) {
      const applied = applyCheck(record, outcome, NOW + (i + 1) * HOUR, policy);
      types.push(...applied.events.map((e) => e.type));
      record = applied.record;
    }
    expect(types).toEqual([]);
  });
});

describe("a silent node's leaf keeps its deadline's check (CONTRACT §18)", () => {
  test("the next check is at the deadline of the leaf a silent node served, and announces it when the node is back", () => {
    const domain = "silent-node-deadline.example.com";
    const dayPolicy = { ...policy, intervalMs: DAY };
    // Node 1: the certificate-level leaf (expires first), its deadline 12.5 days away.
    const a = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 20 * DAY });
    // Node 2: 90 days, its deadline (67.5 days in) 2 seconds from now.
    const deadline = NOW + 2_000;
    const b = certificateDetails(domain, { notBefore: deadline - 67.5 * DAY, notAfter: deadline + 22.5 * DAY });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: a, alertPolicy: "renewal", alertThresholds: [30, 14, 7, 3, 1] });
    record = applyCheck(record, twoNodes(a, b), NOW, dayPolicy, { isNew: true }).record;
    // A second later node 2 does not answer.
    const silent: CheckOutcome = {
      ok: true,
      fingerprint: `${a.serialNumber};timeout`,
      details: a,
      problem: null,
      endpoints: [
        { address: "127.0.0.1", fingerprint: a.serialNumber, details: a, problem: null, failure: null, tls: null },
        { address: "127.0.0.2", fingerprint: null, details: null, problem: null, failure: "timeout", tls: null },
      ],
    };
    const quiet = applyCheck(record, silent, NOW + 1_000, dayPolicy);
    expect(quiet.events.map((e) => e.type)).toEqual([]);
    expect(quiet.record.nextCheckAt).toBe(deadline);
    // Node 2 is back, still serving its leaf, at the deadline's check.
    const back = applyCheck(quiet.record, twoNodes(a, b), quiet.record.nextCheckAt!, dayPolicy);
    expect(back.events.map((e) => [e.type, (e.data.endpoint as { address: string } | undefined)?.address ?? null])).toEqual([["certificate.renewal_overdue", "127.0.0.2"]]);
  });
});

describe("thresholds covered by another node's overdue alert (CONTRACT §18)", () => {
  test("a leaf back as the certificate-level one raises no threshold its overdue alert covered", () => {
    const domain = "covered-back.example.com";
    const daysPolicy = { ...policy, alertPolicy: "days" as const };
    // X: 90 days, 29 days and 23 hours left (threshold 30 crossed); its deadline is 7.5 days away.
    const x = certificateDetails(domain, { notBefore: NOW - 60 * DAY - HOUR, notAfter: NOW + 30 * DAY - HOUR });
    // Y, on a second node: older, expires first.
    const y = certificateDetails(domain, { notBefore: NOW - 70 * DAY, notAfter: NOW + 20 * DAY });
    // Z: the second node's replacement.
    const z = certificateDetails(domain, { notBefore: NOW + 17 * DAY, notAfter: NOW + 107 * DAY });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: x, alertPolicy: "days", alertThresholds: [30, 14, 7, 3, 1] });
    const single: CheckOutcome = { ok: true, fingerprint: x.serialNumber, details: x, problem: null, endpoints: [{ address: "127.0.0.1", fingerprint: x.serialNumber, details: x, problem: null, failure: null, tls: null }] };
    const added = applyCheck(record, single, NOW, daysPolicy, { isNew: true });
    expect(added.events.map((e) => [e.type, e.data.threshold])).toEqual([["certificate.expiring", 30]]);
    record = applyCheck(added.record, twoNodes(x, y), NOW + HOUR, daysPolicy).record;
    // Switched to the renewal policy; 17 days later both deadlines have passed (X has 13 days left).
    record = { ...record, alertPolicy: "renewal" };
    const overdue = applyCheck(record, twoNodes(x, y), NOW + 17 * DAY, policy);
    expect(overdue.events.filter((e) => e.type === "certificate.renewal_overdue").map((e) => (e.data.endpoint as { address: string } | undefined)?.address ?? null)).toEqual([null, "127.0.0.1"]);
    record = overdue.record;
    // The second node moves on to Z: X is the certificate-level leaf again; 14 was covered for it.
    const types: string[] = [];
    for (const at of [NOW + 17 * DAY + HOUR, NOW + 17 * DAY + 2 * HOUR]) {
      const applied = applyCheck(record, twoNodes(x, z), at, policy);
      types.push(...applied.events.map((e) => e.type));
      record = applied.record;
    }
    expect(types.filter((t) => t === "certificate.expiring")).toEqual([]);
    // 7 is still raised when crossed.
    const seven = applyCheck(record, twoNodes(x, z), x.notAfter - 8 * DAY + 1, policy);
    expect(seven.events.map((e) => [e.type, e.data.threshold])).toEqual([["certificate.expiring", 7]]);
  });
});
