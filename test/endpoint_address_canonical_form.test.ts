/**
 * An endpoint's `address` is shown in its canonical (RFC 5952) form whether a name has one address or
 * several: ::1 spelt "0:0:0:0:0:0:0:1" by a resolve rule is "::1" in `endpoints` and the /metrics
 * `address` label, as it is beside another address (CONTRACT §11: one entry per address, compared by its
 * value, not its spelling; connectTo is stored in canonical form too). Everything here is on ::1
 * (private targets allowed, as in every check test).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";

const TOKEN = "certkeeper-v6-metrics-token-0123456789";
let h: Harness;
let server: TlsTestServer;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`], daysLeft: 90 });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem, host: "::1" });
  h = await createHarness({
    config: {
      metricsToken: TOKEN,
      dnsServers: "off",
      resolve: parseResolveRules(`once.${TEST_DOMAIN}=0:0:0:0:0:0:0:1,twice.${TEST_DOMAIN}=0:0:0:0:0:0:0:1|0:0:0:0:0:0:0:1,*.${TEST_DOMAIN}=127.0.0.1`),
    },
  });
});
afterAll(async () => {
  await h.close();
  await server.close();
});

async function endpointsOf(domain: string): Promise<string[]> {
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  return cert.endpoints.map((e: { address: string }) => e.address);
}

test("a name listing ::1 twice shows one endpoint, ::1", async () => {
  expect(await endpointsOf(`twice.${TEST_DOMAIN}`)).toEqual(["::1"]);
});

test("a name with the one address ::1 shows it as ::1 too, in endpoints and in the metrics label", async () => {
  expect(await endpointsOf(`once.${TEST_DOMAIN}`)).toEqual(["::1"]);
  const metrics = await h.request("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
  const lines = String(metrics.body).split("\n").filter((line) => line.includes(`domain="once.${TEST_DOMAIN}"`) && line.includes("address="));
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.filter((line) => !line.includes('address="::1"'))).toEqual([]);
});
