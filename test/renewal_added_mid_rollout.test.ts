/**
 * A certificate added while a rollout to shorter-lived certificates is under way (CONTRACT §18, §20;
 * §16's PagerDuty `renewal` key). One node already serves the new leaf (45 days, which expires before
 * the old 200-day one, so it is the certificate-level leaf); the other still serves the old leaf, past
 * its renewal deadline: one `certificate.renewal_overdue` names that node (data.endpoint). When that
 * node is fixed and every answering endpoint serves the new leaf, `certificate.renewed` is raised
 * once, as for the same rollout seen from its start, and it resolves the incident the overdue opened.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR } from "../core/base/mod.ts";
import { expectData, TEST_DOMAIN } from "./support/harness.ts";
import { twoNodes, type TwoNodes } from "./support/two_nodes.ts";

setDefaultTimeout(120_000);

let world: TwoNodes | undefined;
afterAll(() => world?.close());

describe("a certificate added in the middle of a rollout to shorter-lived certificates", () => {
  test("the forgotten node fixed: certificate.renewed once every answering endpoint serves the new leaf", async () => {
    const start = Date.now();
    const domain = `midrollout.${TEST_DOMAIN}`;
    world = await twoNodes(domain, start);
    const { h, clock, leaf, serve } = world;

    // The old leaf: 200 days, its deadline (three quarters) passed 5 days ago; 45 days left.
    const old = await leaf(start - 155 * DAY, 200 * DAY, "0d01");
    // The new leaf: 45 days, issued a day ago; it expires 2 days before the old one.
    const fresh = await leaf(start - DAY, 45 * DAY, "0d02");
    const a = await serve(fresh);
    const b = await serve(old, { host: "127.0.0.2", port: a.port });
    const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);

    const events = async () =>
      (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[])
        .filter((e) => e.certificateId === added.id)
        .reverse()
        .map((e) => [e.type, e.data.endpoint?.serialNumber ?? null]);
    // The forgotten node's old leaf is overdue: one renewal_overdue naming it.
    expect(await events()).toEqual([["certificate.renewal_overdue", "0D:01"]]);

    // The forgotten node is fixed: every node serves the new leaf now.
    await world.replace(b, fresh);
    for (let at = start + HOUR; at <= start + 2 * DAY; at += HOUR) {
      clock.set(at);
      await h.core.services.scheduler.runDue();
    }
    const got = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect(got.endpoints.map((e: any) => e.serialNumber)).toEqual(["0D:02", "0D:02"]);
    expect([got.status, got.renewal.state]).toEqual(["valid", "not_due"]);
    // CONTRACT §20: certificate.renewed, once, when every answering endpoint serves the new one
    // (it also resolves the PagerDuty `renewal` incident the overdue alert opened).
    expect(await events()).toEqual([
      ["certificate.renewal_overdue", "0D:01"],
      ["certificate.renewed", null],
    ]);
  });
});
