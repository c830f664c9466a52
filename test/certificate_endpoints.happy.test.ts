/**
 * Every address behind a name (CONTRACT §11): real TLS servers on 127.0.0.1, 127.0.0.3 and ::1 behind
 * one name, each serving its own certificate; connectTo; uniqueness per target.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";

/** Every name under it resolves to three addresses; its certificates name the whole zone. */
const ZONE = `multi.${TEST_DOMAIN}`;
const LB = `lb.${TEST_DOMAIN}`;
let n = 0;
const fresh_name = () => `n${++n}.${ZONE}`;
let h: Harness;
let port: number;
const nodes: Record<string, TlsTestServer> = {};
let fresh: Issued;
let stale: Issued;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  fresh = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${ZONE}`, LB], daysLeft: 90 });
  stale = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${ZONE}`, LB], daysLeft: 20 });
  // One port on three loopback addresses: 127.0.0.1 first picks a free port, the others take it too.
  nodes["127.0.0.1"] = await startTlsServer({ cert: chainPem(fresh, rsaIntermediate), key: fresh.keyPem });
  port = nodes["127.0.0.1"].port;
  nodes["127.0.0.3"] = await startTlsServer({ cert: chainPem(stale, rsaIntermediate), key: stale.keyPem, port, host: "127.0.0.3" });
  nodes["::1"] = await startTlsServer({ cert: chainPem(fresh, rsaIntermediate), key: fresh.keyPem, port, host: "::1" });
  h = await createHarness({
    config: {
      // Listed out of order: endpoints come back IPv4 first, then IPv6, each in numeric order.
      resolve: parseResolveRules(`*.${ZONE}=::1|127.0.0.3|127.0.0.1,${LB}=127.0.0.3|127.0.0.1,nowhere.${TEST_DOMAIN}=none,*.${TEST_DOMAIN}=127.0.0.1`),
    },
  });
});

afterAll(async () => {
  await h.close();
  await Promise.all(Object.values(nodes).map((node) => node.close()));
});

const add = async (body: Record<string, unknown>) => expectData(await h.request("POST", "/v1/certificates", { body: { port, ...body } }), 201);
const get = async (id: string) => expectData(await h.request("GET", `/v1/certificates/${id}`), 200);
const check = async (id: string) => expectData(await h.request("POST", `/v1/certificates/${id}/check`), 200);
const eventsOf = async (id: string) => (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[]).filter((e) => e.certificateId === id);
const serial = (issued: Issued) => issued.cert.serialNumber.toUpperCase().replace(/^00(?=[89A-F])/, "").match(/../g)!.join(":");

describe("every address behind a name", () => {
  test("each address is checked with SNI for the domain; endpoints are IPv4 first, then IPv6; the certificate follows the earliest-expiring leaf", async () => {
    const before = Object.fromEntries(Object.entries(nodes).map(([address, node]) => [address, node.servernames().length]));
    const domain = fresh_name();
    const created = await add({ domain });
    const cert = await get(created.id);
    expect(cert.endpoints.map((e: any) => [e.address, e.status, e.statusReason, e.serialNumber])).toEqual([
      ["127.0.0.1", "valid", null, serial(fresh)],
      ["127.0.0.3", "expiring", "expiring_soon", serial(stale)],
      ["::1", "valid", null, serial(fresh)],
    ]);
    expect(cert.endpoints[1]).toEqual({
      address: "127.0.0.3",
      status: "expiring",
      statusReason: "expiring_soon",
      serialNumber: serial(stale),
      fingerprintSha256: expect.stringMatching(/^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/),
      expiresAt: stale.cert.notAfter.toISOString(),
      lastCheckedAt: cert.lastCheckedAt,
      dane: null,
    });
    // The certificate-level fields describe the stale node, whose leaf expires first.
    expect([cert.status, cert.statusReason, cert.serialNumber, cert.daysUntilExpiry, cert.expiresAt]).toEqual([
      "expiring",
      "expiring_soon",
      serial(stale),
      19,
      stale.cert.notAfter.toISOString(),
    ]);
    for (const [address, node] of Object.entries(nodes)) {
      expect({ address, names: node.servernames().slice(before[address]) }).toEqual({ address, names: [domain] });
    }
    expect((await eventsOf(created.id)).map((e) => [e.type, e.data.threshold])).toEqual([["certificate.expiring", 30]]);
  });

  test("a renewal is announced once every node serves the new certificate; a stale node keeps the old one's alerts", async () => {
    const { rsaIntermediate } = await testPki();
    const created = await add({ domain: fresh_name(), name: "renewal", alertThresholds: [30, 14] });
    // The stale node is renewed: now every node serves `fresh`.
    nodes["127.0.0.3"]!.setCertificate(chainPem(fresh, rsaIntermediate), fresh.keyPem);
    try {
      const renewed = await check(created.id);
      expect([renewed.status, renewed.serialNumber]).toEqual(["valid", serial(fresh)]);
      expect((await eventsOf(created.id)).map((e) => e.type).sort()).toEqual(["certificate.expiring", "certificate.renewed"]);
      // A node rolled back to the old certificate: the old one's threshold was announced already.
      nodes["127.0.0.3"]!.setCertificate(chainPem(stale, rsaIntermediate), stale.keyPem);
      const rolledBack = await check(created.id);
      expect([rolledBack.status, rolledBack.serialNumber]).toEqual(["expiring", serial(stale)]);
      expect((await eventsOf(created.id)).map((e) => e.type).sort()).toEqual(["certificate.expiring", "certificate.renewed"]);
    } finally {
      nodes["127.0.0.3"]!.setCertificate(chainPem(stale, rsaIntermediate), stale.keyPem);
    }
  });

  test("a node that stops answering is an unreachable endpoint; the certificate is judged on the others", async () => {
    const { rsaIntermediate } = await testPki();
    const created = await add({ domain: fresh_name(), name: "node down", connectTo: LB });
    expect((await get(created.id)).endpoints.map((e: any) => e.address)).toEqual(["127.0.0.1", "127.0.0.3"]);
    const down = nodes["127.0.0.3"]!;
    await down.close();
    try {
      const cert = await check(created.id);
      expect(cert.endpoints).toEqual([
        expect.objectContaining({ address: "127.0.0.1", status: "valid", serialNumber: serial(fresh) }),
        { address: "127.0.0.3", status: "unreachable", statusReason: "connection_refused", serialNumber: null, fingerprintSha256: null, expiresAt: null, lastCheckedAt: cert.lastCheckedAt, dane: null },
      ]);
      expect([cert.status, cert.statusReason, cert.serialNumber]).toEqual(["valid", null, serial(fresh)]);
    } finally {
      nodes["127.0.0.3"] = await startTlsServer({ cert: chainPem(stale, rsaIntermediate), key: stale.keyPem, port, host: "127.0.0.3" });
    }
  });
});

describe("re-checks", () => {
  test("a re-check whose leaves are unchanged on every address reuses the stored judgement: nothing is parsed or rewritten", async () => {
    const created = await add({ domain: fresh_name(), name: "unchanged" });
    const record = (await h.store.certificates.get({ organizationId: h.org.id, mode: "live" }, created.id))!;
    const saves: Array<boolean | undefined> = [];
    const certificates = h.core.services.store.certificates;
    const original = certificates.saveCheck;
    certificates.saveCheck = (r, events, options) => {
      saves.push(options?.detailsChanged);
      return original.call(certificates, r, events, options);
    };
    try {
      const first = await h.core.services.monitor.check(record, { manual: false });
      const second = await h.core.services.monitor.check(first!.record, { manual: false });
      // The same objects as stored: the source recognised every chain by its fingerprint.
      expect(second!.record.details).toBe(first!.record.details);
      expect(second!.record.endpoints).toBe(first!.record.endpoints);
      expect(second!.record.endpoints.length).toBe(3);
      expect(saves).toEqual([false, false]);
    } finally {
      certificates.saveCheck = original;
    }
  });
});

describe("connectTo", () => {
  test("an IP literal is connected to instead of the domain, which need not resolve; SNI is still the domain", async () => {
    const domain = `nowhere.${TEST_DOMAIN}`;
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem, host: "127.0.0.4" });
    try {
      const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port, connectTo: "127.0.0.4" } }), 201);
      const cert = await get(created.id);
      expect([cert.status, cert.connectTo, cert.protocol, cert.endpoints.map((e: any) => e.address)]).toEqual(["valid", "127.0.0.4", "tls", ["127.0.0.4"]]);
      expect(server.servernames()).toEqual([domain]);
    } finally {
      await server.close();
    }
  });

  test("an IPv6 literal in brackets is stored in its canonical form", async () => {
    const created = await add({ domain: `v6.${TEST_DOMAIN}`, connectTo: "[0:0:0:0:0:0:0:1]" });
    // The certificate served there names the zone and LB only: connecting elsewhere does not change the host name checked.
    const cert = await get(created.id);
    expect([cert.connectTo, cert.endpoints.map((e: any) => e.address), cert.statusReason]).toEqual(["::1", ["::1"], "hostname_mismatch"]);
  });

  test("domain, port, protocol and connectTo together are unique: another connectTo is another certificate, the same again is 409", async () => {
    const domain = `unique.${TEST_DOMAIN}`;
    await add({ domain });
    await add({ domain, connectTo: "127.0.0.3" });
    const again = await h.request("POST", "/v1/certificates", { body: { domain, port, connectTo: "127.0.0.3" } });
    expect([again.status, again.body.error?.code]).toEqual([409, "duplicate_domain"]);
    const list = expectData(await h.request("GET", `/v1/certificates?domain=unique.`), 200);
    expect(list.map((c: any) => c.connectTo).sort()).toEqual(["127.0.0.3", null]);
  });

  test("PATCH connectTo stores it and checks the new server at once; null goes back to the domain", async () => {
    const created = await add({ domain: fresh_name(), name: "patched" });
    const patched = expectData(await h.request("PATCH", `/v1/certificates/${created.id}`, { body: { connectTo: "127.0.0.1" } }), 200);
    expect([patched.connectTo, patched.endpoints.map((e: any) => e.address), patched.serialNumber, patched.status]).toEqual([
      "127.0.0.1",
      ["127.0.0.1"],
      serial(fresh),
      "valid",
    ]);
    const back = expectData(await h.request("PATCH", `/v1/certificates/${created.id}`, { body: { connectTo: null } }), 200);
    expect([back.connectTo, back.endpoints.length, back.serialNumber]).toEqual([null, 3, serial(stale)]);
  });

  test("the add response keeps exactly its 13 fields", async () => {
    const created = await add({ domain: fresh_name(), name: "thirteen", connectTo: LB });
    expect(Object.keys(created)).toEqual([
      "id", "domain", "name", "status", "daysUntilExpiry", "expiresAt", "issuedAt", "issuer", "subject", "port", "alertThresholds", "createdAt", "updatedAt",
    ]);
  });
});

test("a protocol's default port is used when the port is omitted", async () => {
  const response = await h.request("POST", "/v1/certificates", { body: { domain: `mail.${TEST_DOMAIN}`, protocol: "smtp", connectTo: "127.0.0.9" } });
  expect([response.status, response.body.error?.code]).toEqual([422, "certificate_not_found"]);
  expect(response.body.error.message).toContain(`"mail.${TEST_DOMAIN}:25 (smtp) via 127.0.0.9"`);
});

void DAY;
