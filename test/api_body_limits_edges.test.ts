/**
 * The HTTP API's limits at their exact edges (CONTRACT §4): a body of exactly 64 KiB is read (413 is
 * for a body OVER 64 KiB), declared or streamed, and one byte more is 413; a body nested exactly 32
 * levels deep is read, 33 is refused; only application/json (or a +json type) is JSON, not a type that
 * merely starts with it; a query string of exactly 8 KiB is read, one byte more is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ config: { dnsServers: "off" } });
});
afterAll(() => h.close());

const KIB64 = 64 * 1024;

/** A JSON body of exactly `size` bytes whose domain is wrong: read through, it is 400 invalid_domain. */
function bodyOf(size: number): string {
  const json = '{"domain":5}';
  return json + " ".repeat(size - json.length);
}

function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 1000) controller.enqueue(bytes.subarray(at, at + 1000));
      controller.close();
    },
  });
}

const post = (rawBody: BodyInit, headers: Record<string, string> = {}) =>
  h.request("POST", "/v1/certificates", { rawBody, headers: { "content-type": "application/json", ...headers } });

describe("body size: 413 only over 64 KiB", () => {
  test("exactly 64 KiB, with its Content-Length declared: read (400 invalid_domain, not 413)", async () => {
    expect(bodyOf(KIB64).length).toBe(KIB64);
    expectError(await post(bodyOf(KIB64), { "content-length": String(KIB64) }), 400, "invalid_domain");
    expectError(await post(bodyOf(KIB64 + 1), { "content-length": String(KIB64 + 1) }), 413, "payload_too_large");
  });

  test("exactly 64 KiB, streamed without a length: read; one byte more: 413", async () => {
    expectError(await post(streamOf(bodyOf(KIB64))), 400, "invalid_domain");
    expectError(await post(streamOf(bodyOf(KIB64 + 1))), 413, "payload_too_large");
  });
});

describe("nesting: at most 32 levels", () => {
  /** The body object itself is level 1; `levels` in all. */
  function nestedBody(levels: number): string {
    let inner = '"x"';
    for (let i = 1; i < levels; i++) inner = `{"a":${inner}}`;
    return `{"domain":"example.com","name":${inner}}`;
  }

  test("32 levels are read (the name is then refused for its type), 33 are refused for their depth", async () => {
    const at32 = await post(nestedBody(32));
    expect(at32.status).toBe(400);
    expect(at32.body.error.message).not.toContain("levels deep");
    const at33 = await post(nestedBody(33));
    expectError(at33, 400, "invalid_request");
    expect(at33.body.error.message).toContain("more than 32 levels deep");
  });
});

describe("media type", () => {
  test.each(["application/json5", "application/jsonl", "application/json-patch"])("%s is not JSON: 415", async (type) => {
    expectError(await post('{"domain":"example.com"}', { "content-type": type }), 415, "unsupported_media_type");
  });

  test("application/json with parameters, and a +json type, are JSON", async () => {
    expectError(await post('{"domain":5}', { "content-type": "application/json;charset=utf-8" }), 400, "invalid_domain");
    expectError(await post('{"domain":5}', { "content-type": "application/merge-patch+json" }), 400, "invalid_domain");
  });
});

describe("query string: at most 8 KiB", () => {
  test("exactly 8192 bytes (empty pairs, no parameter) are read; 8193 are refused", async () => {
    const exact = await h.request("GET", `/v1/certificates?${"&".repeat(8192)}`);
    expect(exact.status).toBe(200);
    const over = await h.request("GET", `/v1/certificates?${"&".repeat(8193)}`);
    expectError(over, 400, "invalid_request");
    expect(over.body.error.message).toContain("8193 bytes long");
  });
});
