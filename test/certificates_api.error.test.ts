/** Bad input and failures: every code of CONTRACT §4 the certificates API can give, and the order of checks. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { refusedPort, startPlainServer, startSilentServer, startTlsServer, type TestServer } from "./support/servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { describeAuthCases } from "./support/auth_cases.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";

let h: Harness;
let tls: TestServer;
const domain = `errors.${TEST_DOMAIN}`;

beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await h.close();
  await tls.close();
});

const add = (body: unknown, init: { key?: string } = {}) => h.request("POST", "/v1/certificates", { body, ...init });

describeAuthCases("POST /v1/certificates", () => h, (harness, headers) =>
  harness.request("POST", "/v1/certificates", { key: null, headers, body: { domain: `auth.${TEST_DOMAIN}`, port: tls.port } }),
);
describeAuthCases("GET /v1/certificates/{id}", () => h, (harness, headers) =>
  harness.request("GET", "/v1/certificates/cert_00000000000000000000", { key: null, headers }),
);

describe("400 invalid_request", () => {
  test.each([
    ["a port given as a string", { domain: "a.com", port: "443" }, 'Field "port" must be a whole number from 1 to 65535; got "443".'],
    ["port 0", { domain: "a.com", port: 0 }, 'Field "port" must be a whole number from 1 to 65535; got 0.'],
    ["port 65536", { domain: "a.com", port: 65536 }, 'Field "port" must be a whole number from 1 to 65535; got 65536.'],
    ["a fractional port", { domain: "a.com", port: 443.5 }, 'Field "port" must be a whole number from 1 to 65535; got 443.5.'],
    ["an unknown field", { domain: "a.com", prot: 443 }, 'Unknown field "prot": the allowed fields are domain, name, port, alertThresholds, tags, protocol, connectTo, alertPolicy, mailDomain.'],
    ["a threshold over 730", { domain: "a.com", alertThresholds: [731] }, 'Field "alertThresholds[0]" must be a whole number from 0 to 730; got 731.'],
    ["a negative threshold", { domain: "a.com", alertThresholds: [-1] }, 'Field "alertThresholds[0]" must be a whole number from 0 to 730; got -1.'],
    ["repeated thresholds", { domain: "a.com", alertThresholds: [7, 7] }, expect.stringContaining('Field "alertThresholds" must be')],
    ["eleven thresholds", { domain: "a.com", alertThresholds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, expect.stringContaining("at most 10")],
    ["thresholds that are not an array", { domain: "a.com", alertThresholds: 7 }, expect.stringContaining('Field "alertThresholds" must be')],
    ["an empty name", { domain: "a.com", name: "" }, 'Field "name" must be a string of 1 to 100 characters; got "".'],
    ["a name of 101 characters", { domain: "a.com", name: "n".repeat(101) }, expect.stringContaining('Field "name" must be a string of 1 to 100 characters')],
    ["a JSON array body", ["a.com"], expect.stringContaining("JSON object")],
    ["a JSON string body", "a.com", expect.stringContaining("JSON object")],
  ])("%s", async (_case, body, message) => {
    const response = await add(body);
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toEqual(message);
  });

  test("malformed JSON, and an empty body", async () => {
    const malformed = await h.request("POST", "/v1/certificates", { rawBody: '{"domain": ', headers: { "content-type": "application/json" } });
    expectError(malformed, 400, "invalid_request");
    expect(malformed.body.error.message).toStartWith("The request body is not valid JSON");
    expectError(await h.request("POST", "/v1/certificates", { rawBody: "", headers: { "content-type": "application/json" } }), 400, "invalid_request");
  });

  test("PATCH with no field, an unknown field, or a bad value", async () => {
    const id = expectData(await add({ domain, port: tls.port, name: "patch me" }), 201).id;
    for (const body of [{}, { domain: "b.com" }, { alertThresholds: [1, 1] }, { name: 5 }]) {
      expectError(await h.request("PATCH", `/v1/certificates/${id}`, { body }), 400, "invalid_request");
    }
    await h.request("DELETE", `/v1/certificates/${id}`);
  });

  test("an unknown query parameter, a bad limit, a bad cursor, an unknown status", async () => {
    for (const query of ["foo=1", "limit=0", "limit=101", "limit=ten", "cursor=garbage", "cursor=WzEsMl0", "status=broken", "status=valid,nope"]) {
      const response = await h.request("GET", `/v1/certificates?${query}`);
      expect({ query, status: response.status, code: response.body.error?.code }).toEqual({ query, status: 400, code: "invalid_request" });
    }
    expectError(await h.request("GET", "/v1/certificates/cert_00000000000000000000?expand=chain"), 400, "invalid_request");
  });
});

describe("400 invalid_domain", () => {
  test.each([
    ["missing", {}],
    ["not a string", { domain: 42 }],
    ["null", { domain: null }],
    ["with a scheme and path", { domain: "https://a.com/" }],
    ["with a port inside", { domain: "a.com:8443" }],
    ["an IP address", { domain: "10.0.0.1" }],
    ["a wildcard", { domain: "*.a.com" }],
    ["with spaces", { domain: "a .com" }],
    ["empty", { domain: "" }],
    ["percent-encoded (it would be decoded into another name)", { domain: "exa%6dple.com" }],
    ["with a full-width letter (IDNA would map it)", { domain: "ｅxample.com" }],
    ["with a zero-width space (IDNA would drop it)", { domain: "exa\u200bmple.com" }],
  ])("domain %s", async (_case, body) => {
    expectError(await add(body), 400, "invalid_domain");
  });

  test("an unknown field is reported before a bad domain; a bad domain before other bad fields", async () => {
    expectError(await add({ domian: "a.com" }), 400, "invalid_request");
    expectError(await add({ domain: "a.com:1", port: "x" }), 400, "invalid_domain");
  });
});

describe("404, 405, 409, 413, 415", () => {
  test("an unknown route: 404 not_found; a known route with another method: 405 with Allow", async () => {
    expectError(await h.request("GET", "/v1/nothing"), 404, "not_found");
    expectError(await h.request("GET", "/v2/certificates"), 404, "not_found");
    const put = await h.request("PUT", "/v1/certificates/cert_00000000000000000000");
    expectError(put, 405, "method_not_allowed");
    expect(put.headers.get("allow")).toBe("GET, PATCH, DELETE");
    expect((await h.request("DELETE", "/v1/certificates")).headers.get("allow")).toBe("POST, GET");
  });

  test("get, patch, delete and check of a missing or malformed id: 404 certificate_not_found", async () => {
    for (const id of ["cert_00000000000000000000", "nope", "cert_%27%20OR%201%3D1"]) {
      expectError(await h.request("GET", `/v1/certificates/${id}`), 404, "certificate_not_found");
      expectError(await h.request("PATCH", `/v1/certificates/${id}`, { body: { name: "x" } }), 404, "certificate_not_found");
      expectError(await h.request("DELETE", `/v1/certificates/${id}`), 404, "certificate_not_found");
      expectError(await h.request("POST", `/v1/certificates/${id}/check`), 404, "certificate_not_found");
    }
  });

  test("the same domain and port twice: 409 duplicate_domain, the first one unchanged", async () => {
    const first = expectData(await add({ domain, port: tls.port, name: "first" }), 201);
    expectError(await add({ domain: domain.toUpperCase(), port: tls.port, name: "second" }), 409, "duplicate_domain");
    expect(expectData(await h.request("GET", `/v1/certificates/${first.id}`), 200).name).toBe("first");
    await h.request("DELETE", `/v1/certificates/${first.id}`);
  });

  test("a body over 64 KiB: 413 payload_too_large, whether declared or streamed", async () => {
    const big = JSON.stringify({ domain, name: "x".repeat(70 * 1024) });
    expectError(await h.request("POST", "/v1/certificates", { rawBody: big, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 80; i++) controller.enqueue(new TextEncoder().encode("x".repeat(1024)));
        controller.close();
      },
    });
    expectError(await h.request("POST", "/v1/certificates", { rawBody: chunks, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
  });

  test("a body that is not application/json: 415 unsupported_media_type", async () => {
    const body = JSON.stringify({ domain });
    for (const headers of [{ "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }, {}] as Record<string, string>[]) {
      expectError(await h.request("POST", "/v1/certificates", { rawBody: body, headers }), 415, "unsupported_media_type");
    }
    expect((await h.request("POST", "/v1/certificates", { rawBody: "{}", headers: { "content-type": "Application/JSON; charset=utf-8" } })).status).toBe(400);
  });
});

describe("422 certificate_not_found: no certificate could be retrieved, nothing is stored", () => {
  async function expectUnreachable(target: string, port: number, reason: string) {
    const before = await h.core.services.store.certificates.count({ organizationId: h.org.id, mode: "live" });
    const response = await add({ domain: target, port });
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain(reason);
    expect(await h.core.services.store.certificates.count({ organizationId: h.org.id, mode: "live" })).toBe(before);
  }

  test("a refused port", async () => {
    await expectUnreachable(`refused.${TEST_DOMAIN}`, await refusedPort(), "refused the connection");
  });

  test("a server that accepts and never answers fails within the TLS timeout", async () => {
    const silent = await startSilentServer();
    const own = await createHarness({ config: { tlsTimeoutMs: 500 } });
    const started = performance.now();
    const response = await own.request("POST", "/v1/certificates", { body: { domain: `silent.${TEST_DOMAIN}`, port: silent.port } });
    const elapsed = performance.now() - started;
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain("did not complete the connection in time");
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(1500);
    expect(silent.connections()).toBe(1);
    await Promise.all([own.close(), silent.close()]);
  });

  test("a plain TCP server that does not speak TLS", async () => {
    const plain = await startPlainServer();
    await expectUnreachable(`plain.${TEST_DOMAIN}`, plain.port, "TLS handshake");
    await plain.close();
  });

  test("a name that does not resolve", async () => {
    const own = await createHarness({ config: { resolve: [{ pattern: `nx.${TEST_DOMAIN}`, address: null }] } });
    const response = await own.request("POST", "/v1/certificates", { body: { domain: `nx.${TEST_DOMAIN}` } });
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain("does not resolve");
    await own.close();
  });
});

describe("402, 429, 500", () => {
  test("the plan's certificate limit: 402 certificate_limit_reached, counted per organization and mode", async () => {
    const own = await createHarness({ limits: { certificates: 1 } });
    expectData(await own.request("POST", "/v1/certificates", { body: { domain, port: tls.port } }), 201);
    const other = `other.${TEST_DOMAIN}`;
    expectError(await own.request("POST", "/v1/certificates", { body: { domain: other, port: tls.port } }), 402, "certificate_limit_reached");
    expectData(await own.request("POST", "/v1/certificates", { key: own.keys.test.key, body: { domain, port: tls.port } }), 201);
    // A duplicate at the limit is still a conflict, not a limit.
    expectError(await own.request("POST", "/v1/certificates", { body: { domain, port: tls.port } }), 409, "duplicate_domain");
    await own.close();
  });

  test("over the rate limit: 429 with headers; waiting Retry-After serves again; every response carries the headers", async () => {
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 12, 0, 0));
    const own = await createHarness({ clock, limits: { requestsPerMinute: 3 } });
    const missing = "/v1/certificates/cert_00000000000000000000";
    const first = await own.request("GET", missing);
    expect([first.status, first.headers.get("x-ratelimit-limit"), first.headers.get("x-ratelimit-remaining")]).toEqual([404, "3", "2"]);
    expect(first.headers.get("x-ratelimit-reset")).toBe(String(clock.now() / 1000 + 60));
    await own.request("GET", missing);
    clock.advance(20_000);
    expect((await own.request("GET", "/v1/certificates")).headers.get("x-ratelimit-remaining")).toBe("0");
    const limited = await own.request("GET", "/v1/certificates");
    expectError(limited, 429, "rate_limit_exceeded");
    expect([limited.headers.get("x-ratelimit-remaining"), limited.headers.get("retry-after")]).toEqual(["0", "40"]);
    // Another key of the same organization has its own window.
    expect((await own.request("GET", "/v1/certificates", { key: own.keys.admin.key })).status).toBe(200);
    clock.advance(40_000);
    const again = await own.request("GET", "/v1/certificates");
    expect([again.status, again.headers.get("x-ratelimit-remaining")]).toEqual([200, "2"]);
    await own.close();
  });

  test("an unexpected failure: 500 internal_error without stack trace or SQL", async () => {
    const store = createMemoryStore();
    const own = await createHarness({ store });
    store.certificates.get = async () => {
      throw new Error("SQLITE_IOERR: disk I/O error in SELECT * FROM certificates WHERE id = 'x'\n    at Object.get (sql.ts:12)");
    };
    const response = await own.request("GET", "/v1/certificates/cert_00000000000000000000");
    expectError(response, 500, "internal_error");
    expect(JSON.stringify(response.body)).not.toMatch(/SELECT|SQLITE|sql\.ts|\bat\b/);
    await own.close();
  });
});

describe("order of checks: authentication, rate limit, permission, validation, existence, conflict, limits", () => {
  test("no key with a bad body: 401, not 400", async () => {
    expectError(await h.request("POST", "/v1/certificates", { key: null, rawBody: "{bad", headers: { "content-type": "application/json" } }), 401, "missing_api_key");
  });

  test("a member over the rate limit writing: 429, not 403", async () => {
    const own = await createHarness({ limits: { requestsPerMinute: 1 } });
    await own.request("GET", "/v1/certificates", { key: own.keys.member.key });
    expectError(await own.request("POST", "/v1/certificates", { key: own.keys.member.key, body: {} }), 429, "rate_limit_exceeded");
    await own.close();
  });

  test("a member with a bad body: 403, not 400; a bad body for a missing id: 400, not 404", async () => {
    expectError(await h.request("POST", "/v1/certificates", { key: h.keys.member.key, body: { domain: 5 } }), 403, "permission_denied");
    expectError(await h.request("PATCH", "/v1/certificates/cert_00000000000000000000", { body: { name: "" } }), 400, "invalid_request");
  });
});

test("over HTTP, a method /v1/certificates/summary does not take is 405 with Allow: GET, not taken for a certificate id \"summary\"", async () => {
  // Listening, the server's own router reads the path (in process, Elysia's does).
  h.app.listen({ port: 0, hostname: "127.0.0.1" });
  try {
    for (const method of ["DELETE", "PATCH", "POST"]) {
      const response = await fetch(`http://127.0.0.1:${h.app.server!.port}/v1/certificates/summary`, {
        method,
        headers: { authorization: `Bearer ${h.keys.owner.key}`, "content-type": "application/json" },
        ...(method === "DELETE" ? {} : { body: "{}" }),
      });
      expect([method, response.status, response.headers.get("allow"), (await response.json()).error.code]).toEqual([method, 405, "GET", "method_not_allowed"]);
    }
  } finally {
    await h.app.stop();
  }
});
