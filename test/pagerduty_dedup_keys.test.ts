/**
 * PagerDuty triggers of CONTRACT §16, each with its own incident: `certificate.invalid`
 * opens `<id>:invalid` with severity `error`, and `certificate.revoked` opens `<id>:revoked` with
 * severity `critical` (a revoked leaf sharing `<id>:expired` would be resolved or merged with the
 * wrong incident), and `certificate.chain_expiring` opens `<id>:chain_expiring` (not the leaf's
 * `<id>:expiring`, which is another problem with its own incident), severity `warning`. End to end: certificates on real TLS servers, an OCSP responder, a PagerDuty
 * receiver, the fake clock of test/support/fleet_world.ts.
 */
import { afterEach, expect, test } from "bun:test";
import { DAY } from "../core/base/time.ts";
import { expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createIntermediateCa, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { ocspAnswer, startResponder } from "./support/revocation.ts";
import { fleetWorld, ROUTING_KEY, type FleetWorld } from "./support/fleet_world.ts";
import { pagerdutyAlertProblems } from "./support/service_shapes.ts";

let w: FleetWorld;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
  await w?.close();
  w = undefined as unknown as FleetWorld;
});

async function addPagerDuty(world: FleetWorld) {
  return expectData(await world.h.request("POST", "/v1/channels", { body: { type: "pagerduty", name: "Pager", config: { routingKey: ROUTING_KEY } } }), 201);
}

const sent = (world: FleetWorld) => world.pagerduty.requests.map((r) => [r.path, r.json.event_action, r.json.dedup_key, r.json.payload?.severity]);

test("an invalid certificate triggers <id>:invalid with severity error", async () => {
  w = await fleetWorld();
  await addPagerDuty(w);
  const { rsaIntermediate } = await testPki();
  const domain = `mismatch.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`elsewhere.${TEST_DOMAIN}`], notAfter: new Date(w.clock.now() + 80 * DAY) });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cleanups.push(() => server.close());
  const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const shown = expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200);
  expect([shown.status, shown.statusReason]).toEqual(["invalid", "hostname_mismatch"]);
  await w.settle();
  expect(sent(w)).toEqual([["/v2/enqueue", "trigger", `${cert.id}:invalid`, "error"]]);
  expect(w.pagerduty.requests[0]!.json).toMatchObject({ routing_key: ROUTING_KEY, payload: { class: "certificate.invalid" } });
  expect(pagerdutyAlertProblems(w.pagerduty.requests[0]!.json)).toEqual([]);
});

test("a revoked certificate triggers <id>:revoked with severity critical, and its renewal resolves that key", async () => {
  w = await fleetWorld();
  await addPagerDuty(w);
  const responder = await startResponder();
  cleanups.push(() => responder.close());
  const { rsaIntermediate } = await testPki();
  const domain = `revoked-pd.${TEST_DOMAIN}`;
  const leaf = await createLeaf({
    issuer: rsaIntermediate,
    dnsNames: [domain],
    serial: "0d01",
    notAfter: new Date(w.clock.now() + 80 * DAY),
    ocspUrls: [`${responder.url}/ocsp`],
  });
  responder.answer = () => ({
    body: ocspAnswer({ leaf, issuer: rsaIntermediate, status: { revoked: { at: new Date(w.clock.now() - DAY), reason: 1 } } }),
    headers: { "content-type": "application/ocsp-response" },
  });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cleanups.push(() => server.close());
  const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: [] } }), 201);
  expect(cert.status).toBe("revoked");
  await w.settle();
  expect(sent(w)).toEqual([["/v2/enqueue", "trigger", `${cert.id}:revoked`, "critical"]]);
  expect(w.pagerduty.requests[0]!.json.payload.class).toBe("certificate.revoked");

  // A new leaf (no OCSP URL, so not revoked): the renewal resolves the revoked incident.
  const renewed = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], serial: "0d02", notAfter: new Date(w.clock.now() + 90 * DAY) });
  server.setCertificate(chainPem(renewed, rsaIntermediate), renewed.keyPem);
  expect(expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200).status).toBe("valid");
  await w.settle();
  const resolves = w.pagerduty.requests.slice(1).map((r) => [r.json.event_action, r.json.dedup_key]);
  expect(resolves).toContainEqual(["resolve", `${cert.id}:revoked`]);
  expect(resolves.every(([action]) => action === "resolve")).toBe(true);
});

test("an intermediate expiring before the leaf triggers <id>:chain_expiring with severity warning, apart from the leaf's <id>:expiring", async () => {
  w = await fleetWorld();
  await addPagerDuty(w);
  const { root } = await testPki();
  const ca = await createIntermediateCa(root, { name: "CN=Short PD CA, O=Short", notAfter: new Date(w.clock.now() + 5 * DAY + 3_600_000) });
  const domain = `chain-pd.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: ca, dnsNames: [domain], notAfter: new Date(w.clock.now() + 6 * DAY + 3_600_000), freshKey: true });
  const server = await startTlsServer({ cert: chainPem(leaf, ca), key: leaf.keyPem });
  cleanups.push(() => server.close());
  const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: [7] } }), 201);
  await w.settle();
  // Both the leaf (6 days left) and its intermediate (5 days left) crossed 7: two problems, two incidents.
  const triggers = w.pagerduty.requests.map((r) => [r.json.event_action, r.json.dedup_key, r.json.payload?.severity, r.json.payload?.class]);
  expect(triggers.sort()).toEqual(
    [
      ["trigger", `${cert.id}:chain_expiring`, "warning", "certificate.chain_expiring"],
      ["trigger", `${cert.id}:expiring`, "warning", "certificate.expiring"],
    ].sort(),
  );
  for (const request of w.pagerduty.requests) expect(pagerdutyAlertProblems(request.json)).toEqual([]);
});
