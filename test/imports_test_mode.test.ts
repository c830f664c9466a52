/**
 * CONTRACT §3 and §16: what a ck_test_ key creates is invisible to ck_live_ keys of the same
 * organization, and the reverse. A certificate a test key's import creates is the test mode's: the
 * test key gets and lists it, the live key does not see it (404), as with POST /v1/certificates.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DAY } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let server: TlsTestServer;
let h: Harness;
beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.import-modes.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 60 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  h = await createHarness({ store: "libsql" });
});
afterAll(async () => {
  await h.close();
  await server.close();
});

test("a ck_test_ key's import creates test-mode certificates: seen by the test key, 404 for the live key", async () => {
  const testKey = h.keys.test.key;
  const liveKey = h.keys.owner.key;
  const domain = `a.import-modes.${TEST_DOMAIN}`;
  const { id } = expectData(await h.request("POST", "/v1/imports", { key: testKey, body: { certificates: [{ domain, port: server.port }] } }), 202);
  await h.core.services.imports!.loop.runDue();
  const done = expectData(await h.request("GET", `/v1/imports/${id}`, { key: testKey }), 200);
  expect(done.results.map((r: any) => r.status)).toEqual(["created"]);
  const certificateId = done.results[0].certificateId;

  expect(expectData(await h.request("GET", `/v1/certificates/${certificateId}`, { key: testKey }), 200).domain).toBe(domain);
  expect(expectData(await h.request("GET", "/v1/certificates", { key: testKey }), 200).map((c: any) => c.id)).toEqual([certificateId]);
  expectError(await h.request("GET", `/v1/certificates/${certificateId}`, { key: liveKey }), 404, "certificate_not_found");
  expect(expectData(await h.request("GET", "/v1/certificates", { key: liveKey }), 200)).toEqual([]);
  // The live mode may add the same name for itself.
  expectData(await h.request("POST", "/v1/certificates", { key: liveKey, body: { domain, port: server.port } }), 201);
});
