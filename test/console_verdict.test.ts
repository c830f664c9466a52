/**
 * The certificate page's sentence (CONTRACT §23) for problems that leave the status valid: a renewal
 * overdue under the days policy, an issuance not deployed everywhere, CAA that forbids the issuer, a
 * DANE or MTA-STS mismatch. Each says what is wrong and what to do, never "nothing to do".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { DAY } from "./support/pki.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";
import type { CertificateRecord } from "../core/base/records.ts";

let h: Harness;
let owner: WebUser;
const now = Date.now();

beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

async function seed(domain: string, fields: Partial<CertificateRecord> & { notBefore?: number; notAfter?: number }): Promise<string> {
  const scope = { organizationId: h.org.id, mode: "live" as const };
  const record = certificateRecord(scope, { domain, name: domain, lastCheckedAt: now, nextCheckAt: now + 365 * DAY, ...fields });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  return record.id;
}

async function verdictOf(id: string): Promise<{ status: string; sentence: string; api: any }> {
  const page = await owner.browser.get(`/certificates/${id}?mode=live`);
  expect(page.status).toBe(200);
  const m = /<p class="verdict" id="verdict" data-status="(\w+)">([^<]*)<\/p>/.exec(page.text)!;
  const api = expectData(await h.request("GET", `/v1/certificates/${id}`), 200) as any;
  return { status: m[1]!, sentence: m[2]!, api };
}

describe("the certificate page's sentence for problems that leave the status valid", () => {
  test("CAA forbids the issuer (warning caa_forbids_issuer): the next renewal will fail, not 'nothing to do'", async () => {
    const id = await seed("caa.sentence.example", {
      notBefore: now - 10 * DAY,
      notAfter: now + 80 * DAY,
      dns: { caa: { status: "forbidden", issuerDomain: "letsencrypt.org", blocking: null as any } },
    });
    const { status, sentence, api } = await verdictOf(id);
    expect(api.warnings).toContain("caa_forbids_issuer");
    expect(status).toBe("valid");
    expect(sentence).not.toContain("nothing to do");
    expect(sentence).toMatch(/CAA/);
  });

  test("an issuance not deployed (deployment pending): says so and what to do, not 'nothing to do'", async () => {
    const scope = { organizationId: h.org.id, mode: "live" as const };
    const record = certificateRecord(scope, { domain: "lb.sentence.example", name: "lb", lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 30 * DAY, notAfter: now + 60 * DAY });
    record.endpoints = ["192.0.2.1", "192.0.2.2"].map((address) => ({ address, fingerprint: record.fingerprint, details: record.details, problem: null, failure: null, tls: null }));
    record.deployment = { issuedAt: now - 2 * DAY, notAfter: now + 90 * DAY, fingerprintSha256: null, issuer: "Let's Encrypt", seenAt: now - 2 * DAY, announced: true } as any;
    expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
    const { status, sentence, api } = await verdictOf(record.id);
    expect(api.deployment).not.toBeNull();
    expect(status).toBe("valid");
    expect(sentence).not.toContain("nothing to do");
    expect(sentence).toMatch(/deploy|install/i);
  });

  test("renewal overdue under the days policy (renewal.state overdue, status valid): not 'nothing to do'", async () => {
    // 100-day lifetime, 80 days in: the deadline (75 days) has passed; 20 days left, thresholds [7] keep it valid.
    const id = await seed("overdue-days.sentence.example", { notBefore: now - 80 * DAY, notAfter: now + 20 * DAY, alertPolicy: "days", alertThresholds: [7] });
    const { status, sentence, api } = await verdictOf(id);
    expect(api.renewal.state).toBe("overdue");
    expect(status).toBe("valid");
    expect(sentence).not.toContain("nothing to do");
  });

  test("DANE mismatch on an smtp certificate (warning dane_mismatch): not 'nothing to do'", async () => {
    const scope = { organizationId: h.org.id, mode: "live" as const };
    const record = certificateRecord(scope, { domain: "mx.sentence.example", name: "mx", port: 25, protocol: "smtp", lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now + 80 * DAY });
    record.endpoints = [{ address: "192.0.2.9", fingerprint: record.fingerprint, details: record.details, problem: null, failure: null, tls: null, dane: { status: "mismatch", validated: true } } as any];
    expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
    const { status, sentence, api } = await verdictOf(record.id);
    expect(api.warnings).toContain("dane_mismatch");
    expect(status).toBe("valid");
    expect(sentence).not.toContain("nothing to do");
  });

  test("MTA-STS mismatch on an smtp certificate (warning mta_sts_mismatch): not 'nothing to do'", async () => {
    const id = await seed("mx2.sentence.example", {
      port: 25,
      protocol: "smtp",
      notBefore: now - 10 * DAY,
      notAfter: now + 80 * DAY,
      dns: { mtaSts: { mailDomain: "sentence.example", id: "1", policy: null, fetchedAt: now, mismatch: true } },
    });
    const { status, sentence, api } = await verdictOf(id);
    expect(api.warnings).toContain("mta_sts_mismatch");
    expect(status).toBe("valid");
    expect(sentence).not.toContain("nothing to do");
  });
});
