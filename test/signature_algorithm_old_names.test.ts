/**
 * Older signature algorithm OIDs are named as OpenSSL names them (CONTRACT §5: OpenSSL's long name):
 * 1.3.14.3.2.29 sha1WithRSA, 1.3.14.3.2.3 md5WithRSA, 1.3.36.3.3.1.2 ripemd160WithRSA; and the OIW
 * md5WithRSA leaf gets `weak_signature` (§13: signed with SHA-1 or MD5).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { basicConstraints, CN, dn, dnsName, forge, oid, sanExt, seq, serverAuthEku, utcTime } from "./support/forged_certs.ts";

let h: Harness;
const servers: TlsTestServer[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function served(label: string, oidHex: string) {
  const { rsaIntermediate } = await testPki();
  const domain = `${label}.${TEST_DOMAIN}`;
  const leaf = await forge({
    issuer: rsaIntermediate,
    subject: dn([CN, domain]),
    notBefore: utcTime("250101000000Z"),
    notAfter: utcTime("491231235959Z"),
    extensions: [basicConstraints(false), serverAuthEku(), sanExt(dnsName(domain))],
    signatureAlgorithm: seq(oid(oidHex), Buffer.from([0x05, 0x00])),
  });
  const server = await startTlsServer({ cert: leaf.certPem + rsaIntermediate.certPem, key: leaf.keyPem });
  servers.push(server);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  return expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
}

test("OIW sha1WithRSA (1.3.14.3.2.29) is named sha1WithRSA, as OpenSSL names it", async () => {
  const cert = await served("oiw-sha1", "2b0e03021d");
  expect(cert.signatureAlgorithm).toBe("sha1WithRSA");
});

test("OIW md5WithRSA (1.3.14.3.2.3) is named md5WithRSA and warned about as weak_signature", async () => {
  const cert = await served("oiw-md5", "2b0e030203");
  expect({ signatureAlgorithm: cert.signatureAlgorithm, weakSignature: cert.warnings.includes("weak_signature") }).toEqual({
    signatureAlgorithm: "md5WithRSA",
    weakSignature: true,
  });
});

test("ripemd160WithRSA (1.3.36.3.3.1.2) is named ripemd160WithRSA, as OpenSSL names it", async () => {
  const cert = await served("ripemd160", "2b2403030102");
  expect(cert.signatureAlgorithm).toBe("ripemd160WithRSA");
});
