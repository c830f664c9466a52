/** Imports and who may see or make them (CONTRACT §3): members read only, other organizations and modes see nothing. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { describeAuthCases } from "./support/auth_cases.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const body = { certificates: [{ domain: "example.com" }] };

describeAuthCases("POST /v1/imports", () => h, (harness, headers) => harness.request("POST", "/v1/imports", { key: null, headers, body }));

describe("imports across keys", () => {
  test("a member key may not import (403) but may read an import", async () => {
    expectError(await h.request("POST", "/v1/imports", { key: h.keys.member.key, body }), 403, "permission_denied");
    const { id } = expectData(await h.request("POST", "/v1/imports", { body }), 202);
    expect(expectData(await h.request("GET", `/v1/imports/${id}`, { key: h.keys.member.key }), 200).id).toBe(id);
  });

  test("another organization's import, or the other mode's, is answered as missing", async () => {
    const { id } = expectData(await h.request("POST", "/v1/imports", { body }), 202);
    const org = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
    const stranger = await h.makeKey("owner", "live", org.id);
    expectError(await h.request("GET", `/v1/imports/${id}`, { key: stranger.key }), 404, "import_not_found");
    expectError(await h.request("GET", `/v1/imports/${id}`, { key: h.keys.test.key }), 404, "import_not_found");
  });
});
