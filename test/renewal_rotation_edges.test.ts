/**
 * Renewals across several nodes (CONTRACT §7, §18, §20; core/monitor/check_rotation.ts): each test holds
 * one rule that no other test caught when it was changed by one line.
 *
 * - certificate.renewed is raised once per leaf, even when a forgotten node's older, overdue leaf
 *   that was owed a renewal goes away after the renewal to the current leaf was announced;
 * - a leaf another node served when its renewal_overdue covered a threshold, which then becomes the
 *   certificate-level leaf for the first time, raises no certificate.expiring for that threshold;
 * - a renewal pending while a node is silent, replaced meanwhile by a leaf that moved the
 *   certificate-level leaf again, is still announced once that node's leaf is gone.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";
import { nodesOutcome } from "./support/nodes_outcome.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };

/** One check's outcome over `entries` (address → leaf, or null for a node that did not answer). */
const nodes = (entries: Array<[string, CertificateDetails | null]>): CheckOutcome => nodesOutcome(entries);

/** Checks `steps` ([offset from NOW, nodes]) in turn; every event as `step:type:serial[:threshold|endpoint]`. */
function eventsOver(
  first: CertificateDetails,
  steps: Array<[number, Array<[string, CertificateDetails | null]>]>,
  alertPolicy: "days" | "renewal",
  alertThresholds: number[] = [30, 14, 7, 3, 1],
): string[] {
  const policy = { intervalMs: DAY, alertPolicy, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
  let record: CertificateRecord = certificateRecord(scope, { domain: first.subject, details: first, alertThresholds, alertPolicy });
  const seen: string[] = [];
  steps.forEach(([offset, entries], i) => {
    const applied = applyCheck(record, nodes(entries), NOW + offset, policy, { isNew: i === 0 });
    for (const e of applied.events) {
      const serial = (e.data.certificate as { serialNumber: string }).serialNumber;
      const endpoint = (e.data.endpoint as { address?: string } | undefined)?.address;
      seen.push(`${i}:${e.type}:${serial}${e.data.threshold !== undefined ? `:${e.data.threshold}` : ""}${endpoint ? `@${endpoint}` : ""}`);
    }
    record = applied.record;
  });
  return seen;
}

const domain = "rotation-edges.example.com";
const leaf = (serialNumber: string, notBefore: number, notAfter: number): CertificateDetails => ({
  ...certificateDetails(domain, { notBefore: NOW + notBefore, notAfter: NOW + notAfter }),
  serialNumber,
});

describe("certificate.renewed once per leaf", () => {
  test("a forgotten node's older overdue leaf going away after the renewal to the current leaf was announced raises no second certificate.renewed", () => {
    const longer = leaf("AA:01", -2 * HOUR, 90 * DAY);
    const old = leaf("AA:02", -60 * DAY, 30 * DAY);
    // A 90-day leaf issued 80 days ago: its deadline (67.5 days in) is long past.
    const forgotten = leaf("AA:03", -80 * DAY, 10 * DAY);
    // A 6-day leaf issued now: the certificate-level one from step 1 on.
    const renewed = leaf("AA:04", 0, 6 * DAY);
    const fresh = leaf("AA:05", -DAY, 89 * DAY);
    const events = eventsOver(
      old,
      [
        [0, [["192.0.2.1", longer], ["192.0.2.2", old]]],
        // .2 renews to the 6-day leaf while .1 comes back with a forgotten, overdue, older leaf.
        [30 * MINUTE, [["192.0.2.1", forgotten], ["192.0.2.2", renewed]]],
        // .1 falls silent: its old leaf may still be served.
        [HOUR, [["192.0.2.1", null], ["192.0.2.2", renewed]]],
        // .1 is back with a new leaf: the forgotten leaf is gone. The 6-day leaf was announced at step 1.
        [7 * HOUR, [["192.0.2.1", fresh], ["192.0.2.2", renewed]]],
      ],
      "renewal",
    );
    expect(events.filter((e) => e.includes("certificate.renewed"))).toEqual(["1:certificate.renewed:AA:04"]);
  });
});

describe("thresholds covered by another node's overdue alert (CONTRACT §18)", () => {
  test("that node's leaf becoming the certificate-level one for the first time raises no threshold the alert covered", () => {
    // .1 serves a 90-day leaf with 10 days left (deadline long past, thresholds 30 and 14 crossed);
    // .2 serves a 6-day leaf, the certificate-level one.
    const overdue = leaf("BB:01", -80 * DAY, 10 * DAY);
    const shortLived = leaf("BB:02", 0, 6 * DAY);
    const longer = leaf("BB:03", -60 * DAY, 30 * DAY);
    const events = eventsOver(
      shortLived,
      [
        [0, [["192.0.2.1", overdue], ["192.0.2.2", shortLived]]],
        // .2 moves to a leaf expiring after .1's: .1's overdue leaf is the certificate-level one now.
        [30 * MINUTE, [["192.0.2.1", overdue], ["192.0.2.2", longer]]],
        [90 * MINUTE, [["192.0.2.1", overdue], ["192.0.2.2", longer]]],
      ],
      "renewal",
    );
    // One renewal_overdue, for .1's leaf, at the first check; it covers 30 and 14, crossed then.
    expect(events).toEqual(["0:certificate.renewal_overdue:BB:02@192.0.2.1"]);
  });
});

describe("a renewal pending on a silent node, the certificate-level leaf moved meanwhile", () => {
  test("is announced, from the leaf the pending renewal replaced, once that node's leaf is gone", () => {
    const fresh = leaf("CC:01", -DAY, 89 * DAY);
    const overdue = leaf("CC:02", -80 * DAY, 10 * DAY);
    const shortLived = leaf("CC:03", 0, 6 * DAY);
    const older = leaf("CC:04", -60 * DAY, 30 * DAY);
    const events = eventsOver(
      overdue,
      [
        [0, [["192.0.2.1", fresh], ["192.0.2.2", overdue]]],
        // .2 renews: announced at once.
        [6 * HOUR, [["192.0.2.1", fresh], ["192.0.2.2", shortLived]]],
        // .2 falls silent (presumed to serve its 6-day leaf for 14.4 hours) while .1 serves an older leaf.
        [12 * HOUR, [["192.0.2.1", older], ["192.0.2.2", null]]],
        [18 * HOUR, [["192.0.2.1", older], ["192.0.2.2", null]]],
        // Two days later .2 is still silent (its hold is over) and .1 serves its 89-day leaf again.
        [66 * HOUR, [["192.0.2.1", fresh], ["192.0.2.2", null]]],
        [67 * HOUR, [["192.0.2.1", fresh], ["192.0.2.2", null]]],
      ],
      "days",
      [],
    );
    expect(events.filter((e) => e.includes("certificate.renewed"))).toEqual(["1:certificate.renewed:CC:03", "4:certificate.renewed:CC:01"]);
  });
});

describe("a silent node's hold on a renewal (a day, or a tenth of its leaf's lifetime when shorter)", () => {
  test("a 5-day leaf's silent node holds the renewal for 12 hours, not longer", () => {
    // Both nodes serve a 5-day leaf; .1 renews to another 5-day leaf, then .2 falls silent for good.
    const old = leaf("DD:01", -2 * DAY, 3 * DAY);
    const renewed = leaf("DD:02", -HOUR, 5 * DAY - HOUR);
    const steps: Array<[number, Array<[string, CertificateDetails | null]>]> = [
      [0, [["192.0.2.1", old], ["192.0.2.2", old]]],
      [HOUR, [["192.0.2.1", renewed], ["192.0.2.2", old]]],
    ];
    // .2 silent from 2 hours on, checked every hour for a day.
    for (let h = 2; h <= 26; h++) steps.push([h * HOUR, [["192.0.2.1", renewed], ["192.0.2.2", null]]]);
    const events = eventsOver(old, steps, "days", []);
    // Silent since step 2 (2 h): presumed to serve the old leaf for 12 hours (a tenth of 5 days);
    // the renewal is announced at the first check when that is over, 14 h (step 14).
    expect(events).toEqual(["14:certificate.renewed:DD:02"]);
  });
});

describe("a node of a newer leaf falling silent for good", () => {
  test("the older leaf the other node serves is no renewal, however long that node stays silent", () => {
    // .1 serves a 6-day leaf issued now; .2 a 90-day leaf issued a day earlier (it expires later).
    const newer = leaf("EE:01", 0, 6 * DAY);
    const older = leaf("EE:02", -DAY, 89 * DAY);
    const events = eventsOver(
      newer,
      [
        [0, [["192.0.2.1", newer], ["192.0.2.2", older]]],
        [HOUR, [["192.0.2.1", null], ["192.0.2.2", older]]],
        // Two days later .1 is still silent (past any hold): still no renewal to the older leaf.
        [49 * HOUR, [["192.0.2.1", null], ["192.0.2.2", older]]],
        [49 * HOUR + 30 * MINUTE, [["192.0.2.1", null], ["192.0.2.2", older]]],
      ],
      "days",
      [],
    );
    expect(events.filter((e) => e.includes("certificate.renewed"))).toEqual([]);
  });
});
