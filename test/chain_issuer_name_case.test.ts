/**
 * A leaf correctly signed by the trusted test intermediate whose issuer name spells the intermediate's
 * subject in another letter case is trusted (CONTRACT §5: `untrusted_issuer` only when no path leads
 * to a trusted root). RFC 5280 §7.1 compares names after RFC 4518's preparation, which folds case;
 * `openssl verify` answers OK for this chain.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { basicConstraints, CN, dn, dnsName, forge, O, sanExt, serverAuthEku, utcTime } from "./support/forged_certs.ts";

let h: Harness;
const servers: TlsTestServer[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

test("an issuer name that differs from the intermediate's subject only in letter case still leads to the trusted root", async () => {
  const { rsaIntermediate } = await testPki();
  expect(rsaIntermediate.cert.subject).toBe("CN=certkeeper Test RSA CA, O=certkeeper intermediates");
  const domain = `issuer-case.${TEST_DOMAIN}`;
  const leaf = await forge({
    issuer: rsaIntermediate,
    issuerName: dn([CN, "CERTKEEPER TEST RSA CA"], [O, "CERTKEEPER INTERMEDIATES"]),
    subject: dn([CN, domain]),
    notBefore: utcTime("250101000000Z"),
    notAfter: utcTime("491231235959Z"),
    extensions: [basicConstraints(false), serverAuthEku(), sanExt(dnsName(domain))],
  });
  const server = await startTlsServer({ cert: leaf.certPem + rsaIntermediate.certPem, key: leaf.keyPem });
  servers.push(server);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  expect({ status: cert.status, statusReason: cert.statusReason }).toEqual({ status: "valid", statusReason: null });
});
