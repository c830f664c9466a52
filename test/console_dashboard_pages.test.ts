/**
 * The console's data layer (CONTRACT §23) where no test looked: a dashboard page that resumes inside
 * a group and runs on into the next one; no "Next page" when nothing is left; a forged cursor refused;
 * a certificate's page shows its 20 newest events, found among more than one page of the
 * organization's events; and the summary's first week starts now. Through core.accounts' workspace
 * and console, as a signed-in owner, and GET /v1/certificates/summary.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { DAY } from "./support/pki.ts";
import { certificateRecord, eventRecord } from "./support/store_conformance/factories.ts";
import type { Actor } from "../core/pipeline/pipeline.ts";
import type { CertificateRecord } from "../core/base/records.ts";

let h: Harness;
const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
let actor: Actor;
const live = () => ({ organizationId: h.org.id, mode: "live" as const });

beforeAll(async () => {
  h = await createHarness({ clock, passwords: quickPasswords, limits: { requestsPerMinute: 100_000, certificates: 100_000 } });
  const user = await h.core.services.admin.createUser({ organizationId: h.org.id, email: `owner-${crypto.randomUUID().slice(0, 8)}@acme.test`, role: "owner", password: "correct horse battery staple" });
  actor = { user, organization: h.org } as unknown as Actor;
});
afterAll(async () => {
  await h?.close();
});

async function seed(overrides: Parameters<typeof certificateRecord>[1]): Promise<CertificateRecord> {
  const now = clock.now();
  const record = certificateRecord(live(), { lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now + 80 * DAY, alertPolicy: "days", ...overrides });
  expect(await h.store.certificates.insert(record, { limit: 100_000, events: [] })).toBe("created");
  return record;
}

const expiringEvent = (record: CertificateRecord, createdAt: number) =>
  eventRecord(live(), { certificateId: record.id, createdAt, data: { certificate: { id: record.id, domain: record.domain, daysUntilExpiry: 29 }, threshold: 30 } });

describe("the dashboard's pages (console.dashboard)", () => {
  test("a page that resumes inside a group and runs on into the next one shows each certificate once, in order", async () => {
    const now = clock.now();
    const tag = "resume-across";
    for (let i = 0; i < 3; i++) await seed({ domain: `expired-${i}.resume.example`, tags: [tag], notBefore: now - 40 * DAY, notAfter: now - (i + 1) * DAY });
    for (let i = 0; i < 2; i++) await seed({ domain: `valid-${i}.resume.example`, tags: [tag], notAfter: now + (80 + i) * DAY });
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 10; n++) {
      const page = await h.core.accounts.console.as(actor, "live").dashboard({ tag, limit: 2, ...(cursor ? { cursor } : {}) });
      pages.push(page.certificates.map((c) => c.domain));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(pages).toEqual([
      ["expired-2.resume.example", "expired-1.resume.example"],
      ["expired-0.resume.example", "valid-0.resume.example"],
      ["valid-1.resume.example"],
    ]);
  });

  test("a page filled exactly by the last certificates has no next page", async () => {
    const now = clock.now();
    const tag = "exact-end";
    for (let i = 0; i < 2; i++) await seed({ domain: `expired-${i}.exact-end.example`, tags: [tag], notBefore: now - 40 * DAY, notAfter: now - (i + 1) * DAY });
    const page = await h.core.accounts.console.as(actor, "live").dashboard({ tag, limit: 2 });
    expect(page.certificates.map((c) => c.domain)).toEqual(["expired-1.exact-end.example", "expired-0.exact-end.example"]);
    expect(page.nextCursor).toBeNull();
  });

  test("a cursor naming no group (a negative one) is refused, not read as the first page", async () => {
    const forged = Buffer.from(JSON.stringify([-1, null])).toString("base64url");
    const refusal = await h.core.accounts.console.as(actor, "live").dashboard({ cursor: forged }).then(
      () => null,
      (error: { code?: string }) => error.code,
    );
    expect(refusal).toBe("invalid_request");
  });
});

describe("a certificate's page (workspace.certificate)", () => {
  test("shows the certificate's 20 newest events, newest first", async () => {
    const mine = await seed({ domain: "many-events.page.example" });
    const at = clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const event = expiringEvent(mine, at - (25 - i) * 1000);
      await h.store.events.insert(event, []);
      ids.push(event.id);
    }
    const detail = await h.core.accounts.workspace.as(actor, "live").certificate(mine.id);
    expect(detail.events.map((e) => e.id)).toEqual(ids.slice(5).reverse());
  });

  test("finds the certificate's events behind more than a page (100) of the organization's newer ones", async () => {
    const mine = await seed({ domain: "older-events.page.example" });
    const other = await seed({ domain: "busy.page.example" });
    const at = clock.now();
    const own = expiringEvent(mine, at - 200_000);
    await h.store.events.insert(own, []);
    for (let i = 0; i < 150; i++) await h.store.events.insert(expiringEvent(other, at - 150_000 + i * 1000), []);
    const detail = await h.core.accounts.workspace.as(actor, "live").certificate(mine.id);
    expect(detail.events.map((e) => e.id)).toEqual([own.id]);
  });
});

describe("GET /v1/certificates/summary", () => {
  test("the first week runs from now to seven days on: a certificate expiring in six and a half days is in it", async () => {
    const clock2 = new FakeClock(Date.UTC(2026, 5, 1, 12));
    const h2 = await createHarness({ clock: clock2 });
    try {
      const now = clock2.now();
      const notAfter = now + 6 * DAY + DAY / 2;
      const record = certificateRecord({ organizationId: h2.org.id, mode: "live" }, { lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter, alertPolicy: "days" });
      expect(await h2.store.certificates.insert(record, { limit: 100, events: [] })).toBe("created");
      const data = expectData(await h2.request("GET", "/v1/certificates/summary"), 200);
      expect(data.expiringPerWeek[0]).toEqual({ from: new Date(now).toISOString(), until: new Date(now + 7 * DAY).toISOString(), count: 1 });
      expect(data.expiringPerWeek[1].count).toBe(0);
    } finally {
      await h2.close();
    }
  });
});
