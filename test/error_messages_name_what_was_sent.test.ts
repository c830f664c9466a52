/**
 * CONTRACT §4: `invalid_request` for "a field of the wrong type or out of bounds ...; the message names
 * the field" (and SPEC: a human-readable message). A number too large for a double (1e400, parsed as
 * Infinity) is refused, and the message names what was sent (Infinity), not `null`; a missing name is
 * named as required.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

test.each([
  ["port", '{"domain":"a.example.com","port":1e400}'],
  ["alertThresholds[0]", '{"domain":"a.example.com","alertThresholds":[1e400]}'],
])("%s of 1e400: 400 invalid_request naming the field, not claiming null was sent", async (field, rawBody) => {
  const response = await h.request("POST", "/v1/certificates", { rawBody, headers: { "content-type": "application/json" } });
  expectError(response, 400, "invalid_request");
  expect(response.body.error.message).toContain(`"${field}"`);
  expect(response.body.error.message).not.toContain('got "null"');
});

test("a channel without a name: the message says the field is required, not that JavaScript's undefined was sent", async () => {
  const response = await h.request("POST", "/v1/channels", { body: { type: "email", config: { email: "ops@example.com" } } });
  expectError(response, 400, "invalid_request");
  expect(response.body.error.message).toContain('"name"');
  expect(response.body.error.message).not.toContain("undefined");
});

test.each([
  ["a JSON null", { name: null }, 'got null.'],
  ["a number", { name: 5 }, 'got 5.'],
  ["a string too long", { name: "x".repeat(101) }, `got "${"x".repeat(77)}...".`],
])("a channel name that is %s: the message shows what was sent as JSON writes it, a string in quotes and nothing else", async (_, patch, ending) => {
  const created = await h.request("POST", "/v1/channels", { body: { type: "email", name: "ops", config: { email: "ops@example.com" } } });
  const response = await h.request("PATCH", `/v1/channels/${created.body.data.id}`, { body: patch });
  expectError(response, 400, "invalid_request");
  expect(response.body.error.message).toEndWith(ending);
  await h.request("DELETE", `/v1/channels/${created.body.data.id}`);
});
