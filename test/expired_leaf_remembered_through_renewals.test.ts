/**
 * A node that keeps serving an expired leaf (forgotten at every renewal) falls silent for days while
 * another node renews 24-hour certificates twice a day. When it answers again, its leaf is the
 * certificate-level one once more: `certificate.expired` was announced for that serial already and is
 * not announced again (CONTRACT §7: once per serial), however many leaves came and went meanwhile.
 * Found by the simulated year at 10,000 certificates.
 */
import { expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import { outcomeOfEndpoints } from "../core/monitor/endpoints_outcome.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };

function check(entries: Array<[string, CertificateDetails | null]>, at: number): CheckOutcome {
  return {
    ...outcomeOfEndpoints(
      entries.map(([address, leaf]) =>
        leaf
          ? { address, fingerprint: leaf.fingerprintSha256!, details: leaf, problem: null, failure: null, tls: null }
          : { address, fingerprint: null, details: null, problem: null, failure: "timeout" as const, tls: null, message: "did not answer" },
      ),
    ),
    at,
  };
}

for (const alertPolicy of ["days", "renewal"] as const) {
  test(`${alertPolicy}: the expired leaf of a node back after twelve renewals elsewhere is not announced expired again`, () => {
    const domain = `forgotten-${alertPolicy}.example.com`;
    const expired = certificateDetails(domain, { notBefore: NOW - 25 * HOUR, notAfter: NOW - HOUR });
    const leafAt = (n: number) => certificateDetails(domain, { notBefore: NOW + n * 12 * HOUR - HOUR, notAfter: NOW + n * 12 * HOUR + 23 * HOUR });
    const policy = { intervalMs: 2 * HOUR, alertPolicy, failuresBeforeUnreachable: 3, retryDelaysMs: [] };
    let record: CertificateRecord = certificateRecord(scope, { domain, details: expired, alertPolicy, alertThresholds: [7, 1] });
    const types: string[] = [];
    const run = (at: number, entries: Array<[string, CertificateDetails | null]>, isNew = false) => {
      const applied = applyCheck(record, check(entries, at), at, policy, { isNew });
      for (const e of applied.events) if (e.type === "certificate.expired") types.push(`${e.type} ${(e.data.certificate as { serialNumber: string }).serialNumber === expired.serialNumber ? "old" : "new"}`);
      record = applied.record;
    };
    run(NOW, [["192.0.2.1", expired], ["192.0.2.2", leafAt(0)]], true);
    expect(types).toEqual(["certificate.expired old"]);
    // Node .1 falls silent for six days; node .2 renews every twelve hours meanwhile.
    for (let n = 1; n <= 12; n++) run(NOW + n * 12 * HOUR, [["192.0.2.1", null], ["192.0.2.2", leafAt(n)]]);
    // Back, still with the expired leaf.
    run(NOW + 6 * DAY + HOUR, [["192.0.2.1", expired], ["192.0.2.2", leafAt(12)]]);
    run(NOW + 6 * DAY + 3 * HOUR, [["192.0.2.1", expired], ["192.0.2.2", leafAt(12)]]);
    expect(record.details.serialNumber).toBe(expired.serialNumber);
    expect(types).toEqual(["certificate.expired old"]);
  });
}
