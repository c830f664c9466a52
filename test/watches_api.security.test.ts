/** Watches across organizations, modes and roles: another's watch is a missing one; members only read. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe("watches: isolation and permissions", () => {
  test("another organization's watch is answered exactly as a missing one (404), never 403", async () => {
    const mine = expectData(await h.request("POST", "/v1/watches", { body: { domain: "mine.sec.test" } }), 201);
    const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
    const stranger = await h.makeKey("owner", "live", other.id);
    expectError(await h.request("GET", `/v1/watches/${mine.id}`, { key: stranger.key }), 404, "watch_not_found");
    expectError(await h.request("PATCH", `/v1/watches/${mine.id}`, { key: stranger.key, body: { autoMonitor: true } }), 404, "watch_not_found");
    expectError(await h.request("DELETE", `/v1/watches/${mine.id}`, { key: stranger.key }), 404, "watch_not_found");
    expect(expectData(await h.request("GET", "/v1/watches", { key: stranger.key }), 200)).toEqual([]);
    // The same domain may be watched by another organization.
    expectData(await h.request("POST", "/v1/watches", { key: stranger.key, body: { domain: "mine.sec.test" } }), 201);
  });

  test("test keys do not see live watches, and the reverse", async () => {
    const live = expectData(await h.request("POST", "/v1/watches", { body: { domain: "live.sec.test" } }), 201);
    expectError(await h.request("GET", `/v1/watches/${live.id}`, { key: h.keys.test.key }), 404, "watch_not_found");
    const ids = expectData(await h.request("GET", "/v1/watches?limit=100", { key: h.keys.test.key }), 200).map((w: { id: string }) => w.id);
    expect(ids).not.toContain(live.id);
  });

  test("a member key may list and get but not create, change or delete: 403 permission_denied", async () => {
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: "member.sec.test" } }), 201);
    const key = h.keys.member.key;
    expect((await h.request("GET", "/v1/watches", { key })).status).toBe(200);
    expect((await h.request("GET", `/v1/watches/${watch.id}`, { key })).status).toBe(200);
    expectError(await h.request("POST", "/v1/watches", { key, body: { domain: "member2.sec.test" } }), 403, "permission_denied");
    expectError(await h.request("PATCH", `/v1/watches/${watch.id}`, { key, body: { autoMonitor: true } }), 403, "permission_denied");
    expectError(await h.request("DELETE", `/v1/watches/${watch.id}`, { key }), 403, "permission_denied");
    // Permission comes before validation (CONTRACT §4's order).
    expectError(await h.request("POST", "/v1/watches", { key, body: { domain: "https://bad/" } }), 403, "permission_denied");
  });

  test("allowed issuers and domains are data: markup and control characters come back as given, never interpreted", async () => {
    const issuers = ["<script>alert(1)</script>", "O'Brien \"CA\""];
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: "markup.sec.test", allowedIssuers: issuers } }), 201);
    expect(expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).allowedIssuers).toEqual(issuers);
  });
});
