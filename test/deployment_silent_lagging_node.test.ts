/**
 * A pending deployment (CONTRACT §20) whose lagging node stops answering: once every *answering*
 * endpoint serves the issuance, the deployment returns to null and `certificate.renewed` is raised,
 * once: the event that resolves the PagerDuty `not_deployed` incident. A silent node holds nothing up.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR } from "../core/base/time.ts";
import { namesKey } from "../core/deployment/mod.ts";
import { expectData, TEST_DOMAIN } from "./support/harness.ts";
import { twoNodes, type TwoNodes } from "./support/two_nodes.ts";

setDefaultTimeout(120_000);
let world: TwoNodes | undefined;
afterAll(() => world?.close());

test("not_deployed, then the lagging node goes silent: deployment null and certificate.renewed once, from the answering node", async () => {
  // X.509 times are whole seconds: so is the issuance the watch records.
  const start = Math.floor(Date.now() / 1000) * 1000;
  const domain = `silent-lagging.${TEST_DOMAIN}`;
  world = await twoNodes(domain, start);
  const { h, clock, leaf, serve } = world;
  const old = await leaf(start - 10 * DAY, 90 * DAY, "0e11");
  const fresh = await leaf(start - HOUR, 90 * DAY, "0e12");
  const a = await serve(old);
  const b = await serve(old, { host: "127.0.0.2", port: a.port });
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);
  const scope = { organizationId: h.org.id, mode: "live" as const };
  // A watch recorded the new issuance (what the CT poller notes); node .1 serves it, node .2 lags.
  const deployment = { issuedAt: start - HOUR, notAfter: start - HOUR + 90 * DAY, fingerprintSha256: null, issuer: "certkeeper intermediates", seenAt: start, announced: false };
  expect(await h.store.certificates.noteIssuance(scope, { namesKey: namesKey([domain]), deployment })).toBe(1);
  await world.replace(a, fresh);
  const events = async () =>
    (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[]).filter((e) => e.certificateId === added.id).reverse().map((e) => [e.type, e.data.lagging ?? null]);
  const run = async (from: number, to: number) => {
    for (let at = from; at <= to; at += HOUR) {
      clock.set(at);
      await h.core.services.scheduler.runDue();
    }
  };
  await run(start + HOUR, start + 26 * HOUR);
  expect(await events()).toEqual([["certificate.not_deployed", ["127.0.0.2"]]]);
  expect(expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200).deployment).toMatchObject({ servedBy: 1, endpoints: 2 });

  // The lagging node goes silent: the one answering endpoint serves the issuance.
  await b.close();
  await run(start + 27 * HOUR, start + 3 * DAY);
  const got = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
  expect(got.endpoints.map((e: any) => [e.address, e.serialNumber, e.status])).toEqual([
    ["127.0.0.1", "0E:12", "valid"],
    ["127.0.0.2", null, "unreachable"],
  ]);
  expect(got.deployment).toBeNull();
  expect(await events()).toEqual([
    ["certificate.not_deployed", ["127.0.0.2"]],
    ["certificate.renewed", null],
  ]);
});
