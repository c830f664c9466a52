/**
 * CONTRACT §3, §16 on the SQL store (the product's store): an import is its organization's and mode's.
 * Another organization's import, or the other mode's, is 404 import_not_found, as a missing one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ store: "libsql" });
});
afterAll(async () => {
  await h.close();
});

const body = { certificates: [{ domain: "not a domain" }] };

describe("libsql store: imports across keys", () => {
  test("the other mode's import, or another organization's, is answered as missing", async () => {
    const live = expectData(await h.request("POST", "/v1/imports", { body }), 202);
    const testImport = expectData(await h.request("POST", "/v1/imports", { key: h.keys.test.key, body }), 202);
    expectError(await h.request("GET", `/v1/imports/${live.id}`, { key: h.keys.test.key }), 404, "import_not_found");
    expectError(await h.request("GET", `/v1/imports/${testImport.id}`), 404, "import_not_found");
    const org = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
    const stranger = await h.makeKey("owner", "live", org.id);
    expectError(await h.request("GET", `/v1/imports/${live.id}`, { key: stranger.key }), 404, "import_not_found");
    // Each key still sees its own.
    expect(expectData(await h.request("GET", `/v1/imports/${live.id}`), 200).id).toBe(live.id);
    expect(expectData(await h.request("GET", `/v1/imports/${testImport.id}`, { key: h.keys.test.key }), 200).id).toBe(testImport.id);
  });
});
