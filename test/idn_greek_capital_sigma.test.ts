/**
 * A domain written with a capital Σ is the name IDNA (UTS #46, the URL standard, every browser) makes of
 * it, Σ mapped to σ wherever it stands: `ΟΔΟΣ-ΑΒ.certkeeper.test` is `xn----zlbdf8cb2a…` (οδοσ-αβ), the
 * name in its certificate, not `xn----zlbdf8cbv…` (JavaScript's lower case, with a final ς); and the same
 * name written in lower case is the same domain (CONTRACT §5: lower-cased, stored in its ASCII form).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
let server: TlsTestServer;
const UPPER = `ΟΔΟΣ-ΑΒ.${TEST_DOMAIN}`;
const LOWER = `οδοσ-αβ.${TEST_DOMAIN}`;
// IDNA's ASCII form of both spellings (UTS #46 maps U+03A3 to U+03C3 unconditionally).
const ASCII = new URL(`https://${UPPER}/`).hostname;

beforeAll(async () => {
  expect(ASCII).toBe(`xn----zlbdf8cb2a.${TEST_DOMAIN}`);
  expect(new URL(`https://${LOWER}/`).hostname).toBe(ASCII);
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [ASCII], notAfter: new Date(Date.now() + 90 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await h.close();
  await server.close();
});

describe("an upper-case Greek name ending a label in Σ", () => {
  test("is stored in its IDNA ASCII form, and its certificate for that name is valid", async () => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: UPPER, port: server.port } });
    expect({ status: response.status, domain: (response.body as any)?.data?.domain, certStatus: (response.body as any)?.data?.status }).toEqual({
      status: 201,
      domain: ASCII,
      certStatus: "valid",
    });
  });

  test("the same name in lower case is then a duplicate (409), not a second certificate", async () => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: LOWER, port: server.port } });
    expect({ status: response.status, code: (response.body as any)?.error?.code }).toEqual({ status: 409, code: "duplicate_domain" });
  });

  test("a watch for it watches the IDNA ASCII form (§15: domain follows §5's rules)", async () => {
    const response = await h.request("POST", "/v1/watches", { body: { domain: "ΟΔΟΣ-ΑΒ.example" } });
    expect((response.body as any)?.data?.domain).toBe(new URL("https://ΟΔΟΣ-ΑΒ.example/").hostname);
  });
});
