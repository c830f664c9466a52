/** The watches API's errors (CONTRACT §4 and §15), each as a whole envelope, in the order of checks. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { describeAuthCases } from "./support/auth_cases.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const add = (body: unknown, key?: string) => h.request("POST", "/v1/watches", { body, key });

describeAuthCases("POST /v1/watches", () => h, (harness, headers) => harness.request("POST", "/v1/watches", { key: null, headers, body: { domain: "auth.test" } }));
describeAuthCases("GET /v1/watches", () => h, (harness, headers) => harness.request("GET", "/v1/watches", { key: null, headers }));

describe("POST /v1/watches: bad input", () => {
  test.each([
    ["no domain", {}],
    ["a scheme", { domain: "https://example.com/" }],
    ["a port", { domain: "example.com:8443" }],
    ["an IP address", { domain: "192.0.2.1" }],
    ["a wildcard", { domain: "*.example.com" }],
    ["one label", { domain: "localhost" }],
  ])("%s: 400 invalid_domain", async (_, body) => {
    expectError(await add(body), 400, "invalid_domain");
  });

  test.each([
    ["an unknown field", { domain: "ok.test", port: 443 }],
    ["includeSubdomains not a boolean", { domain: "ok.test", includeSubdomains: "yes" }],
    ["autoMonitor not a boolean", { domain: "ok.test", autoMonitor: 1 }],
    ["allowedIssuers not a list", { domain: "ok.test", allowedIssuers: "Let's Encrypt" }],
    ["an empty issuer", { domain: "ok.test", allowedIssuers: [""] }],
    ["an issuer over 200 characters", { domain: "ok.test", allowedIssuers: ["x".repeat(201)] }],
    ["21 issuers", { domain: "ok.test", allowedIssuers: Array.from({ length: 21 }, (_, i) => `CA ${i}`) }],
  ])("%s: 400 invalid_request naming the field", async (_, body) => {
    const response = await add(body);
    expectError(response, 400, "invalid_request");
  });

  test("a body that is not JSON: 400; not application/json: 415", async () => {
    expectError(await h.request("POST", "/v1/watches", { rawBody: "{", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    expectError(await h.request("POST", "/v1/watches", { rawBody: "domain=a.test", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type");
  });
});

describe("POST /v1/watches: conflict and limits", () => {
  test("the same domain again: 409 duplicate_watch; beyond the plan's watches: 402 watch_limit_reached", async () => {
    const org = await h.core.services.admin.createOrganization({ name: "Limited", plan: "free", limits: { watches: 2 } });
    const owner = await h.makeKey("owner", "live", org.id);
    const testKey = await h.makeKey("owner", "test", org.id);
    const add = (body: unknown, key = owner.key) => h.request("POST", "/v1/watches", { body, key });
    expectData(await add({ domain: "one.limit.test" }), 201);
    expectError(await add({ domain: "ONE.limit.test." }), 409, "duplicate_watch");
    expectData(await add({ domain: "two.limit.test" }), 201);
    expectError(await add({ domain: "three.limit.test" }), 402, "watch_limit_reached");
    // A duplicate is reported before the plan limit (CONTRACT §4's order: conflict, then limits).
    expectError(await add({ domain: "two.limit.test" }), 409, "duplicate_watch");
    // Test keys have their own watches.
    expectData(await add({ domain: "three.limit.test" }, testKey.key), 201);
  });

  test("the free plan allows 1 watch", async () => {
    const org = await h.core.services.admin.createOrganization({ name: "Free", plan: "free" });
    const owner = await h.makeKey("owner", "live", org.id);
    expectData(await h.request("POST", "/v1/watches", { body: { domain: "free.limit.test" }, key: owner.key }), 201);
    const refused = await h.request("POST", "/v1/watches", { body: { domain: "free2.limit.test" }, key: owner.key });
    expectError(refused, 402, "watch_limit_reached");
    expect(refused.body.error.message).toBe(
      `Your organization allows 1 watch and all are in use: delete one, or have the operator raise the limit with: npm run certkeeper -- org update --id ${org.id} --watch-limit N.`,
    );
  });
});

describe("GET, PATCH, DELETE /v1/watches/{id}: errors", () => {
  test("an unknown, malformed or deleted id: 404 watch_not_found", async () => {
    for (const id of ["wch_00000000000000000000", "nope", "cert_00000000000000000000"]) {
      expectError(await h.request("GET", `/v1/watches/${id}`), 404, "watch_not_found");
      expectError(await h.request("PATCH", `/v1/watches/${id}`, { body: { autoMonitor: true } }), 404, "watch_not_found");
      expectError(await h.request("DELETE", `/v1/watches/${id}`), 404, "watch_not_found");
    }
  });

  test("PATCH with nothing, an unknown field or the domain: 400 invalid_request", async () => {
    const watch = (await h.request("GET", "/v1/watches")).body.data[0] ?? expectData(await add({ domain: "patch-errors.test" }), 201);
    for (const body of [{}, { domain: "other.test" }, { includeSubdomains: "no" }]) {
      expectError(await h.request("PATCH", `/v1/watches/${watch.id}`, { body }), 400, "invalid_request");
    }
  });

  test("a bad cursor: 400 invalid_request; PUT: 405", async () => {
    expectError(await h.request("GET", "/v1/watches?cursor=garbage"), 400, "invalid_request");
    expectError(await h.request("GET", "/v1/watches?limit=0"), 400, "invalid_request");
    expectError(await h.request("PUT", "/v1/watches"), 405, "method_not_allowed");
  });
});
