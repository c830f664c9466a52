/** Imports refused whole (CONTRACT §4, §16): each a clear 400, 404 or 413, and nothing created. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const item = (n: number) => ({ domain: `site-${n}.example.com` });
const MiB = 1024 * 1024;

/** A JSON body of exactly `bytes` bytes: one item whose name pads it. */
function bodyOfSize(bytes: number): string {
  const head = '{"certificates":[{"domain":"example.com","name":"';
  const tail = '"}]}';
  return head + "x".repeat(bytes - head.length - tail.length) + tail;
}

async function nothingCreated() {
  expect(expectData(await h.request("GET", "/v1/certificates"), 200)).toEqual([]);
  expect(await h.store.imports.claim({ owner: "probe", now: Date.now(), leaseUntil: 0, limit: 10 })).toEqual([]);
}

describe("POST /v1/imports refuses, creating nothing", () => {
  test.each([
    ["10,001 items", { certificates: Array.from({ length: 10_001 }, (_, i) => item(i)) }, "1 to 10,000 items; got 10,001"],
    ["no items", { certificates: [] }, "1 to 10,000 items; got 0"],
    ["no certificates field", {}, '"certificates" is required'],
    ["certificates that are an object", { certificates: { domain: "a.com" } }, "must be an array"],
    ["an item that is a string", { certificates: [item(1), "b.com"] }, '"certificates[1]" must be an object'],
    ["an item that is null", { certificates: [null] }, '"certificates[0]" must be an object'],
    ["an item that is an array", { certificates: [[item(1)]] }, '"certificates[0]" must be an object'],
    ["an item that is a number", { certificates: [7] }, '"certificates[0]" must be an object'],
    ["a field beside certificates", { certificates: [item(1)], dryRun: true }, 'Unknown field "dryRun"'],
    ["a body that is an array", [item(1)], "must be a JSON object"],
  ])("%s: 400 invalid_request", async (_, body, message) => {
    const response = await h.request("POST", "/v1/imports", { body });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain(message);
    await nothingCreated();
  });

  test("a __proto__ field beside certificates: 400, and no prototype is polluted", async () => {
    const response = await h.request("POST", "/v1/imports", {
      rawBody: '{"certificates": [{"domain": "a.com"}], "__proto__": {"polluted": true}}',
      headers: { "content-type": "application/json" },
    });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain('"__proto__"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await nothingCreated();
  });

  test("a body of 2 MiB + 1 byte: 413 payload_too_large, declared or streamed", async () => {
    const text = bodyOfSize(2 * MiB + 1);
    expectError(await h.request("POST", "/v1/imports", { rawBody: text, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      },
    });
    const streamed = await h.app.handle(
      new Request("http://localhost/v1/imports", {
        method: "POST",
        headers: { authorization: `Bearer ${h.keys.owner.key}`, "content-type": "application/json" },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    expect((await streamed.json()).error.message).toContain("2 MiB");
    await nothingCreated();
  });

  test("a body of exactly 2 MiB is accepted (202); other routes keep their 64 KiB", async () => {
    const response = await h.request("POST", "/v1/imports", { rawBody: bodyOfSize(2 * MiB), headers: { "content-type": "application/json" } });
    expect(response.status).toBe(202);
    const big = await h.request("POST", "/v1/certificates", { rawBody: bodyOfSize(64 * 1024 + 1), headers: { "content-type": "application/json" } });
    expectError(big, 413, "payload_too_large");
  });

  test("not JSON: 415; malformed JSON: 400", async () => {
    expectError(await h.request("POST", "/v1/imports", { rawBody: "a.com", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type");
    expectError(await h.request("POST", "/v1/imports", { rawBody: '{"certificates": [', headers: { "content-type": "application/json" } }), 400, "invalid_request");
  });

  test("an item nesting 60,000 arrays (120 KB, under the limit): 400 invalid_request naming the depth, not a 500; 32 levels still read", async () => {
    const nested = (depth: number) => `{"certificates":[{"domain":"deep.example.com","tags":${"[".repeat(depth)}${"]".repeat(depth)}}]}`;
    const deep = await h.request("POST", "/v1/imports", { rawBody: nested(60_000), headers: { "content-type": "application/json" } });
    expectError(deep, 400, "invalid_request");
    // The items' 32 levels, as POST reads them, under the import's own two.
    expect(deep.body.error.message).toContain("more than 34 levels");
    // The body itself is 3 levels, the item's tags 29 more: read, and refused for what the tags hold.
    const limit = await h.request("POST", "/v1/certificates", { rawBody: `{"domain":"a.example.com","tags":${"[".repeat(29)}${"]".repeat(29)}}`, headers: { "content-type": "application/json" } });
    expectError(limit, 400, "invalid_request");
    expect(limit.body.error.message).not.toContain("levels");
    const over = await h.request("POST", "/v1/certificates", { rawBody: `{"domain":"a.example.com","tags":${"[".repeat(32)}${"]".repeat(32)}}`, headers: { "content-type": "application/json" } });
    expect(over.body.error.message).toContain("more than 32 levels");
  });

  test("an item POST reads (its tags 30 deep) fails alone with POST's error, whatever the import's own two levels around it: 202", async () => {
    const item = `{"domain":"deep.example.com","tags":${"[".repeat(30)}${"]".repeat(30)}}`;
    const post = await h.request("POST", "/v1/certificates", { rawBody: item, headers: { "content-type": "application/json" } });
    expectError(post, 400, "invalid_request");
    expect(post.body.error.message).not.toContain("levels");
    const imported = await h.request("POST", "/v1/imports", { rawBody: `{"certificates":[{"domain":"fine.example.com","prot":1},${item}]}`, headers: { "content-type": "application/json" } });
    const { id } = expectData(imported, 202);
    await h.core.services.imports!.loop.runDue();
    const done = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
    expect(done.results[1]).toEqual({ index: 1, status: "failed", certificateId: null, error: post.body.error });
  });

  test("an item over POST's 64 KiB fails alone with POST's 413 payload_too_large, not with what its fields would get; one just under is read", async () => {
    const over = { domain: "oversized.example.com", name: "x".repeat(70_000) };
    const under = { domain: "under.example.com", name: "é".repeat(32_000) };
    const post = await h.request("POST", "/v1/certificates", { body: over });
    expectError(post, 413, "payload_too_large");
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: [over, under] } }), 202);
    await h.core.services.imports!.loop.runDue();
    const done = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
    expect(done.results[0]).toEqual({ index: 0, status: "failed", certificateId: null, error: post.body.error });
    // 64,044 bytes: under the limit, so judged on its fields (a name over 200 characters).
    expect(done.results[1].error.code).toBe("invalid_request");
    expect(done.results[1].error.message).toContain("name");
  });
});

describe("GET /v1/imports/{id}", () => {
  test("an unknown or malformed id: 404 import_not_found", async () => {
    expectError(await h.request("GET", "/v1/imports/imp_00000000000000000000"), 404, "import_not_found");
    expectError(await h.request("GET", "/v1/imports/nothing"), 404, "import_not_found");
  });
});
