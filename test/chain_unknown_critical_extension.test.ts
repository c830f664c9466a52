/**
 * A leaf carrying a critical extension no one recognises (OID 1.2.3.4), otherwise signed correctly, is
 * untrusted: RFC 5280 §4.2 says a certificate-using system MUST reject it, and browsers and OpenSSL do
 * (CONTRACT §5: `invalid`, `untrusted_issuer`).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { basicConstraints, CN, dn, dnsName, ext, forge, sanExt, serverAuthEku, utcTime } from "./support/forged_certs.ts";

let h: Harness;
const servers: TlsTestServer[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

test("a leaf with an unrecognised critical extension is not trusted (invalid, untrusted_issuer), not valid", async () => {
  const { rsaIntermediate } = await testPki();
  const domain = `unknown-critical.${TEST_DOMAIN}`;
  const now = new Date();
  const yymmdd = (d: Date) => d.toISOString().slice(2, 10).replace(/-/g, "") + "000000Z";
  const leaf = await forge({
    issuer: rsaIntermediate,
    subject: dn([CN, domain]),
    notBefore: utcTime(yymmdd(new Date(now.getTime() - 10 * 86_400_000))),
    notAfter: utcTime(yymmdd(new Date(now.getTime() + 200 * 86_400_000))),
    extensions: [basicConstraints(false), serverAuthEku(), sanExt(dnsName(domain)), ext("2a030304", Buffer.from([0x05, 0x00]), true)],
  });
  const server = await startTlsServer({ cert: leaf.certPem + rsaIntermediate.certPem, key: leaf.keyPem });
  servers.push(server);

  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  expect({ status: cert.status, statusReason: cert.statusReason }).toEqual({ status: "invalid", statusReason: "untrusted_issuer" });
});
