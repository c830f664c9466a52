/**
 * A trusted root anchors a path only while it is valid (as OpenSSL holds it; docs/watching.md: once a
 * certificate above the leaf, the anchoring root included, has expired, the path is no longer
 * trusted). A path anchored in an expired root is no trusted path: `invalid` (`untrusted_issuer`,
 * CONTRACT §5, §13). A root that expires after a check is judged again at the first check after its
 * expiry, not kept trusted because the chain sent did not change.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chainPem, createIntermediateCa, createLeaf, createRootCa, DAY, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

const harnesses: Harness[] = [];
const servers: TlsTestServer[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
  for (const server of servers) await server.close();
});

/** A root valid until `rootNotAfter`, an intermediate under it, a leaf for `domain`, served with its intermediate. */
async function world(domain: string, rootNotAfter: number, clock?: FakeClock) {
  const now = Date.now();
  const root = await createRootCa({ name: `CN=Root ${domain}, O=certkeeper tests`, notBefore: new Date(now - 400 * DAY), notAfter: new Date(rootNotAfter) });
  const intermediate = await createIntermediateCa(root, { name: `CN=Intermediate ${domain}, O=certkeeper tests`, notBefore: new Date(now - 300 * DAY), notAfter: new Date(now + 500 * DAY) });
  const leaf = await createLeaf({ issuer: intermediate, dnsNames: [domain], daysLeft: 90 });
  const server = await startTlsServer({ cert: chainPem(leaf, intermediate), key: leaf.keyPem });
  servers.push(server);
  const h = await createHarness({ trust: new TrustStore([root.certPem]), ...(clock ? { clock } : {}), config: { revocation: false } });
  harnesses.push(h);
  return { h, server, root: root as Issued };
}

test("a path anchored only in an expired root is no trusted path: invalid (untrusted_issuer), chainExpiresAt null", async () => {
  const domain = `expired-anchor.${TEST_DOMAIN}`;
  const { h, server } = await world(domain, Date.now() - 2 * DAY);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  expect({ status: cert.status, statusReason: cert.statusReason, chainExpiresAt: cert.chainExpiresAt }).toEqual({
    status: "invalid",
    statusReason: "untrusted_issuer",
    chainExpiresAt: null,
  });
});

test("a root that expires after a check: the next check after its expiry finds no trusted path", async () => {
  const domain = `expiring-anchor.${TEST_DOMAIN}`;
  const clock = new FakeClock(Date.now());
  const rootNotAfter = Math.floor((clock.now() + 2 * DAY) / 1000) * 1000;
  const { h, server } = await world(domain, rootNotAfter, clock);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const before = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  expect([before.status, before.statusReason, before.chainExpiresAt]).toEqual(["expiring", "chain_expiring", new Date(rootNotAfter).toISOString()]);
  clock.set(rootNotAfter + 1000);
  const after = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
  expect([after.status, after.statusReason]).toEqual(["invalid", "untrusted_issuer"]);
});
