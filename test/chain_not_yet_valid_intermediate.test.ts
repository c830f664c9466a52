/**
 * A chain whose intermediate is not yet valid at the first check is untrusted then, and trusted at a
 * check once the intermediate's notBefore has passed (CONTRACT §5: a check answers the judgement of its
 * moment): an untrusted verdict is judged again when time alone could change it.
 */
import { afterAll, expect, test } from "bun:test";
import { chainPem, createIntermediateCa, createLeaf, DAY } from "./support/pki.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

const servers: TlsTestServer[] = [];
const harnesses: Harness[] = [];
afterAll(async () => {
  await Promise.all(harnesses.map((h) => h.close()));
  await Promise.all(servers.map((s) => s.close()));
});

test("an intermediate not yet valid at the first check: untrusted then, valid once its notBefore has passed", async () => {
  const { root } = await testPki();
  const clock = new FakeClock(Date.now());
  const h = await createHarness({ clock });
  harnesses.push(h);
  const early = await createIntermediateCa(root, {
    name: "CN=certkeeper Early CA, O=certkeeper intermediates",
    notBefore: new Date(clock.now() + DAY),
    notAfter: new Date(clock.now() + 1000 * DAY),
  });
  const domain = `early-intermediate.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: early, dnsNames: [domain], notBefore: new Date(clock.now() - DAY), daysLeft: 200 });
  const server = await startTlsServer({ cert: chainPem(leaf, early), key: leaf.keyPem });
  servers.push(server);

  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const first = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
  expect([first.status, first.statusReason]).toEqual(["invalid", "untrusted_issuer"]);

  // Two days later the intermediate is within its validity period: the same chain now has a valid path.
  clock.advance(2 * DAY);
  // Control: a certkeeper that first sees this chain now judges it trusted.
  const fresh = await createHarness({ clock: new FakeClock(clock.now()) });
  harnesses.push(fresh);
  const control = expectData(await fresh.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  expect(control.status).toBe("valid");
  const later = expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect({ status: later.status, statusReason: later.statusReason, chainExpiresAt: later.chainExpiresAt }).toEqual({
    status: "valid",
    statusReason: null,
    chainExpiresAt: expect.any(String),
  });
});
