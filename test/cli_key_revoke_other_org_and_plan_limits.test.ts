/**
 * What `key revoke --id KEY --org ORG` and `org update --plan P` rest on (CONTRACT §2, §23): a key id
 * of another organization than --org names no key there (nothing revoked), and a new plan brings its
 * own limits.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { PLAN_LIMITS } from "../core/base/records.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

test("a key id looked up within another organization is not found there, and the key keeps working", async () => {
  const admin = h.core.services.admin;
  const other = await admin.createOrganization({ name: "Other" });
  await expect(admin.findApiKey(h.keys.member.id, { organizationId: other.id })).rejects.toMatchObject({ code: "invalid_request" });
  expect((await admin.findApiKey(h.keys.member.id, { organizationId: h.org.id })).id).toBe(h.keys.member.id);
  expectData(await h.request("GET", "/v1/certificates", { key: h.keys.member.key }), 200);
});

test("org update --plan brings the new plan's limits, replacing limits set before", async () => {
  const admin = h.core.services.admin;
  const org = await admin.createOrganization({ name: "Upgrading", plan: "free", limits: { certificates: 3, channels: 1 } });
  const updated = await admin.updateOrganization(org.id, { plan: "pro" });
  expect(updated.plan).toBe("pro");
  expect(updated.limits).toMatchObject({ certificates: PLAN_LIMITS.pro.certificates, channels: PLAN_LIMITS.pro.channels, requestsPerMinute: PLAN_LIMITS.pro.requestsPerMinute });
  // Applies from the next request: a second channel is accepted now.
  const key = await h.makeKey("owner", "live", org.id);
  for (const name of ["first", "second"]) {
    expectData(await h.request("POST", "/v1/channels", { key: key.key, body: { type: "email", name, config: { email: `${name}@acme.test` } } }), 201);
  }
  expectError(await h.request("GET", "/v1/nothing-here", { key: key.key }), 404, "not_found");
});
