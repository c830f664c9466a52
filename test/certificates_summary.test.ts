/**
 * GET /v1/certificates/summary: counts per status and expiries per week for the next 12 weeks, in the
 * caller's organization and mode only; read by any key, refused like any other route without one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { DAY } from "../core/base/mod.ts";

let h: Harness;
const WEEK = 7 * DAY;
const now = Date.now();

beforeAll(async () => {
  h = await createHarness();
  const live = { organizationId: h.org.id, mode: "live" as "live" };
  const test = { organizationId: h.org.id, mode: "test" as "live" };
  const add = (scope: typeof live, overrides: Parameters<typeof certificateRecord>[1]) =>
    h.store.certificates.insert(certificateRecord(scope, { lastCheckedAt: now, notBefore: now - 30 * DAY, ...overrides }), { limit: 1000, events: [] });
  await add(live, { notAfter: now - DAY }); // expired
  await add(live, { notAfter: now + 2 * DAY }); // week 0, expiring
  await add(live, { notAfter: now + 9 * DAY, problem: "self_signed" }); // week 1, invalid
  await add(live, { notAfter: now + 9 * DAY + 1000 }); // week 1, expiring
  await add(live, { notAfter: now + 60 * DAY, failure: "timeout" }); // week 8, unreachable
  await add(live, { notAfter: now + 83 * DAY }); // week 11, valid
  await add(live, { notAfter: now + 200 * DAY }); // beyond: valid
  await add(test, { notAfter: now + 3 * DAY });
});
afterAll(() => h.close());

describe("GET /v1/certificates/summary", () => {
  test("counts each status and the certificates expiring in each of the next 12 weeks", async () => {
    const data = expectData(await h.request("GET", "/v1/certificates/summary"), 200);
    expect(data.total).toBe(7);
    expect(data.byStatus).toEqual({ expired: 1, revoked: 0, unreachable: 1, invalid: 1, expiring: 2, valid: 2 });
    expect(data.expiringPerWeek.map((w: any) => w.count)).toEqual([1, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1]);
    const first = data.expiringPerWeek[0];
    expect(Date.parse(first.until) - Date.parse(first.from)).toBe(WEEK);
    expect(Math.abs(Date.parse(first.from) - now)).toBeLessThan(60_000);
    for (let i = 1; i < 12; i++) expect(data.expiringPerWeek[i].from).toBe(data.expiringPerWeek[i - 1].until);
  });

  test("sees only the key's mode, and member keys may read it", async () => {
    const testData = expectData(await h.request("GET", "/v1/certificates/summary", { key: h.keys.test.key }), 200);
    expect(testData.total).toBe(1);
    expect(testData.expiringPerWeek[0].count).toBe(1);
    expect(expectData(await h.request("GET", "/v1/certificates/summary", { key: h.keys.member.key }), 200).total).toBe(7);
  });

  test("is refused without a key, and with a query parameter it does not take", async () => {
    expectError(await h.request("GET", "/v1/certificates/summary", { key: null }), 401, "missing_api_key");
    expectError(await h.request("GET", "/v1/certificates/summary?weeks=4"), 400, "invalid_request");
  });
});

describe("POST /v1/watches/{id}/poll", () => {
  test("answers the watch and makes it due now; a missing watch is 404; a member key is refused", async () => {
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: "poll.example" } }), 201);
    const scope = { organizationId: h.org.id, mode: "live" as const };
    await pollFinishedADayAgo(h.store, scope, watch.id);
    const polled = expectData(await h.request("POST", `/v1/watches/${watch.id}/poll`), 200);
    expect(polled).toMatchObject({ id: watch.id, domain: "poll.example", lastError: null, lastPolledAt: expect.any(String) });
    expect((await h.store.watches.get(scope, watch.id))!.nextPollAt).toBeLessThanOrEqual(Date.now());
    expectError(await h.request("POST", "/v1/watches/wch_0000000000000000missing/poll"), 404, "watch_not_found");
    expectError(await h.request("POST", `/v1/watches/${watch.id}/poll`, { key: h.keys.member.key }), 403, "permission_denied");
  });
});

/** Leases the watch and saves a poll that makes it due a day from now, as a finished poll does. */
async function pollFinishedADayAgo(store: Harness["store"], scope: { organizationId: string; mode: "live" }, id: string) {
  const now = Date.now();
  const claimed = (await store.watches.claimDue({ owner: "test", now, leaseUntil: now + 60_000, limit: 1000 })).find((w) => w.id === id)!;
  const saved = await store.watches.savePoll(
    { id, owner: "test", cursor: claimed.cursor, newIssuances: 0, baselineDone: true, pendingNames: [], lastPolledAt: now, lastError: null, nextPollAt: now + DAY, release: true, updatedAt: now },
    [],
  );
  expect(saved).toBe(true);
  expect((await store.watches.get(scope, id))!.nextPollAt).toBe(now + DAY);
}
