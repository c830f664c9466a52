/**
 * CONTRACT §19: a window ending earlier than the previous answer's "means the CA asks for early
 * replacement …: one `certificate.renewal_requested` per serial and window end …, under both policies."
 * CONTRACT §11: the status is "computed over the answering endpoints": a request about a leaf another
 * address serves is announced, naming it in data.endpoint.
 *
 * Also while one forgotten node still serves an expired leaf (the certificate-level one, expiring
 * first): the CA's request about the leaf the other nodes serve is announced at the check that received
 * it, under either policy, as that leaf's renewal_overdue and revocation are.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { AlertPolicy, CertificateDetails, CertificateRecord, RenewalInfo } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";
import { nodesOutcome } from "./support/nodes_outcome.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };

function twoNodes(a: CertificateDetails, b: CertificateDetails, at: number): CheckOutcome {
  return nodesOutcome([["127.0.0.1", a], ["127.0.0.2", b]], at);
}

describe("a CA's request about another address's leaf while the certificate-level leaf has expired", () => {
  for (const alertPolicy of ["days", "renewal"] as AlertPolicy[]) {
    test(`${alertPolicy}: the request is announced at the check that received it, naming the address`, () => {
      const policy = { intervalMs: 6 * HOUR, alertPolicy, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
      const domain = `stale-node-${alertPolicy}.example.com`;
      // Node .1 was forgotten: it still serves a leaf that expired a day ago.
      const stale = certificateDetails(domain, { notBefore: NOW - 91 * DAY, notAfter: NOW - DAY });
      // Node .2 serves the current leaf, 10 days old; the CA's normal window is weeks away.
      const normalInfo: RenewalInfo = { window: { start: NOW + 50 * DAY, end: NOW + 51 * DAY }, explanationUrl: null, checkedAt: NOW - 6 * HOUR, requestedEnd: null, nextAt: NOW, lastError: null };
      const current = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY, renewalInfo: normalInfo });
      let record: CertificateRecord = certificateRecord(scope, { domain, details: stale, alertPolicy, alertThresholds: [30, 14, 7, 3, 1] });
      record = applyCheck(record, twoNodes(stale, current, NOW - 6 * HOUR), NOW - 6 * HOUR, policy, { isNew: true }).record;
      // The CA now asks for the current leaf to be replaced (its window moved to end an hour from now).
      const requestedInfo: RenewalInfo = { window: { start: NOW - HOUR, end: NOW + HOUR }, explanationUrl: "https://ca.example/incident", checkedAt: NOW, requestedEnd: NOW + HOUR, nextAt: NOW + 6 * HOUR, lastError: null };
      const asked = { ...current, renewalInfo: requestedInfo };
      const checked = applyCheck(record, twoNodes(stale, asked, NOW), NOW, policy);
      const requested = checked.events.filter((e) => e.type === "certificate.renewal_requested");
      expect(requested).toHaveLength(1);
      expect((requested[0]!.data.endpoint as { address: string; serialNumber: string })).toMatchObject({ address: "127.0.0.2", serialNumber: current.serialNumber });
    });
  }
});
