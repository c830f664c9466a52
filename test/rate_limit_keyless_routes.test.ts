/**
 * CONTRACT §8: every response to a request with a valid key carries the X-RateLimit-* headers, the
 * routes that need no key (documentation, metrics) included: a key sent there is counted like any
 * other request, and over the limit refused with 429. A request without a key counts nothing. Health
 * probes read no key (§10: /healthz answers while the process is up, whatever the database does).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "./support/harness.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { StorageUnavailableError, type Store } from "../core/store/ports.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ limits: { requestsPerMinute: 5 } });
});
afterAll(async () => {
  await h.close();
});

const get = (path: string, key?: string) => h.app.handle(new Request(`http://localhost${path}`, key ? { headers: { authorization: `Bearer ${key}` } } : {}));

test("the keyless routes count a valid key sent to them, show its limit and refuse it over the limit", async () => {
  const key = h.keys.member.key;
  const seen: Array<[string, number, string | null, string | null]> = [];
  for (const path of ["/v1/openapi.json", "/docs", "/healthz", "/readyz", "/docs", "/v1/openapi.json", "/v1/openapi.json", "/v1/openapi.json"]) {
    const response = await get(path, key);
    seen.push([path, response.status, response.headers.get("x-ratelimit-limit"), response.headers.get("x-ratelimit-remaining")]);
    if (response.status === 429) {
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect((await response.json()).error.code).toBe("rate_limit_exceeded");
    }
  }
  expect(seen).toEqual([
    ["/v1/openapi.json", 200, "5", "4"],
    ["/docs", 200, "5", "3"],
    // Health probes read no key: they answer whatever the database does.
    ["/healthz", 200, null, null],
    ["/readyz", 200, null, null],
    ["/docs", 200, "5", "2"],
    ["/v1/openapi.json", 200, "5", "1"],
    ["/v1/openapi.json", 200, "5", "0"],
    ["/v1/openapi.json", 429, "5", "0"],
  ]);
  // The same key's API requests share that count.
  expect((await get("/v1/certificates", key)).status).toBe(429);
});

test("without a key, or with anything but a valid key, the keyless routes count and show nothing", async () => {
  for (const authorization of [undefined, "Bearer ck_live_not_a_key_at_all_0000000000", "Basic dXNlcjpwYXNz"]) {
    const response = await h.app.handle(new Request("http://localhost/v1/openapi.json", authorization ? { headers: { authorization } } : {}));
    expect([response.status, response.headers.get("x-ratelimit-limit"), response.headers.get("x-request-id")?.startsWith("req_")]).toEqual([200, null, true]);
  }
  const before = (await get("/v1/certificates", h.keys.owner.key)).headers.get("x-ratelimit-remaining");
  expect(before).toBe("4");
});

test("a database that cannot count the key (down) costs the keyless routes nothing: health 200, documentation 200 without the headers", async () => {
  const memory = createMemoryStore();
  let down = false;
  // One database shared by several processes (rate limits kept in it), which stops answering.
  const store: Store = {
    ...memory,
    shared: true,
    rateLimits: {
      hit: (...args: Parameters<Store["rateLimits"]["hit"]>) => (down ? Promise.reject(new StorageUnavailableError("no_answer")) : memory.rateLimits.hit(...args)),
      prune: (before: number) => memory.rateLimits.prune(before),
    },
  };
  const shared = await createHarness({ store });
  try {
    const key = shared.keys.owner.key;
    const send = (path: string) => shared.app.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${key}` } }));
    down = true;
    const answers = [];
    for (const path of ["/healthz", "/v1/openapi.json"]) {
      const response = await send(path);
      answers.push([path, response.status, response.headers.get("x-ratelimit-limit")]);
    }
    expect(answers).toEqual([
      ["/healthz", 200, null],
      ["/v1/openapi.json", 200, null],
    ]);
    // The API itself says the database is down.
    expect((await send("/v1/certificates")).status).toBe(503);
  } finally {
    down = false;
    await shared.close();
  }
});
