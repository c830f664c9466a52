/**
 * CONTRACT §15: 402 watch_limit_reached beyond the plan's watches — "plans: free 1, pro 10, enterprise
 * 1000". A pro organization (no override) keeps 10 watches in a mode, an enterprise one 1000; one more
 * is refused.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

test("the pro plan allows 10 watches: the 11th is 402 watch_limit_reached", async () => {
  const org = await h.core.services.admin.createOrganization({ name: "Pro", plan: "pro" });
  const owner = await h.makeKey("owner", "live", org.id);
  const add = (n: number) => h.request("POST", "/v1/watches", { body: { domain: `w${n}.pro-limit.test` }, key: owner.key });
  for (let n = 0; n < 10; n++) expectData(await add(n), 201);
  const refused = await add(10);
  expectError(refused, 402, "watch_limit_reached");
  expect(refused.body.error.message).toContain("allows 10 watches");
});

test("the enterprise plan allows 1000 watches: the 1001st is 402 watch_limit_reached", async () => {
  const org = await h.core.services.admin.createOrganization({ name: "Enterprise", plan: "enterprise" });
  const owner = await h.makeKey("owner", "live", org.id);
  const add = (n: number) => h.request("POST", "/v1/watches", { body: { domain: `w${n}.enterprise-limit.test` }, key: owner.key });
  for (let n = 0; n < 1000; n++) expect((await add(n)).status).toBe(201);
  expectError(await add(1000), 402, "watch_limit_reached");
}, 60_000);
