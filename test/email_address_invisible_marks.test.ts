/**
 * An email address holds no invisible mark that reorders or hides what is shown: U+200E LEFT-TO-RIGHT
 * MARK, U+200F RIGHT-TO-LEFT MARK, U+061C ARABIC LETTER MARK (besides the embeddings, overrides and
 * isolates) are refused, for a channel's `config.email` (400 invalid_config) and a user's email alike.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

test.each([
  ["U+200F RIGHT-TO-LEFT MARK", "ops\u200f@example.com"],
  ["U+200E LEFT-TO-RIGHT MARK", "\u200eops@example.com"],
  ["U+061C ARABIC LETTER MARK", "ops\u061c@example.com"],
])("%s in an email channel's address: 400 invalid_config", async (_, email) => {
  expectError(await h.request("POST", "/v1/channels", { body: { type: "email", name: "mail", config: { email } } }), 400, "invalid_config");
});

test("a user's email with a right-to-left mark is refused too", async () => {
  await expect(h.core.services.admin.createUser({ organizationId: h.org.id, email: "ops\u200f@example.com", role: "member" })).rejects.toThrow("is not an email address");
});
