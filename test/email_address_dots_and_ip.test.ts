/**
 * CONTRACT §6: "`email`: `config.email`, a valid address, else `invalid_config`." An address whose
 * local part starts or ends with a dot or holds two dots in a row is not an RFC 5321/5322 address
 * (dot-atom), and "a@1.2.3.4" is an IP written as a domain (no address-literal brackets, numeric TLD;
 * §5's own rule refuses a last label of all digits): each is 400 invalid_config.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

test.each([
  ["a local part starting with a dot", ".ops@example.com"],
  ["a local part ending with a dot", "ops.@example.com"],
  ["two dots in a row in the local part", "ops..team@example.com"],
  ["an IPv4 address written as the domain", "ops@192.0.2.1"],
])("%s is not a valid address: 400 invalid_config", async (_, email) => {
  const response = await h.request("POST", "/v1/channels", { body: { type: "email", name: "mail", config: { email } } });
  expectError(response, 400, "invalid_config");
});
