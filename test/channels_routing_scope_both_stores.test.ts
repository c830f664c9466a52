/**
 * CONTRACT §7 and §16: an event goes to every *enabled* channel of *its organization and mode* whose
 * filter accepts it, on either store. The in-memory store routes over every channel it holds, so the
 * rule itself must leave out disabled channels, another organization's and the other mode's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { routeEvent } from "../core/channels/mod.ts";
import type { EventRecord } from "../core/base/records.ts";

let server: TlsTestServer;
const domain = `routing.${TEST_DOMAIN}`;
beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  // 5 days left: adding it raises one certificate.expiring event.
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], daysLeft: 5 });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await server.close();
});

describe.each(["memory", "libsql"] as const)("%s store: routing by enabled, organization and mode", (store) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ store });
  });
  afterAll(async () => {
    await h.close();
  });

  test("an event's deliveries go only to the enabled channels of its own organization and mode", async () => {
    const mine = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "mine", config: { url: `https://hooks.${TEST_DOMAIN}/mine` } } }), 201);
    const off = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "off", config: { url: `https://hooks.${TEST_DOMAIN}/off` } } }), 201);
    expectData(await h.request("PATCH", `/v1/channels/${off.id}`, { body: { enabled: false } }), 200);
    const testMode = expectData(
      await h.request("POST", "/v1/channels", { key: h.keys.test.key, body: { type: "webhook", name: "test-mode", config: { url: `https://hooks.${TEST_DOMAIN}/test-mode` } } }),
      201,
    );
    const other = await h.core.services.admin.createOrganization({ name: "Neighbour", plan: "pro" });
    const otherKey = await h.makeKey("owner", "live", other.id);
    const theirs = expectData(
      await h.request("POST", "/v1/channels", { key: otherKey.key, body: { type: "webhook", name: "theirs", config: { url: `https://hooks.${TEST_DOMAIN}/theirs` } } }),
      201,
    );

    const cert = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const events = expectData(await h.request("GET", "/v1/events"), 200).filter((e: any) => e.certificateId === cert.id);
    expect(events.map((e: any) => e.type)).toEqual(["certificate.expiring"]);
    const routedTo = events[0].deliveries.map((d: any) => d.channelId);
    expect(routedTo).toEqual([mine.id]);
    expect(routedTo).not.toContain(off.id);
    expect(routedTo).not.toContain(testMode.id);
    expect(routedTo).not.toContain(theirs.id);
    // Nothing of it shows to the other organization or the other mode.
    expect(expectData(await h.request("GET", "/v1/events", { key: otherKey.key }), 200)).toEqual([]);
    expect(expectData(await h.request("GET", "/v1/events", { key: h.keys.test.key }), 200)).toEqual([]);
  });
});

describe("routeEvent", () => {
  const event: EventRecord = {
    id: "evt_1",
    organizationId: "org_a",
    mode: "live",
    type: "certificate.expired",
    certificateId: "cert_1",
    data: { certificate: { tags: ["team:web"] } },
    createdAt: 0,
  };
  const channel = (id: string, over: Partial<{ organizationId: string; mode: "live" | "test"; enabled: boolean }> = {}) => ({
    id,
    organizationId: "org_a",
    mode: "live" as const,
    enabled: true,
    filter: null,
    ...over,
  });

  test("leaves out disabled channels, another organization's and the other mode's", () => {
    const routed = routeEvent(event, [
      channel("on"),
      channel("off", { enabled: false }),
      channel("other-org", { organizationId: "org_b" }),
      channel("test-mode", { mode: "test" }),
    ]);
    expect(routed.map((c) => c.id)).toEqual(["on"]);
  });
});
