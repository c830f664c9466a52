/** Bad protocol and connectTo values, and targets that give no certificate at all (CONTRACT §11, §12). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { refusedPort } from "./support/servers.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";

let h: Harness;

beforeAll(async () => {
  h = await createHarness({ config: { resolve: parseResolveRules(`gone.${TEST_DOMAIN}=none,*.${TEST_DOMAIN}=127.0.0.1|127.0.0.2`) } });
});

afterAll(async () => {
  await h.close();
});

describe("400 invalid_request", () => {
  test.each([
    ["an unknown protocol", { protocol: "https" }, 'Field "protocol"'],
    ["a protocol in upper case", { protocol: "SMTP" }, 'Field "protocol"'],
    ["a protocol that is not a string", { protocol: 25 }, 'Field "protocol"'],
    ["connectTo with a port", { connectTo: "10.0.0.1:443" }, 'Field "connectTo"'],
    ["connectTo with a scheme", { connectTo: "https://lb.example.com" }, 'Field "connectTo"'],
    ["connectTo empty", { connectTo: "" }, 'Field "connectTo"'],
    ["connectTo with spaces", { connectTo: "lb example.com" }, 'Field "connectTo"'],
    ["connectTo a number", { connectTo: 10 }, 'Field "connectTo"'],
    ["connectTo a bad label", { connectTo: "-lb.example.com" }, 'Field "connectTo"'],
    ["connectTo an IPv6 address with a zone index", { connectTo: "fe80::1%eth0" }, 'Field "connectTo"'],
    ["connectTo a bracketed IPv6 address with a zone index", { connectTo: "[fe80::1%25eth0]" }, 'Field "connectTo"'],
  ])("%s", async (_case, fields, named) => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `bad.${TEST_DOMAIN}`, ...fields } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain(named);
  });

  test("protocol cannot be changed by PATCH; a bad connectTo in PATCH is refused, nothing changed", async () => {
    const missing = "cert_0000000000000000";
    const protocol = await h.request("PATCH", `/v1/certificates/${missing}`, { body: { protocol: "smtp" } });
    expectError(protocol, 400, "invalid_request");
    expect(protocol.body.error.message).toContain('Field "protocol" cannot be changed by PATCH');
    expectError(await h.request("PATCH", `/v1/certificates/${missing}`, { body: { connectTo: "a b" } }), 400, "invalid_request");
    expectError(await h.request("PATCH", `/v1/certificates/${missing}`, { body: { connectTo: "10.0.0.1" } }), 404, "certificate_not_found");
  });
});

describe("422 certificate_not_found, nothing stored", () => {
  test("every address refuses the connection: the message names each", async () => {
    const port = await refusedPort();
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `multi.${TEST_DOMAIN}`, port } });
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain(`(127.0.0.1:${port}) refused the connection`);
    expect(response.body.error.message).toContain(`(127.0.0.2:${port}) refused the connection`);
    expect(expectData(await h.request("GET", "/v1/certificates"), 200)).toEqual([]);
  });

  test("a connectTo that does not resolve", async () => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `a.${TEST_DOMAIN}`, connectTo: `gone.${TEST_DOMAIN}` } });
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain("does not resolve");
  });
});
