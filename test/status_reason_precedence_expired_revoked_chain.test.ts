/**
 * CONTRACT §5 (with §13, §14): which status and statusReason GET /v1/certificates/{id} and the list's
 * status filter give when two rules apply to the certificate-level leaf at once, where no test looked:
 * a leaf that has expired and was revoked is `expired` (expired comes first); a leaf that is expiring
 * for its own days left is `expiring_soon` even when a certificate above it expires sooner
 * (`chain_expiring` is only for a leaf that would otherwise be `valid`, §13).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { DAY } from "./support/pki.ts";
import { certificateDetails, certificateRecord } from "./support/store_conformance/factories.ts";
import type { CertificateRecord, RevocationState } from "../core/base/records.ts";

const NOW = Date.UTC(2026, 10, 20, 12);
const clock = new FakeClock(NOW);
let h: Harness;
const live = () => ({ organizationId: h.org.id, mode: "live" as const });

beforeAll(async () => {
  h = await createHarness({ clock });
});
afterAll(async () => {
  await h?.close();
});

async function seed(record: CertificateRecord): Promise<CertificateRecord> {
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  return record;
}

const shown = async (id: string) => {
  const view = expectData(await h.request("GET", `/v1/certificates/${id}`), 200);
  return [view.status, view.statusReason];
};
const listedAs = async (status: string) => (expectData(await h.request("GET", `/v1/certificates?status=${status}`), 200) as Array<{ id: string }>).map((c) => c.id);

describe("two rules at once on the certificate-level leaf", () => {
  test("a leaf past its notAfter that was also revoked is expired, not revoked, in GET and in the status filter", async () => {
    const revoked: RevocationState = { status: "revoked", source: "ocsp", checkedAt: NOW - 3 * DAY, revokedAt: NOW - 5 * DAY, reason: "keyCompromise", validUntil: NOW + DAY } as RevocationState;
    const record = await seed(
      certificateRecord(live(), { domain: "expired-and-revoked.example", lastCheckedAt: NOW - DAY, nextCheckAt: NOW + 365 * DAY, notBefore: NOW - 90 * DAY, notAfter: NOW - 2 * DAY, revocation: revoked }),
    );
    expect(await shown(record.id)).toEqual(["expired", "expired"]);
    expect(await listedAs("expired")).toContain(record.id);
    expect(await listedAs("revoked")).not.toContain(record.id);
  });

  test("a leaf with 10 days left, whose intermediate expires in 5, is expiring for its own days (expiring_soon), not chain_expiring", async () => {
    const domain = "leaf-and-chain.example";
    const intermediate = { subject: "certkeeper Test RSA CA", issuer: "certkeeper Test Root CA", serialNumber: "0C:1D", notAfter: NOW + 5 * DAY };
    const record = await seed(
      certificateRecord(live(), {
        domain,
        lastCheckedAt: NOW - DAY,
        nextCheckAt: NOW + 365 * DAY,
        alertPolicy: "days",
        alertThresholds: [30, 14, 7, 3, 1],
        details: certificateDetails(domain, { notBefore: NOW - 80 * DAY, notAfter: NOW + 10 * DAY, chainExpiry: intermediate }),
      }),
    );
    expect(await shown(record.id)).toEqual(["expiring", "expiring_soon"]);
    // The same intermediate under a leaf that would be valid makes it chain_expiring (§13).
    const calm = "calm-leaf.example";
    const other = await seed(
      certificateRecord(live(), {
        domain: calm,
        lastCheckedAt: NOW - DAY,
        nextCheckAt: NOW + 365 * DAY,
        alertPolicy: "days",
        alertThresholds: [7],
        details: certificateDetails(calm, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY, chainExpiry: intermediate }),
      }),
    );
    expect(await shown(other.id)).toEqual(["expiring", "chain_expiring"]);
  });
});
