/**
 * The list's `domain` filter finds a certificate by the name as it was added: `bücher.certkeeper.test`
 * (stored as `xn--bcher-kva.certkeeper.test`, CONTRACT §5) and `BÜCHER…` search its ASCII form (§7: a
 * case-insensitive substring).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
let server: TlsTestServer;
const ASCII = `xn--bcher-kva.${TEST_DOMAIN}`;

beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [ASCII], notAfter: new Date(Date.now() + 90 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `bücher.${TEST_DOMAIN}`, port: server.port } }), 201);
  expect(added.domain).toBe(ASCII);
  // The A-label finds it: the certificate is there.
  expect((expectData(await h.request("GET", `/v1/certificates?domain=${ASCII}`), 200) as Array<{ domain: string }>).map((c) => c.domain)).toEqual([ASCII]);
});
afterAll(async () => {
  await h.close();
  await server.close();
});

async function found(filter: string): Promise<string[]> {
  const data = expectData(await h.request("GET", `/v1/certificates?domain=${encodeURIComponent(filter)}`), 200) as Array<{ domain: string }>;
  return data.map((c) => c.domain);
}

describe("GET /v1/certificates?domain= with the name as it was added", () => {
  test("the U-label it was added by finds it", async () => {
    expect(await found(`bücher.${TEST_DOMAIN}`)).toEqual([ASCII]);
  });

  test("the upper-case U-label finds it (case-insensitive)", async () => {
    expect(await found(`BÜCHER.${TEST_DOMAIN}`)).toEqual([ASCII]);
  });
});
