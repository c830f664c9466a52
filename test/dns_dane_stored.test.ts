/**
 * An endpoint's `dane` as stored and shown (CONTRACT §22: `dane: { status, validated }`): a check whose
 * verdict differs from the stored one only in `validated` (the zone got signed, or a validating resolver
 * was put in front) replaces it, and the certificate's view shows the new value.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import { presentCertificate } from "../core/certificates/mod.ts";
import type { CertificateRecord, DaneVerdict } from "../core/base/records.ts";
import { HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: HOUR, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

describe("dane.validated changing alone", () => {
  test("match, not validated, then match, validated: the stored endpoint and the view show validated: true", () => {
    const domain = "mx.example.com";
    const details = certificateDetails(domain);
    const withDane = (dane: DaneVerdict): CheckOutcome => {
      const outcome = servedOutcome(details) as Extract<CheckOutcome, { ok: true }>;
      return { ...outcome, endpoints: outcome.endpoints!.map((endpoint) => ({ ...endpoint, dane })) };
    };
    let record: CertificateRecord = certificateRecord(scope, { domain, details, protocol: "smtp" });
    record = applyCheck(record, withDane({ status: "match", validated: false }), NOW, policy, { isNew: true }).record;
    expect(presentCertificate(record, NOW).endpoints.map((e) => e.dane)).toEqual([{ status: "match", validated: false }]);
    record = applyCheck(record, withDane({ status: "match", validated: true }), NOW + HOUR, policy).record;
    expect(record.endpoints?.map((e) => e.dane)).toEqual([{ status: "match", validated: true }]);
    expect(presentCertificate(record, NOW + HOUR).endpoints.map((e) => e.dane)).toEqual([{ status: "match", validated: true }]);
  });
});
