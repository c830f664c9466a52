/**
 * Tags, mutes and channel routing through the API (CONTRACT §16): tags on add and patch, the `tag`
 * list filter, mutedUntil, and events reaching exactly the channels whose filter matches.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { DAY, HOUR } from "../core/base/time.ts";
import { expectData, TEST_DOMAIN } from "./support/harness.ts";
import { fleetWorld, type FleetWorld } from "./support/fleet_world.ts";

let w: FleetWorld;
afterEach(async () => {
  await w?.close();
  w = undefined as unknown as FleetWorld;
});

async function addCertificate(world: FleetWorld, name: string, body: Record<string, unknown> = {}, daysLeft = 5) {
  const domain = `${name}.${TEST_DOMAIN}`;
  const server = await world.tlsServer(domain, new Date(world.clock.now() + daysLeft * DAY + HOUR));
  return expectData(await world.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, ...body } }), 201);
}

describe("tags", () => {
  test("are kept sorted, shown by get and list, changed by patch, and not part of the add response", async () => {
    w = await fleetWorld();
    const created = await addCertificate(w, "tagged", { tags: ["team:payments", "env:prod", "eu/west-1"] }, 60);
    expect(created.tags).toBeUndefined();
    expect(Object.keys(created).length).toBe(13);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect(got).toMatchObject({ tags: ["env:prod", "eu/west-1", "team:payments"], mutedUntil: null });
    const patched = expectData(await w.h.request("PATCH", `/v1/certificates/${created.id}`, { body: { tags: ["z", "a.b_c-d"] } }), 200);
    expect(patched.tags).toEqual(["a.b_c-d", "z"]);
    const [listed] = expectData(await w.h.request("GET", "/v1/certificates?tag=z"), 200);
    expect(listed).toEqual({ ...patched, daysUntilExpiry: listed.daysUntilExpiry, status: listed.status });
    expect(expectData(await w.h.request("PATCH", `/v1/certificates/${created.id}`, { body: { tags: [] } }), 200).tags).toEqual([]);
  });

  test("GET /v1/certificates?tag=a,b lists the certificates carrying every listed tag", async () => {
    w = await fleetWorld();
    const both = await addCertificate(w, "both", { tags: ["a", "b"] }, 40);
    const onlyA = await addCertificate(w, "only-a", { tags: ["a"] }, 50);
    await addCertificate(w, "none", {}, 60);
    const ids = async (query: string) => expectData(await w.h.request("GET", `/v1/certificates${query}`), 200).map((c: any) => c.id);
    expect(await ids("?tag=a")).toEqual([both.id, onlyA.id]);
    expect(await ids("?tag=a,b")).toEqual([both.id]);
    expect(await ids("?tag=b,a&status=valid,expiring")).toEqual([both.id]);
    expect(await ids("?tag=c")).toEqual([]);
    const first = expectData(await w.h.request("GET", "/v1/certificates?tag=a&limit=1"), 200);
    expect(first.map((c: any) => c.id)).toEqual([both.id]);
  });
});

describe("routing", () => {
  test("an event reaches exactly the enabled channels whose filter matches; test events ignore filters", async () => {
    w = await fleetWorld();
    const hook = (name: string, filter?: unknown) =>
      w.h.request("POST", "/v1/channels", { body: { type: "webhook", name, config: { url: `${w.hook.url}/${name}` }, ...(filter ? { filter } : {}) } });
    const all = expectData(await hook("all"), 201);
    const expiredOnly = expectData(await hook("expired-only", { events: ["certificate.expired"] }), 201);
    const payments = expectData(await hook("payments", { tags: ["team:payments", "team:billing"] }), 201);
    const paymentsExpiring = expectData(await hook("payments-expiring", { events: ["certificate.expiring"], tags: ["team:payments"] }), 201);
    expect(paymentsExpiring.filter).toEqual({ events: ["certificate.expiring"], tags: ["team:payments"] });
    const off = expectData(await hook("off"), 201);
    expectData(await w.h.request("PATCH", `/v1/channels/${off.id}`, { body: { enabled: false } }), 200);

    await addCertificate(w, "pay", { tags: ["team:payments"] });
    await addCertificate(w, "web", { tags: ["team:web"] });
    await w.settle();
    const paths = () => w.hook.requests.map((r) => `${r.path} ${r.json.data.certificate?.domain.split(".")[0]}`).sort();
    expect(paths()).toEqual(["/all pay", "/all web", "/payments pay", "/payments-expiring pay"]);

    const tested = expectData(await w.h.request("POST", `/v1/channels/${expiredOnly.id}/test`), 200);
    expect(tested.status).toBe("delivered");
    expect(w.hook.requests.at(-1)!.path).toBe("/expired-only");

    // Removing the filter: every event again.
    expect(expectData(await w.h.request("PATCH", `/v1/channels/${payments.id}`, { body: { filter: null } }), 200).filter).toBeNull();
    expect(all.filter).toBeNull();
  });
});

describe("mutedUntil", () => {
  test("while muted, events are recorded with data.muted: true and no deliveries; after it, they are delivered again", async () => {
    w = await fleetWorld();
    expectData(await w.h.request("POST", "/v1/channels", { body: { type: "webhook", name: "h", config: { url: `${w.hook.url}/h` } } }), 201);
    const domain = `quiet.${TEST_DOMAIN}`;
    const server = await w.tlsServer(domain, new Date(w.clock.now() + 20 * DAY + HOUR));
    const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: [14, 7] } }), 201);
    const until = new Date(w.clock.now() + 8 * DAY).toISOString();
    const patched = expectData(await w.h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mutedUntil: until } }), 200);
    expect(patched.mutedUntil).toBe(until);

    w.clock.advance(7 * DAY); // 13 days left: threshold 14, muted
    await w.settle();
    const [mutedEvent] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(mutedEvent).toMatchObject({ type: "certificate.expiring", data: { threshold: 14, muted: true }, deliveries: [] });
    expect(w.hook.requests.length).toBe(0);

    w.clock.advance(6 * DAY); // 7 days left: threshold 7, no longer muted
    await w.settle();
    const [loud] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(loud.data.threshold).toBe(7);
    expect(loud.data.muted).toBeUndefined();
    expect(loud.deliveries.map((d: any) => d.status)).toEqual(["delivered"]);
    expect(w.hook.requests.length).toBe(1);

    expect(expectData(await w.h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mutedUntil: null } }), 200).mutedUntil).toBeNull();
  });
});

describe("retention", () => {
  test("events older than CERTKEEPER_EVENT_RETENTION are deleted with their deliveries, and finished imports; younger ones stay", async () => {
    w = await fleetWorld({ config: { eventRetentionMs: 30 * DAY } });
    const channel = expectData(await w.h.request("POST", "/v1/channels", { body: { type: "webhook", name: "h", config: { url: `${w.hook.url}/h` } } }), 201);
    expectData(await w.h.request("POST", `/v1/channels/${channel.id}/test`), 200);
    const imported = expectData(await w.h.request("POST", "/v1/imports", { body: { certificates: [{ domain: "not a domain" }] } }), 202);
    await w.h.core.services.imports!.loop.runDue();
    expect(expectData(await w.h.request("GET", `/v1/imports/${imported.id}`), 200).status).toBe("finished");
    w.clock.advance(20 * DAY);
    expectData(await w.h.request("POST", `/v1/channels/${channel.id}/test`), 200);
    expect(expectData(await w.h.request("GET", "/v1/events"), 200).length).toBe(2);
    w.clock.advance(11 * DAY);
    expect(await w.h.core.services.retention.runOnce()).toBe(1);
    const left = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(left.length).toBe(1);
    expect(left[0].deliveries).toEqual([{ channelId: channel.id, status: "delivered", attempts: 1, lastError: null }]);
    // An import finished that long ago goes too.
    expect((await w.h.request("GET", `/v1/imports/${imported.id}`)).status).toBe(404);
  });
});
