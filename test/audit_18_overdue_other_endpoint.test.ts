/**
 * CONTRACT §18 audit: "When the deadline passes and an answering endpoint, checked at that moment
 * […], still serves the leaf: one `certificate.renewal_overdue` […]; status becomes `expiring` with
 * `statusReason: "renewal_overdue"`". A rollout from 200-day to 45-day certificates that stops half
 * way: one node serves the new leaf (which, expiring first, is the certificate-level one), the other
 * keeps the old leaf past its renewal deadline. The status becomes expiring (renewal_overdue), from
 * that node, and one renewal_overdue names it in data.endpoint.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, type EventType } from "../core/base/mod.ts";
import { expectData, TEST_DOMAIN } from "./support/harness.ts";
import { twoNodes, type TwoNodes } from "./support/two_nodes.ts";

setDefaultTimeout(120_000);

let world: TwoNodes | undefined;
afterAll(() => world?.close());

describe("§18 renewal_overdue of a leaf an answering endpoint still serves", () => {
  test("a node left on the old leaf past its deadline: status expiring (renewal_overdue) comes with one certificate.renewal_overdue", async () => {
    const start = Date.now();
    const domain = `halfway.${TEST_DOMAIN}`;
    world = await twoNodes(domain, start);
    const { h, clock, leaf, serve } = world;

    // 200 days, deadline (three quarters) 10 days from now.
    const old = await leaf(start - 140 * DAY, 200 * DAY, "0c01");
    const oldDeadline = start - 140 * DAY + 150 * DAY;
    const a = await serve(old);
    const b = await serve(old, { host: "127.0.0.2", port: a.port });
    const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);
    expect(added.status).toBe("valid");

    // Node a gets a 45-day certificate (expiring before the old one: the certificate-level leaf now);
    // node b is forgotten and keeps the old one.
    const fresh = await leaf(start - HOUR, 45 * DAY, "0c02");
    await world.replace(a, fresh);
    for (let at = start + HOUR; at <= oldDeadline + 3 * HOUR; at += HOUR) {
      clock.set(at);
      await h.core.services.scheduler.runDue();
    }
    const got = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect(got.endpoints.map((e: any) => [e.address, e.serialNumber])).toEqual([
      ["127.0.0.1", "0C:02"],
      ["127.0.0.2", "0C:01"],
    ]);
    // The old leaf is past its deadline and still served by an answering endpoint: the status says so…
    expect([got.status, got.statusReason]).toEqual(["expiring", "renewal_overdue"]);
    // … and the contract's one renewal_overdue must have been raised for it.
    const overdue = async () =>
      (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[]).filter((e) => e.certificateId === added.id && (e.type as EventType) === "certificate.renewal_overdue");
    const [event, ...more] = await overdue();
    expect(more).toEqual([]);
    // It names the node and the leaf, and that leaf's own deadline and days left.
    const oldExpiresAt = got.endpoints[1].expiresAt as string;
    expect(event.data.endpoint).toEqual({ address: "127.0.0.2", serialNumber: "0C:01", expiresAt: oldExpiresAt });
    // (The leaf's times are whole seconds.)
    expect(Math.abs(Date.parse(event.data.deadline) - oldDeadline)).toBeLessThan(1000);
    expect(event.data.daysUntilExpiry).toBe(Math.floor((Date.parse(oldExpiresAt) - Date.parse(event.createdAt)) / DAY));
    // Once per serial: more checks of the same forgotten node raise nothing more.
    for (let at = oldDeadline + 4 * HOUR; at <= oldDeadline + 3 * DAY; at += 6 * HOUR) {
      clock.set(at);
      await h.core.services.scheduler.runDue();
    }
    expect((await overdue()).length).toBe(1);
  });
});
