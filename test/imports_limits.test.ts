/**
 * Imports' limits at their edges (CONTRACT §16): exactly 10,000 items is accepted (202), and an item
 * whose UTF-8 bytes exceed POST's 64 KiB while its characters do not (multi-byte text) fails alone with
 * POST's 413 payload_too_large, as POST answers that body, not with what its fields would get.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

describe("POST /v1/imports at its limits", () => {
  test("exactly 10,000 items: 202 with total 10,000 (the contract's upper bound is inclusive)", async () => {
    const certificates = Array.from({ length: 10_000 }, (_, i) => ({ domain: `s${i}.example.com`, bogus: 1 }));
    const created = expectData(await h.request("POST", "/v1/imports", { body: { certificates } }), 202);
    expect(created).toMatchObject({ status: "running", total: 10_000, processed: 0 });
  });

  test("an item of 22,000 three-byte characters (66,000+ bytes, fewer than 64 Ki characters) fails alone with POST's 413", async () => {
    // 22,000 characters but 66,000 bytes of UTF-8: over POST's 64 KiB limit, which counts bytes.
    const over = { domain: "euros.example.com", name: "€".repeat(22_000) };
    const post = await h.request("POST", "/v1/certificates", { body: over });
    expectError(post, 413, "payload_too_large");
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: [over] } }), 202);
    await h.core.services.imports!.loop.runDue();
    const done = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
    expect(done.results).toEqual([{ index: 0, status: "failed", certificateId: null, error: post.body.error }]);
  });
});

describe("the in-memory store (createCertkeeper({ database: \":memory:\" })) holds imports to the same bound", () => {
  test("an organization runs at most 10 imports at once in a mode: the 11th is 429 rate_limit_exceeded", async () => {
    const memory = await createHarness({ store: "memory" });
    try {
      const post = () => memory.request("POST", "/v1/imports", { body: { certificates: [{ domain: "not a domain" }] } });
      // The worker is not running: all stay running.
      for (let i = 0; i < 10; i++) expectData(await post(), 202);
      const refused = await post();
      expectError(refused, 429, "rate_limit_exceeded");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    } finally {
      await memory.close();
    }
  });
});
