/**
 * What the settings area's data layer assembles (CONTRACT §17, §23) where no test looked: a
 * certificate's page lists that certificate's events only; the dashboard finds certificates by domain
 * beside the problem groups, never shows more than a page's worth across groups, and puts certificates
 * of the same expiry in domain order; the summary counts a certificate that expires this very
 * millisecond in the first week, and its first week starts now. Also a dashboard page that resumes
 * inside a group and runs on into the next one; no "Next page" when nothing is left; a forged cursor
 * refused; a certificate's page shows its 20 newest events, found among more than one page of the
 * organization's events. Through core.accounts' workspace and console, as a signed-in owner, and
 * GET /v1/certificates/summary.
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

describe("a certificate's page (workspace.certificate)", () => {
  test("lists the events of that certificate only, not those of another certificate of the organization", async () => {
    const mine = await seed({ domain: "mine.page.example" });
    const other = await seed({ domain: "other.page.example" });
    const at = clock.now();
    const own = eventRecord(live(), { certificateId: mine.id, createdAt: at - 2000, data: { certificate: { id: mine.id, domain: mine.domain, daysUntilExpiry: 29 }, threshold: 30 } });
    const foreign = eventRecord(live(), { certificateId: other.id, createdAt: at - 1000, data: { certificate: { id: other.id, domain: other.domain, daysUntilExpiry: 13 }, threshold: 14 } });
    await h.store.events.insert(own, []);
    await h.store.events.insert(foreign, []);
    const detail = await h.core.accounts.workspace.as(actor, "live").certificate(mine.id);
    expect(detail.certificate.id).toBe(mine.id);
    expect(detail.events.map((e) => e.id)).toEqual([own.id]);
  });
});

describe("the removal's confirmation (workspace.certificateToRemove)", () => {
  test("is refused to a member as the removal would be, and shows the certificate to an owner", async () => {
    const record = await seed({ domain: "confirm.remove.example" });
    const member = await h.core.services.admin.createUser({ organizationId: h.org.id, email: `member-${crypto.randomUUID().slice(0, 8)}@acme.test`, role: "member", password: "correct horse battery staple" });
    const asMember = h.core.accounts.workspace.as({ user: member, organization: h.org } as unknown as Actor, "live");
    const refusal = await asMember.certificateToRemove(record.id).then(
      () => null,
      (error: { code?: string }) => error.code,
    );
    expect(refusal).toBe("permission_denied");
    expect((await h.core.accounts.workspace.as(actor, "live").certificateToRemove(record.id)).id).toBe(record.id);
  });
});

describe("the dashboard (console.dashboard)", () => {
  test("the domain filter holds in every problem group", async () => {
    const now = clock.now();
    // One expired and one valid certificate for each of two names: the groups are filtered alike.
    const wanted = [
      await seed({ domain: "shop.wanted-domain.example", notBefore: now - 40 * DAY, notAfter: now - DAY }),
      await seed({ domain: "www.wanted-domain.example" }),
    ];
    await seed({ domain: "shop.unrelated.example", notBefore: now - 40 * DAY, notAfter: now - DAY });
    await seed({ domain: "www.unrelated.example" });
    const page = await h.core.accounts.console.as(actor, "live").dashboard({ domain: "wanted-domain" });
    expect(page.certificates.map((c) => c.domain).sort()).toEqual(wanted.map((c) => c.domain).sort());
  });

  test("a page never holds more than its limit, whatever the groups it spans; the next page goes on without a gap", async () => {
    const now = clock.now();
    const tag = "span-limit";
    // Two expired (the first group) and three valid ones (a later group), all under one tag.
    for (let i = 0; i < 2; i++) await seed({ domain: `expired-${i}.span.example`, tags: [tag], notBefore: now - 40 * DAY, notAfter: now - (i + 1) * DAY });
    for (let i = 0; i < 3; i++) await seed({ domain: `valid-${i}.span.example`, tags: [tag], notAfter: now + (80 + i) * DAY });
    const acting = () => h.core.accounts.console.as(actor, "live");
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await acting().dashboard({ tag, limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.certificates.length).toBeLessThanOrEqual(3);
      seen.push(...page.certificates.map((c) => c.domain));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(["expired-1.span.example", "expired-0.span.example", "valid-0.span.example", "valid-1.span.example", "valid-2.span.example"]);
  });

  test("a page filled exactly at the end of a group still leads to a later group holding a single certificate", async () => {
    const now = clock.now();
    const tag = "boundary-one";
    for (let i = 0; i < 2; i++) await seed({ domain: `expired-${i}.boundary.example`, tags: [tag], notBefore: now - 40 * DAY, notAfter: now - (i + 1) * DAY });
    await seed({ domain: "valid.boundary.example", tags: [tag] });
    const first = await h.core.accounts.console.as(actor, "live").dashboard({ tag, limit: 2 });
    expect(first.certificates.map((c) => c.domain)).toEqual(["expired-1.boundary.example", "expired-0.boundary.example"]);
    expect(first.nextCursor).not.toBeNull();
    const second = await h.core.accounts.console.as(actor, "live").dashboard({ tag, limit: 2, cursor: first.nextCursor! });
    expect(second.certificates.map((c) => c.domain)).toEqual(["valid.boundary.example"]);
    expect(second.nextCursor).toBeNull();
  });

  test("certificates of the same expiry in one group come in domain order, whatever their ids", async () => {
    const notAfter = clock.now() + 200 * DAY;
    const tag = "same-expiry";
    // Inserted so that ids (random) cannot be relied on: many names, one expiry.
    const names = ["delta", "alpha", "echo", "charlie", "bravo", "foxtrot", "golf", "hotel"].map((n) => `${n}.same.example`);
    for (const domain of names) await seed({ domain, tags: [tag], notAfter });
    const page = await h.core.accounts.console.as(actor, "live").dashboard({ tag });
    expect(page.certificates.map((c) => c.domain)).toEqual([...names].sort());
  });
});

describe("GET /v1/certificates/summary", () => {
  test("a certificate that expires at this very moment is not expired yet and counts in the first week", async () => {
    const clock2 = new FakeClock(Date.UTC(2026, 5, 1, 12, 0, 0, 123));
    const h2 = await createHarness({ clock: clock2 });
    try {
      const now = clock2.now();
      const record = certificateRecord({ organizationId: h2.org.id, mode: "live" }, { lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now, alertPolicy: "days" });
      expect(await h2.store.certificates.insert(record, { limit: 100, events: [] })).toBe("created");
      const data = expectData(await h2.request("GET", "/v1/certificates/summary"), 200);
      expect(data.byStatus.expired).toBe(0);
      expect(data.byStatus.expiring).toBe(1);
      expect(data.expiringPerWeek[0]).toEqual({ from: new Date(now).toISOString(), until: new Date(now + 7 * DAY).toISOString(), count: 1 });
      expect(data.expiringPerWeek.reduce((n: number, w: any) => n + w.count, 0)).toBe(1);
    } finally {
      await h2.close();
    }
  });
});

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
