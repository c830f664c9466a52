/**
 * Long request lines through the real HTTP server (Bun): every answer is CONTRACT §4's envelope with
 * an X-Request-Id, never Bun's bare 431, and an over-long query is refused in the pipeline's order.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { configFromEnv } from "../core/config/mod.ts";
import { MAX_HEADER_BYTES, startServer, type RunningServer } from "../adapters/elysia/server.ts";
import { createHarness, type Harness } from "./support/harness.ts";

let h: Harness;
let server: RunningServer;

beforeAll(async () => {
  h = await createHarness();
  server = await startServer(configFromEnv({ CERTKEEPER_PORT: "0", CERTKEEPER_DATABASE_URL: ":memory:", CERTKEEPER_LOG_LEVEL: "error" }), {
    store: h.store,
  });
});
afterAll(async () => {
  await server?.stop();
});

const get = (path: string, key?: string) => fetch(`${server.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

async function expectEnvelope(response: Response, status: number, code: string) {
  expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{16,}$/);
  expect([response.status, await response.json()]).toEqual([status, { error: { code, message: expect.any(String) } }]);
}

describe("over-long query strings", () => {
  test("tag= with 3,000 entries: 400 invalid_request in the envelope, not Bun's bare 431", async () => {
    const tags = Array.from({ length: 3000 }, (_, i) => `t${i}`);
    await expectEnvelope(await get(`/v1/certificates?tag=${tags.join(",")}`, h.keys.owner.key), 400, "invalid_request");
    await expectEnvelope(await get(`/v1/certificates?${tags.map((t) => `tag=${t}`).join("&")}`, h.keys.owner.key), 400, "invalid_request");
  });

  test("authentication still comes first: without a key, 401 missing_api_key", async () => {
    await expectEnvelope(await get(`/v1/certificates?domain=${"a".repeat(100_000)}`), 401, "missing_api_key");
  });

  test("a query just under the limit is read (a domain filter of 8,000 characters matches nothing)", async () => {
    const response = await get(`/v1/certificates?domain=${"a".repeat(8000)}`, h.keys.owner.key);
    expect(response.status).toBe(200);
    expect((await response.json()).data).toEqual([]);
  });

  test("an unknown route with a long URL: 404 not_found in the envelope", async () => {
    await expectEnvelope(await get(`/nowhere?q=${"a".repeat(100_000)}`), 404, "not_found");
  });

  test(`a request line within ${MAX_HEADER_BYTES / 1024} KiB reaches certkeeper`, async () => {
    await expectEnvelope(await get(`/v1/events?x=${"a".repeat(MAX_HEADER_BYTES - 4096)}`, h.keys.owner.key), 400, "invalid_request");
  });
});
