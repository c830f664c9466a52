/**
 * The certificate's status, statusReason and renewal.state are one answer everywhere (GET,
 * list ?status= and ?renewal=, /v1/certificates/summary), on both stores, at boundary moments.
 *
 * CONTRACT §5: "`status`, first that applies: `expired` (now past notAfter), `unreachable` …, `invalid` …,
 * `expiring` …, `valid`." and "`GET /v1/certificates?limit=&cursor=&status=&domain=` … `status` one value or a
 * comma list". CONTRACT §18: "`GET /v1/certificates?renewal=overdue,requested` filters on `renewal.state`".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { certificateDetails, certificateRecord } from "./support/store_conformance/factories.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import type { CertificateRecord, EndpointRecord } from "../core/base/records.ts";

const T0 = Date.UTC(2031, 4, 1, 12, 0, 0);
const STATUSES = ["expired", "revoked", "unreachable", "invalid", "expiring", "valid"];
const RENEWALS = ["not_due", "overdue", "requested"];

const forbidden = {
  caa: {
    status: "forbidden",
    issuerDomain: "letsencrypt.org",
    blocking: { name: "x", setAt: "x", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com"'], key: "k", issuers: ["let's encrypt"] },
  },
} as unknown as CertificateRecord["dns"];

function ep(address: string, details: CertificateRecord["details"] | null, extra: Partial<EndpointRecord> = {}): EndpointRecord {
  return { address, fingerprint: details ? details.fingerprintSha256! : null, details, problem: null, failure: details ? null : "timeout", tls: null, ...extra };
}

/** Records built around T0; `moments` are the boundaries worth probing. */
function scenarios(scope: { organizationId: string; mode: "live" }) {
  const out: Array<{ label: string; record: CertificateRecord }> = [];
  const moments = new Set<number>();
  const add = (label: string, record: CertificateRecord, ...at: number[]) => {
    out.push({ label, record });
    for (const m of at) for (const d of [-1, 0, 1]) moments.add(m + d);
  };
  for (const policy of ["renewal", "days"] as const) {
    // 90-day leaf: deadline at 67.5 days.
    const nb = T0 - 60 * DAY;
    const na = nb + 90 * DAY;
    const deadline = nb + 67.5 * DAY;
    {
      const d = certificateDetails(`plain-${policy}.example.com`, { notBefore: nb, notAfter: na });
      add(`plain ${policy}`, certificateRecord(scope, { domain: `plain-${policy}.example.com`, details: d, alertPolicy: policy, endpoints: [ep("127.0.0.1", d)] }), deadline, na, na - 31 * DAY);
    }
    // CAA forbids the issuer (Let's Encrypt leaf).
    {
      const d = certificateDetails(`caa-${policy}.example.com`, { notBefore: nb, notAfter: na, issuer: "Let's Encrypt" });
      add(`caa ${policy}`, certificateRecord(scope, { domain: `caa-${policy}.example.com`, details: d, alertPolicy: policy, dns: forbidden, endpoints: [ep("127.0.0.1", d)] }), deadline);
    }
    // ARI window ending at T0 + 2h.
    {
      const end = T0 + 2 * HOUR;
      const d = certificateDetails(`ari-${policy}.example.com`, {
        notBefore: nb,
        notAfter: na,
        renewalInfo: { window: { start: end - DAY, end }, explanationUrl: null, checkedAt: T0 - DAY, requestedEnd: null, nextAt: T0 + DAY, lastError: null },
      });
      add(`ari ${policy}`, certificateRecord(scope, { domain: `ari-${policy}.example.com`, details: d, alertPolicy: policy, endpoints: [ep("127.0.0.1", d)] }), end);
    }
    // Requested by the CA.
    {
      const end = T0 - DAY;
      const d = certificateDetails(`req-${policy}.example.com`, {
        notBefore: nb,
        notAfter: na,
        renewalInfo: { window: { start: end - DAY, end }, explanationUrl: null, checkedAt: T0 - DAY, requestedEnd: end, nextAt: T0 + DAY, lastError: null },
      });
      add(`requested ${policy}`, certificateRecord(scope, { domain: `req-${policy}.example.com`, details: d, alertPolicy: policy, endpoints: [ep("127.0.0.1", d)] }));
    }
    // Revoked leaf.
    {
      const d = certificateDetails(`rev-${policy}.example.com`, {
        notBefore: nb,
        notAfter: na,
        revocation: { status: "revoked", source: "crl", checkedAt: T0 - DAY, revokedAt: T0 - 2 * DAY, reason: "keyCompromise", validUntil: T0 + DAY },
      });
      add(`revoked ${policy}`, certificateRecord(scope, { domain: `rev-${policy}.example.com`, details: d, alertPolicy: policy, endpoints: [ep("127.0.0.1", d)] }));
    }
    // Chain certificate expiring before the leaf.
    {
      const chainEnd = T0 + 10 * DAY;
      const d = certificateDetails(`chain-${policy}.example.com`, {
        notBefore: T0 - 10 * DAY,
        notAfter: T0 + 80 * DAY,
        chainExpiry: { subject: "Int", issuer: "Root", serialNumber: "01", notAfter: chainEnd },
      });
      add(`chain ${policy}`, certificateRecord(scope, { domain: `chain-${policy}.example.com`, details: d, alertPolicy: policy, endpoints: [ep("127.0.0.1", d)] }), chainEnd, chainEnd - 31 * DAY);
    }
    // Several endpoints: certificate-level leaf (fresh), one overdue old leaf, one not yet valid, one unreachable.
    {
      const domain = `multi-${policy}.example.com`;
      const fresh = certificateDetails(domain, { notBefore: T0 - DAY, notAfter: T0 + 44 * DAY });
      const old = certificateDetails(domain, { notBefore: T0 - 150 * DAY, notAfter: T0 + 50 * DAY });
      const future = certificateDetails(domain, { notBefore: T0 + 3 * HOUR, notAfter: T0 + 93 * DAY });
      const oldDeadline = old.notBefore + 150 * DAY;
      add(
        `multi ${policy}`,
        certificateRecord(scope, {
          domain,
          details: fresh,
          alertPolicy: policy,
          endpoints: [ep("127.0.0.1", fresh), ep("127.0.0.2", old), ep("127.0.0.3", future), ep("127.0.0.4", null)],
        }),
        oldDeadline,
        future.notBefore,
      );
    }
    // Unreachable, with the last leaf past its deadline.
    {
      const d = certificateDetails(`down-${policy}.example.com`, { notBefore: nb, notAfter: na });
      add(`down ${policy}`, certificateRecord(scope, { domain: `down-${policy}.example.com`, details: d, alertPolicy: policy, failure: "timeout", endpoints: [ep("127.0.0.1", null)] }));
    }
  }
  return { out, moments: [...moments].filter((m) => m >= T0).sort((a, b) => a - b) };
}

for (const kind of ["memory", "libsql"] as const) {
  describe(`one answer everywhere (${kind})`, () => {
    let h: Harness;
    const clock = new FakeClock(T0);
    let moments: number[] = [];
    let labels = new Map<string, string>();

    beforeAll(async () => {
      h = await createHarness({ store: kind, clock });
      const scope = { organizationId: h.org.id, mode: "live" as const };
      const built = scenarios(scope);
      moments = built.moments;
      for (const { label, record } of built.out) {
        await h.store.certificates.insert(record, { limit: 1000, events: [] });
        labels.set(record.id, label);
      }
    });
    afterAll(() => h?.close());

    async function probe(): Promise<string[]> {
      const problems: string[] = [];
      for (const at of moments) {
        clock.set(at);
        expect(clock.now()).toBe(at);
        const all = expectData(await h.request("GET", "/v1/certificates?limit=100"), 200) as any[];
        const byStatus: Record<string, string[]> = {};
        const byRenewal: Record<string, string[]> = {};
        for (const s of STATUSES) byStatus[s] = (expectData(await h.request("GET", `/v1/certificates?limit=100&status=${s}`), 200) as any[]).map((c) => c.id).sort();
        for (const r of RENEWALS) byRenewal[r] = (expectData(await h.request("GET", `/v1/certificates?limit=100&renewal=${r}`), 200) as any[]).map((c) => c.id).sort();
        const summary = expectData(await h.request("GET", "/v1/certificates/summary"), 200);
        for (const c of all) {
          const one = expectData(await h.request("GET", `/v1/certificates/${c.id}`), 200);
          const label = `${labels.get(c.id)} @T0+${(at - T0) / HOUR}h`;
          if (one.status !== c.status || one.statusReason !== c.statusReason) problems.push(`${label}: GET ${one.status}/${one.statusReason} list ${c.status}/${c.statusReason}`);
          for (const s of STATUSES) if (byStatus[s]!.includes(c.id) !== (one.status === s)) problems.push(`${label}: GET status ${one.status} but ?status=${s} ${byStatus[s]!.includes(c.id) ? "lists" : "omits"} it`);
          for (const r of RENEWALS) if (byRenewal[r]!.includes(c.id) !== (one.renewal?.state === r)) problems.push(`${label}: GET renewal.state ${one.renewal?.state} but ?renewal=${r} ${byRenewal[r]!.includes(c.id) ? "lists" : "omits"} it`);
        }
        for (const s of STATUSES) {
          const n = all.filter((c) => c.status === s).length;
          if (summary.byStatus[s] !== n) problems.push(`@T0+${(at - T0) / HOUR}h summary.byStatus.${s} ${summary.byStatus[s]} vs ${n}`);
        }
        for (const r of RENEWALS) {
          const n = all.filter((c) => c.renewal?.state === r).length;
          if (summary.byRenewal[r] !== n) problems.push(`@T0+${(at - T0) / HOUR}h summary.byRenewal.${r} ${summary.byRenewal[r]} vs ${n}`);
        }
      }
      return problems;
    }

    test("GET, ?status=, ?renewal= and the summary agree at every boundary moment", async () => {
      expect(await probe()).toEqual([]);
    }, 120_000);

    test("and still after PATCH of alertPolicy and alertThresholds", async () => {
      clock.set(T0);
      const all = expectData(await h.request("GET", "/v1/certificates?limit=100"), 200) as any[];
      let i = 0;
      for (const c of all) {
        const body = i % 3 === 0 ? { alertPolicy: c.alertPolicy === "days" ? "renewal" : "days" } : i % 3 === 1 ? { alertThresholds: [] } : { alertPolicy: c.alertPolicy === "days" ? "renewal" : "days", alertThresholds: [0] };
        i++;
        expectData(await h.request("PATCH", `/v1/certificates/${c.id}`, { body }), 200);
      }
      expect(await probe()).toEqual([]);
    }, 120_000);
  });
}
