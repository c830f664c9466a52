/**
 * What every response carries, whatever the route: X-Request-Id (CONTRACT §4), rate-limit headers for
 * a valid key (CONTRACT §8) even on a route that does not exist, and a request line in the log (§10).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../core/base/log.ts";
import { createHarness, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  h = await createHarness({ limits: { requestsPerMinute: 3 }, logger: createLogger("debug", (line) => lines.push(JSON.parse(line))) });
});
afterAll(() => h.close());

describe("routes outside the API's operations", () => {
  test.each(["/healthz", "/readyz", "/v1/openapi.json", "/docs", "/", "/sign-in", "/assets/certkeeper.css", "/nowhere"])(
    "GET %s carries an X-Request-Id and writes a request line with it",
    async (path) => {
      const response = await h.app.handle(new Request(`http://localhost${path}`));
      const requestId = response.headers.get("x-request-id");
      expect(requestId).toMatch(/^req_[0-9A-Za-z]{16,}$/);
      const line = lines.find((l) => l.requestId === requestId);
      expect(line).toMatchObject({ msg: "request", method: "GET", path, status: response.status });
      // Health probes come every few seconds: debug, not info.
      expect(line!.level).toBe(path === "/healthz" || path === "/readyz" ? "debug" : "info");
    },
  );
});

describe("a route that does not exist, asked with a valid key", () => {
  test("404 and 405 carry the rate-limit headers and count against the limit; over it, 429", async () => {
    const key = (await h.makeKey("owner")).key;
    const missing = await h.request("GET", "/v1/nothing-here", { key });
    expectError(missing, 404, "not_found");
    expect([missing.headers.get("x-ratelimit-limit"), missing.headers.get("x-ratelimit-remaining")]).toEqual(["3", "2"]);
    const wrongMethod = await h.request("PUT", "/v1/certificates", { key });
    expectError(wrongMethod, 405, "method_not_allowed");
    expect(wrongMethod.headers.get("x-ratelimit-remaining")).toBe("1");
    await h.request("GET", "/v1/certificates", { key });
    const limited = await h.request("GET", "/v1/nothing-here", { key });
    expectError(limited, 429, "rate_limit_exceeded");
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  test("without a key, or with a bad one, it is simply not found: no rate-limit headers", async () => {
    for (const key of [null, "ck_live_" + "a".repeat(38)]) {
      const response = await h.request("GET", "/v1/nothing-here", { key });
      expectError(response, 404, "not_found");
      expect(response.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });
});
