/**
 * A request body that is not UTF-8 is not JSON (RFC 8259 §8.1: JSON exchanged between systems MUST be
 * UTF-8), so it is malformed JSON: 400 invalid_request (CONTRACT §4), and nothing is stored, rather
 * than each invalid byte stored as U+FFFD, a name no one typed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

/** `json` as UTF-8 with the bytes of `marker` (in the JSON text) replaced by `bytes`. */
function withBytes(json: string, marker: string, bytes: number[]): Blob {
  const [before, after] = json.split(marker) as [string, string];
  const encoder = new TextEncoder();
  return new Blob([encoder.encode(before), new Uint8Array(bytes), encoder.encode(after)]);
}

test("a channel name holding bytes that are not UTF-8: 400 invalid_request, nothing stored", async () => {
  const before = expectData(await h.request("GET", "/v1/channels?limit=100"), 200).length;
  const rawBody = withBytes(JSON.stringify({ type: "email", name: "Ops MARK", config: { email: "ops@example.com" } }), "MARK", [0xff, 0xfe]);
  expectError(await h.request("POST", "/v1/channels", { rawBody, headers: { "content-type": "application/json" } }), 400, "invalid_request");
  expect(expectData(await h.request("GET", "/v1/channels?limit=100"), 200).length).toBe(before);
});

test("a watch's issuer holding a truncated UTF-8 sequence: 400 invalid_request, nothing stored", async () => {
  const before = expectData(await h.request("GET", "/v1/watches?limit=100"), 200).length;
  const rawBody = withBytes(JSON.stringify({ domain: "bytes.test", allowedIssuers: ["CA MARK"] }), "MARK", [0xe2, 0x82]);
  expectError(await h.request("POST", "/v1/watches", { rawBody, headers: { "content-type": "application/json" } }), 400, "invalid_request");
  expect(expectData(await h.request("GET", "/v1/watches?limit=100"), 200).length).toBe(before);
});

test("well-formed UTF-8 (é, an emoji) is taken as it was sent", async () => {
  const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "Équipe 🚀", config: { email: "ops@example.com" } } }), 201);
  expect(channel.name).toBe("Équipe 🚀");
});
