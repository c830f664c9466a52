/**
 * A leaf whose Microsoft Application Policies extension (1.3.6.1.4.1.311.21.10, written by Active
 * Directory Certificate Services) is marked critical, beside an extendedKeyUsage naming serverAuth, is
 * trusted: Chromium's verifier takes that extension as handled when the certificate also has an EKU,
 * so Chrome trusts such an enterprise chain.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { basicConstraints, CN, dn, dnsName, ext, forge, oid, sanExt, seq, serverAuthEku, utcTime } from "./support/forged_certs.ts";

let h: Harness;
const servers: TlsTestServer[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

test("a leaf with a critical MS Application Policies extension beside an EKU of serverAuth is trusted, as Chrome trusts it", async () => {
  const { rsaIntermediate } = await testPki();
  const domain = `ms-app-policies.${TEST_DOMAIN}`;
  const now = new Date();
  const yymmdd = (d: Date) => d.toISOString().slice(2, 10).replace(/-/g, "") + "000000Z";
  // ApplicationPolicies ::= SEQUENCE OF PolicyInformation { policyIdentifier: id-kp-serverAuth }
  const msApplicationPolicies = ext("2b060104018237150a", seq(seq(oid("2b06010505070301"))), true);
  const leaf = await forge({
    issuer: rsaIntermediate,
    subject: dn([CN, domain]),
    notBefore: utcTime(yymmdd(new Date(now.getTime() - 10 * 86_400_000))),
    notAfter: utcTime(yymmdd(new Date(now.getTime() + 200 * 86_400_000))),
    extensions: [basicConstraints(false), serverAuthEku(), sanExt(dnsName(domain)), msApplicationPolicies],
  });
  const server = await startTlsServer({ cert: leaf.certPem + rsaIntermediate.certPem, key: leaf.keyPem });
  servers.push(server);

  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  expect({ status: cert.status, statusReason: cert.statusReason }).toEqual({ status: "valid", statusReason: null });
});
