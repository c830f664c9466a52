/**
 * A leaf served before its notBefore gets a check at that moment (certificate.recovered), on any
 * address: isInvalid() judges every answering endpoint's leaf (`now < details.notBefore` on any of them
 * makes the certificate invalid, CONTRACT §11: the status is computed over the answering endpoints). A
 * rollout whose new leaf is installed on one node ahead of its start (the certificate-level leaf is
 * the old one, expiring first) makes the certificate invalid; at that new leaf's notBefore a check is
 * made, and certificate.recovered comes then, not at the next regular check.
 */
import { expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { certificateStatus } from "../core/certificates/status.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";
import { nodesOutcome } from "./support/nodes_outcome.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: 6 * HOUR, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

function twoNodes(a: CertificateDetails, b: CertificateDetails): CheckOutcome {
  return nodesOutcome([["127.0.0.1", a], ["127.0.0.2", b]]);
}

test("another address's leaf served before its notBefore: a check at that notBefore raises certificate.recovered", () => {
  const domain = "early-node.example.com";
  const old = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY });
  // Node .2 already serves the next leaf, valid ten minutes from now (+37 ms: off the regular grid).
  const notBefore = NOW + 10 * MINUTE + 37;
  const next = certificateDetails(domain, { notBefore, notAfter: notBefore + 120 * DAY });
  let record: CertificateRecord = certificateRecord(scope, { id: "cert_0123456789abcdefABCD", domain, details: old, alertPolicy: "days", alertThresholds: [] });
  record = applyCheck(record, twoNodes(old, old), NOW - HOUR, policy, { isNew: true }).record;
  const first = applyCheck(record, twoNodes(old, next), NOW, policy);
  expect(first.record.details.serialNumber).toBe(old.serialNumber);
  expect(first.events.map((e) => e.type)).toEqual(["certificate.invalid"]);
  // At notBefore every endpoint's leaf is valid by time alone.
  expect(certificateStatus(first.record, notBefore).status).toBe("valid");
  // A check must be due then (as for the certificate-level leaf), not at the next regular check.
  // (The regular check falls on the id's phase; this id's is more than ten minutes away.)
  expect(first.record.nextCheckAt).toBeLessThanOrEqual(notBefore);
});
