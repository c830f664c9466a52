/**
 * The chain is read exactly as the server sent it (CONTRACT §5 `chain`), duplicates and what follows
 * them included, and a trusted path through the certificates sent is found whatever else the server
 * sent beside it (§5 `untrusted_issuer`, §13): a certificate sent twice (a cert file and a full chain
 * concatenated, which TLS libraries accept) no longer cuts the chain short at the repeat.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
const servers: TlsTestServer[] = [];
let root: Issued;
let rsaIntermediate: Issued;
let other: Issued;

beforeAll(async () => {
  ({ root, rsaIntermediate } = await testPki());
  other = await createRootCa({ name: "CN=Unrelated CA, O=certkeeper tests" });
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

let n = 0;
/** Adds a certificate for a fresh name whose server sends `leaf` and then `rest`, and GETs it. */
async function watch(rest: (leaf: Issued) => Issued[]) {
  const domain = `chain${++n}.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], daysLeft: 90 });
  const server = await startTlsServer({ cert: chainPem(leaf, ...rest(leaf)), key: leaf.keyPem });
  servers.push(server);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  return { domain, cert: expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200) };
}

describe("duplicates and extra certificates in the chain sent", () => {
  test("a leaf sent twice before its intermediate (cert + fullchain concatenated) is still trusted", async () => {
    const { cert } = await watch((leaf) => [leaf, rsaIntermediate]);
    expect({ status: cert.status, statusReason: cert.statusReason }).toEqual({ status: "valid", statusReason: null });
  });

  test("an unrelated certificate sent twice before the intermediate does not hide the intermediate", async () => {
    const { cert } = await watch(() => [other, other, rsaIntermediate]);
    expect({ status: cert.status, statusReason: cert.statusReason, hasChainExpiry: cert.chainExpiresAt !== null }).toEqual({
      status: "valid",
      statusReason: null,
      hasChainExpiry: true,
    });
  });

  test("chain lists exactly the certificates sent, a duplicate and what follows it included", async () => {
    const { domain, cert } = await watch(() => [rsaIntermediate, rsaIntermediate, root]);
    expect(cert.chain.map((c: any) => c.subject)).toEqual([domain, "certkeeper Test RSA CA", "certkeeper Test RSA CA", "certkeeper Test Root CA"]);
  });

  test("a chain of 12 certificates (10 unrelated CAs before the intermediate): all listed, the path still found", async () => {
    const fillers = await Promise.all(Array.from({ length: 10 }, (_, i) => createRootCa({ name: `CN=Filler ${i}, O=certkeeper tests` })));
    const { cert } = await watch(() => [...fillers, rsaIntermediate]);
    expect({ status: cert.status, statusReason: cert.statusReason, chainLength: cert.chain.length }).toEqual({ status: "valid", statusReason: null, chainLength: 12 });
  });
});
