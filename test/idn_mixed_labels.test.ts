/**
 * A name that writes one label in Unicode and another already in its ASCII form (`xn--p1ai` for .рф, or a
 * subdomain typed in Unicode under an A-label zone) has exactly one ASCII form, and is accepted as it
 * (CONTRACT §5), for certificates and watches alike, as `connectTo` accepted it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
let server: TlsTestServer;
const MIXED = `ä.xn--bcher-kva.${TEST_DOMAIN}`;
const ASCII = `xn--4ca.xn--bcher-kva.${TEST_DOMAIN}`;

beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  // Certificates hold A-labels only.
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [ASCII, `www.${ASCII}`], notAfter: new Date(Date.now() + 90 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await h.close();
  await server.close();
});

describe("a domain mixing a U-label and an A-label", () => {
  test("POST /v1/certificates stores it in its ASCII form (as it does for ä.bücher… and for the all-A-label spelling)", async () => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: MIXED, port: server.port } });
    expect({ status: response.status, domain: (response.body as any)?.data?.domain, error: (response.body as any)?.error?.message }).toEqual({
      status: 201,
      domain: ASCII,
      error: undefined,
    });
  });

  test("POST /v1/watches takes it too, in its ASCII form", async () => {
    const response = await h.request("POST", "/v1/watches", { body: { domain: `ä.xn--bcher-kva.example` } });
    expect({ status: response.status, domain: (response.body as any)?.data?.domain, error: (response.body as any)?.error?.message }).toEqual({
      status: 201,
      domain: "xn--4ca.xn--bcher-kva.example",
      error: undefined,
    });
  });

  test("the domain rule and connectTo (a host name by the same rules) agree about the same name", async () => {
    const asConnectTo = await h.request("POST", "/v1/certificates", { body: { domain: `www.${ASCII}`, port: server.port, connectTo: MIXED } });
    const asDomain = await h.request("POST", "/v1/certificates", { body: { domain: `www.${MIXED}`, port: server.port, connectTo: ASCII } });
    // connectTo accepts the mixed spelling; the domain field must not refuse it.
    expect(asConnectTo.status).toBe(201);
    expect((asDomain.body as any)?.error?.code).not.toBe("invalid_domain");
  });
});
