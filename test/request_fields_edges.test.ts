/**
 * What a field accepts, at the edges other tests leave open (CONTRACT §4, §5, §16): `mutedUntil` in
 * §5's timestamp form (at most milliseconds), an unknown field named before the errors it explains,
 * and a method a fixed path does not take refused with that path's own Allow.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { chainPem, createLeaf } from "./support/pki.ts";

let h: Harness;
let server: TlsTestServer;
let cert: any;
beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`muted.${TEST_DOMAIN}`] });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cert = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `muted.${TEST_DOMAIN}`, port: server.port } }), 201);
});
afterAll(async () => {
  await server.close();
  await h.close();
});

describe("mutedUntil: YYYY-MM-DDTHH:mm:ss.sssZ", () => {
  test.each([
    ["four fraction digits", "2026-12-01T10:00:00.1234Z"],
    ["microseconds", "2026-12-01T10:00:00.123456Z"],
  ])("%s: 400 invalid_request naming the field, the certificate not muted", async (_, mutedUntil) => {
    const response = await h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mutedUntil } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain('"mutedUntil"');
    expect(expectData(await h.request("GET", `/v1/certificates/${cert.id}`), 200).mutedUntil).toBeNull();
  });

  test("milliseconds, and no fraction, are taken and answered in §5's form", async () => {
    const patched = expectData(await h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mutedUntil: "2026-12-01T10:00:00.5Z" } }), 200);
    expect(patched.mutedUntil).toBe("2026-12-01T10:00:00.500Z");
    const again = expectData(await h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mutedUntil: "2026-12-01T10:00:00Z" } }), 200);
    expect(again.mutedUntil).toBe("2026-12-01T10:00:00.000Z");
    expectData(await h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mutedUntil: null } }), 200);
  });
});

describe("an unknown field is named first", () => {
  test("PATCH /v1/certificates/{id} with a misspelt field and a bad one: the message names the misspelt one", async () => {
    const response = await h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { alertThresholds: "weekly", nmae: "Site" } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain('"nmae"');
  });

  test("PATCH /v1/watches/{id} likewise", async () => {
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: "named-first.test" } }), 201);
    const response = await h.request("PATCH", `/v1/watches/${watch.id}`, { body: { autoMonitor: "yes", includeSubdomain: false } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain('"includeSubdomain"');
  });
});

describe("a method a fixed path beside a parameter's does not take", () => {
  test.each(["PUT", "PATCH", "DELETE", "POST"])("%s /v1/certificates/summary: 405 with Allow: GET", async (method) => {
    const response = await h.request(method, "/v1/certificates/summary");
    expectError(response, 405, "method_not_allowed");
    expect(response.headers.get("allow")).toBe("GET");
  });
});

describe("the order of checks: permission before the body (CONTRACT §4)", () => {
  test.each([
    ["broken JSON", { rawBody: '{"domain":', headers: { "content-type": "application/json" } }],
    ["a body that is not JSON", { rawBody: "domain=example.com", headers: { "content-type": "application/x-www-form-urlencoded" } }],
    ["a body over 64 KiB", { rawBody: JSON.stringify({ domain: "x".repeat(70 * 1024) }), headers: { "content-type": "application/json" } }],
    ["an unknown field", { body: { domain: "member.test", colour: "red" } }],
  ])("a member key's write with %s: 403 permission_denied, nothing stored", async (_, init) => {
    const before = expectData(await h.request("GET", "/v1/watches?limit=100"), 200).length;
    expectError(await h.request("POST", "/v1/watches", { key: h.keys.member.key, ...init }), 403, "permission_denied");
    expectError(await h.request("POST", "/v1/channels", { key: h.keys.member.key, ...init }), 403, "permission_denied");
    expect(expectData(await h.request("GET", "/v1/watches?limit=100"), 200).length).toBe(before);
  });
});

describe("PATCH /v1/watches/{id}: booleans are booleans", () => {
  test.each([["autoMonitor"], ["includeSubdomains"]])("%s given as a string: 400 invalid_request naming it, the watch unchanged", async (field) => {
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: `bool-${field.toLowerCase()}.test` } }), 201);
    const response = await h.request("PATCH", `/v1/watches/${watch.id}`, { body: { [field]: "yes" } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain(`"${field}"`);
    expect(expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200)[field]).toBe(watch[field]);
  });
});

describe("a number JSON cannot write is named as it was read", () => {
  test("port 1e400 (read as Infinity): 400 invalid_request whose message says Infinity, not null", async () => {
    const response = await h.request("POST", "/v1/certificates", { rawBody: '{"domain":"example.com","port":1e400}', headers: { "content-type": "application/json" } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain("Infinity");
  });
});
