/**
 * The private-address rule per endpoint (CONTRACT §11), with CERTKEEPER_ALLOW_PRIVATE_TARGETS off: a
 * refused address behind a multi-address name is never connected to and is reported as an unreachable
 * endpoint (connection_refused); connectTo cannot get around it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";

const NAME = `private.${TEST_DOMAIN}`;
let open: Harness;
let guarded: Harness;
const nodes: TlsTestServer[] = [];
let port: number;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`] });
  nodes.push(await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem }));
  port = nodes[0]!.port;
  nodes.push(await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem, port, host: "127.0.0.2" }));
  const resolve = parseResolveRules(`${NAME}=127.0.0.1|10.0.0.8|127.0.0.2,lb.${TEST_DOMAIN}=127.0.0.2,*.${TEST_DOMAIN}=127.0.0.1`);
  // The same store seen by a process that allows private targets (to have something monitored) and
  // by one that does not (the rule under test). Only the guarded one sees 10.0.0.8, which it must
  // never connect to: tests connect to loopback addresses only.
  const loopbackOnly = parseResolveRules(`${NAME}=127.0.0.1|127.0.0.2,lb.${TEST_DOMAIN}=127.0.0.2,*.${TEST_DOMAIN}=127.0.0.1`);
  open = await createHarness({ config: { resolve: loopbackOnly, allowPrivateTargets: true } });
  guarded = await createHarness({ store: open.store, config: { resolve, allowPrivateTargets: false } });
});

afterAll(async () => {
  await guarded.core.stop();
  await open.close();
  await Promise.all(nodes.map((node) => node.close()));
});

const connections = () => nodes.map((node) => node.connections()).reduce((a, b) => a + b, 0);

describe("a name whose addresses are private", () => {
  test("adding it is refused as a whole: 422, no address connected, no address named", async () => {
    const before = connections();
    const response = await guarded.request("POST", "/v1/certificates", { body: { domain: NAME, port } });
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain("resolves to a loopback address");
    expect(response.body.error.message).toContain("resolves to a private address");
    expect(response.body.error.message).not.toMatch(/127\.0\.0\.[12]:|10\.0\.0\.8:/);
    expect(connections()).toBe(before);
  });

  test("a monitored certificate re-checked there: each refused address is an unreachable endpoint (connection_refused), never connected", async () => {
    const created = expectData(await open.request("POST", "/v1/certificates", { body: { domain: NAME, port } }), 201);
    const watched = expectData(await open.request("GET", `/v1/certificates/${created.id}`), 200);
    expect(watched.endpoints.map((e: any) => [e.address, e.status])).toEqual([
      ["127.0.0.1", "valid"],
      ["127.0.0.2", "valid"],
    ]);
    const record = await open.store.certificates.get({ organizationId: open.org.id, mode: "live" }, created.id);
    const before = connections();
    const checked = await guarded.core.services.monitor.check(record!, { manual: true });
    expect(connections()).toBe(before);
    const after = expectData(await open.request("GET", `/v1/certificates/${created.id}`), 200);
    expect(after.endpoints.map((e: any) => [e.address, e.status, e.statusReason, e.serialNumber])).toEqual([
      ["10.0.0.8", "unreachable", "connection_refused", null],
      ["127.0.0.1", "unreachable", "connection_refused", null],
      ["127.0.0.2", "unreachable", "connection_refused", null],
    ]);
    expect([after.status, after.statusReason, checked!.events.map((e) => e.type)]).toEqual(["unreachable", "connection_refused", ["certificate.unreachable"]]);
  });
});

describe("connectTo", () => {
  test("a private IP literal is refused like a name that resolves to one: 422, nothing stored, no connection", async () => {
    const before = connections();
    for (const connectTo of ["127.0.0.2", "::ffff:127.0.0.2", `lb.${TEST_DOMAIN}`]) {
      const response = await guarded.request("POST", "/v1/certificates", { body: { domain: `via.${TEST_DOMAIN}`, port, connectTo } });
      expectError(response, 422, "certificate_not_found");
    }
    expect(connections()).toBe(before);
    expect(expectData(await guarded.request("GET", "/v1/certificates?domain=via."), 200)).toEqual([]);
  });

  test("PATCH to a private connectTo stores it and re-checks at once: connection_refused, no connection", async () => {
    const created = expectData(await open.request("POST", "/v1/certificates", { body: { domain: `patch.${TEST_DOMAIN}`, port } }), 201);
    // The guarded process serves the PATCH: same organization, through its own key.
    const key = await guarded.makeKey("owner", "live", open.org.id);
    const before = connections();
    const patched = expectData(await guarded.request("PATCH", `/v1/certificates/${created.id}`, { key: key.key, body: { connectTo: "127.0.0.2" } }), 200);
    expect(connections()).toBe(before);
    expect([patched.connectTo, patched.status, patched.statusReason, patched.endpoints.map((e: any) => [e.address, e.statusReason])]).toEqual([
      "127.0.0.2",
      "unreachable",
      "connection_refused",
      [["127.0.0.2", "connection_refused"]],
    ]);
  });
});
