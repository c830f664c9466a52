/**
 * Validity times in encodings the TLS layer accepts and the ASN.1 library misreads (SPEC 2.2, CONTRACT
 * §5): a UTCTime with an offset from UTC ("300101000000+0100") is the instant it names,
 * 2029-12-31T23:00:00Z as OpenSSL reads it (not 1899, expired, with an alert); a GeneralizedTime of the
 * year 0000 is shown as that year, not 1900.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { basicConstraints, CN, dn, dnsName, forge, generalizedTime, sanExt, serverAuthEku, utcTime } from "./support/forged_certs.ts";

let h: Harness;
const servers: TlsTestServer[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function addAndGet(label: string, notBefore: Buffer, notAfter: Buffer) {
  const { rsaIntermediate } = await testPki();
  const domain = `${label}.${TEST_DOMAIN}`;
  const leaf = await forge({
    issuer: rsaIntermediate,
    subject: dn([CN, domain]),
    notBefore,
    notAfter,
    extensions: [basicConstraints(false), serverAuthEku(), sanExt(dnsName(domain))],
  });
  const server = await startTlsServer({ cert: leaf.certPem + rsaIntermediate.certPem, key: leaf.keyPem });
  servers.push(server);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  return expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
}

test("UTCTime notAfter with an offset (+0100) expiring in 2029 is not shown as expired in 1899", async () => {
  const cert = await addAndGet("utc-offset", utcTime("250101000000Z"), utcTime("300101000000+0100"));
  expect({ expiresAt: cert.expiresAt, validTo: cert.chain[0].validTo, expired: cert.status === "expired", daysPositive: cert.daysUntilExpiry > 0 }).toEqual({
    expiresAt: "2029-12-31T23:00:00.000Z",
    validTo: "2029-12-31T23:00:00.000Z",
    expired: false,
    daysPositive: true,
  });
  const events = expectData(await h.request("GET", "/v1/events?limit=100"), 200);
  expect(events.filter((e: any) => e.certificateId === cert.id).map((e: any) => e.type)).not.toContain("certificate.expired");
});

test("GeneralizedTime notBefore in year 0000 is shown as year 0000, not 1900", async () => {
  const cert = await addAndGet("year-zero", generalizedTime("00000101000000Z"), utcTime("491231235959Z"));
  expect({ issuedAt: cert.issuedAt, validFrom: cert.chain[0].validFrom }).toEqual({
    issuedAt: "0000-01-01T00:00:00.000Z",
    validFrom: "0000-01-01T00:00:00.000Z",
  });
});
