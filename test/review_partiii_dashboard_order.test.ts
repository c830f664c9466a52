/**
 * Review (CONTRACT §23 "The dashboard lists problems first (expired, revoked, unreachable, invalid,
 * renewal overdue or requested, expiring, then valid ...)"; §18 "`renewal.state` is the same under
 * both policies"). A `days` certificate whose renewal is overdue (renewal.state "overdue", the row even
 * says "renewal overdue") is ranked by its status alone: below the merely expiring ones, among the valid.
 */
import { afterAll, expect, test } from "bun:test";
import { DAY } from "../core/base/mod.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";

let h: Harness;
afterAll(() => h?.close());

test("a renewal overdue under the days policy comes before the certificates that are only expiring", async () => {
  h = await createHarness({ limits: { requestsPerMinute: 100_000 } });
  const now = Date.now();
  const scope = { organizationId: h.org.id, mode: "live" as const };
  const add = async (domain: string, fields: Parameters<typeof certificateRecord>[1]) => {
    const record = certificateRecord(scope, { domain, name: domain, lastCheckedAt: now, ...fields });
    expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
    return record.id;
  };
  // 100-day lifetime, 20 days left, thresholds [7]: valid under days, but its renewal deadline (75 days) passed.
  const overdue = await add("stalled.days.example", { notBefore: now - 80 * DAY, notAfter: now + 20 * DAY, alertThresholds: [7], alertPolicy: "days" });
  // 85-day lifetime, 25 days left, thresholds [30]: expiring (expiring_soon); its deadline (21.25 days left) not yet.
  const expiring = await add("late.expiring.example", { notBefore: now - 60 * DAY, notAfter: now + 25 * DAY, alertThresholds: [30], alertPolicy: "days" });

  const viewOverdue = expectData(await h.request("GET", `/v1/certificates/${overdue}`), 200);
  expect([viewOverdue.status, viewOverdue.renewal.state]).toEqual(["valid", "overdue"]);
  const viewExpiring = expectData(await h.request("GET", `/v1/certificates/${expiring}`), 200);
  expect([viewExpiring.status, viewExpiring.statusReason, viewExpiring.renewal.state]).toEqual(["expiring", "expiring_soon", "not_due"]);

  const user = await h.core.services.admin.createUser({ organizationId: h.org.id, email: "viewer@acme.test", role: "owner" });
  const actor = { user, organization: (await h.store.organizations.get(h.org.id))! };
  const page = await h.core.accounts.console.as(actor as any, "live").dashboard({});
  expect(page.certificates.map((c) => c.domain)).toEqual(["stalled.days.example", "late.expiring.example"]);
});
