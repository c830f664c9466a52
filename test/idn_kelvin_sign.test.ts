/**
 * A name whose only non-ASCII letter lower-cases to an ASCII one (U+212A KELVIN SIGN → "k") is refused,
 * not stored as another, pure-ASCII name: docs/api.md, "Domains are taken as written: … full-width
 * letters, invisible characters or other dots, which URL or IDNA processing would silently turn into
 * another name, make it `invalid_domain`". The same for a watch's domain and `mailDomain`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
let server: TlsTestServer;
const KELVIN = "\u212A"; // KELVIN SIGN, not the letter K

beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  // A server for the ASCII name the Kelvin-sign spelling would silently become.
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`kelvin.${TEST_DOMAIN}`, `mx.kelvin.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 90 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await h.close();
  await server.close();
});

describe("a domain written with U+212A KELVIN SIGN", () => {
  test("POST /v1/certificates refuses it as invalid_domain instead of monitoring kelvin.<domain>", async () => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `${KELVIN}elvin.${TEST_DOMAIN}`, port: server.port } });
    expect({ status: response.status, code: (response.body as any)?.error?.code, domain: (response.body as any)?.data?.domain }).toEqual({
      status: 400,
      code: "invalid_domain",
      domain: undefined,
    });
  });

  test("POST /v1/watches refuses it as invalid_domain (§15: domain follows §5's rules)", async () => {
    const response = await h.request("POST", "/v1/watches", { body: { domain: `${KELVIN}elvin.example` } });
    expect({ status: response.status, code: (response.body as any)?.error?.code, domain: (response.body as any)?.data?.domain }).toEqual({
      status: 400,
      code: "invalid_domain",
      domain: undefined,
    });
  });

  test("mailDomain refuses it as invalid_request instead of judging kelvin.<domain>'s MTA-STS policy", async () => {
    const response = await h.request("POST", "/v1/certificates", {
      body: { domain: `mx.kelvin.${TEST_DOMAIN}`, port: server.port, protocol: "smtp", mailDomain: `${KELVIN}elvin.${TEST_DOMAIN}` },
    });
    // Field validation comes before any connection (CONTRACT §4 order of checks): 422 means the field was taken.
    expect({ status: response.status, code: (response.body as any)?.error?.code }).toEqual({ status: 400, code: "invalid_request" });
  });
});
