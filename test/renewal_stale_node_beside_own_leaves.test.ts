/**
 * A node that comes back with an OLDER leaf (issued long before, expiring sooner: a stale image) is
 * no renewal to it (CONTRACT §7: certificate.renewed is "a new certificate"; §20: a rollout never
 * flaps), whether the other nodes serve one leaf or leaves of their own; once that node serves the
 * others' leaf again, the stale leaf was replaced: one certificate.renewed, from it.
 */
import { expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";
import { nodesOutcome } from "./support/nodes_outcome.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const domain = "stale-node.example.com";
const leaf = (serialNumber: string, notBefore: number, notAfter: number): CertificateDetails => ({
  ...certificateDetails(domain, { notBefore: NOW + notBefore, notAfter: NOW + notAfter }),
  serialNumber,
});

const nodes = (entries: Array<[string, CertificateDetails]>): CheckOutcome => nodesOutcome(entries);

function renewedOver(first: CertificateDetails, steps: Array<[number, Array<[string, CertificateDetails]>]>): string[] {
  const policy = { intervalMs: DAY, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
  let record: CertificateRecord = certificateRecord(scope, { domain, details: first, alertThresholds: [] });
  const renewed: string[] = [];
  steps.forEach(([offset, entries], i) => {
    const applied = applyCheck(record, nodes(entries), NOW + offset, policy, { isNew: i === 0 });
    for (const e of applied.events) if (e.type === "certificate.renewed") renewed.push(`${i}:${(e.data.previous as { serialNumber: string }).serialNumber}->${(e.data.certificate as { serialNumber: string }).serialNumber}`);
    record = applied.record;
  });
  return renewed;
}

const own = leaf("FF:04", -2 * HOUR, 90 * DAY);
const current = leaf("FF:01", -DAY, 89 * DAY);
// Issued 85 days ago, 5 days left: a node started from a stale image.
const stale = leaf("FF:05", -85 * DAY, 5 * DAY);

test("two nodes: a node back with a stale, older leaf is no renewal; fixed, the stale leaf was replaced", () => {
  expect(
    renewedOver(current, [
      [0, [["192.0.2.2", current], ["192.0.2.3", current]]],
      [HOUR, [["192.0.2.2", current], ["192.0.2.3", stale]]],
      [2 * HOUR, [["192.0.2.2", current], ["192.0.2.3", current]]],
    ]),
  ).toEqual(["2:FF:05->FF:01"]);
});

test("three nodes, one with a leaf of its own: a node back with a stale, older leaf is no renewal either; fixed, as with two", () => {
  expect(
    renewedOver(current, [
      [0, [["192.0.2.1", own], ["192.0.2.2", current], ["192.0.2.3", current]]],
      [HOUR, [["192.0.2.1", own], ["192.0.2.2", current], ["192.0.2.3", stale]]],
      [2 * HOUR, [["192.0.2.1", own], ["192.0.2.2", current], ["192.0.2.3", current]]],
    ]),
  ).toEqual(["2:FF:05->FF:01"]);
});
