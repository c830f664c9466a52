/**
 * CONTRACT §3 and §15: a ck_test_ key's watch with autoMonitor adds its names as POST /v1/certificates
 * would for that key: in the test mode, under the test mode's plan count. With the live mode full (its
 * plan limit reached) and the test mode empty, a test watch's name is not refused for the live mode's
 * limit: it is judged in the test mode (here: nothing answers on port 443, so no certificate could be
 * retrieved).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";

let h: Harness;
let ct: CtServer;
let server: TlsTestServer;
let transports: ReturnType<typeof createTransports>;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.automode.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 60 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  ct = await startCtServer();
  transports = await loopbackTransports();
  h = await createHarness({ transports, limits: { certificates: 1 }, config: { ctUrl: ct.url, ctIntervalMs: 3_600_000 } });
});
afterAll(async () => {
  await h.close();
  await ct.close();
  await server.close();
  await transports.close();
});

test("a test key's autoMonitor watch judges its names in the test mode, not against the live mode's full plan", async () => {
  const { rsaIntermediate } = await testPki();
  // The live mode is full.
  expectData(await h.request("POST", "/v1/certificates", { body: { domain: `live.automode.${TEST_DOMAIN}`, port: server.port } }), 201);
  const domain = `watched.automode.${TEST_DOMAIN}`;
  ct.log(await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain] }), rsaIntermediate);
  const watch = expectData(await h.request("POST", "/v1/watches", { key: h.keys.test.key, body: { domain, autoMonitor: true } }), 201);
  await (h.core.services.watches as unknown as { runDue(): Promise<number> }).runDue();
  const shown = expectData(await h.request("GET", `/v1/watches/${watch.id}`, { key: h.keys.test.key }), 200);
  // Port 443 on 127.0.0.1 has no test server: the add fails for that reason, not for the live plan.
  expect(shown.lastError).toContain(`Could not monitor "${domain}"`);
  expect(shown.lastError).toContain("No TLS certificate could be retrieved");
  expect(shown.lastError).not.toContain("limit");
});
