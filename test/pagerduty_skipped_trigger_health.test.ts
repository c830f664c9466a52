/**
 * CONTRACT §23 "Delivery health": failingSince is "set at the first failed attempt after a success,
 * cleared by the next success". A PagerDuty trigger that is not sent (its problem was resolved since,
 * docs/alerting.md) is no attempt at all: nothing reached the endpoint, which still fails. The
 * channel's health stays exactly as the last attempt left it, and the delivery's attempts are not
 * counted up.
 */
import { afterEach, expect, test } from "bun:test";
import { DAY, HOUR } from "../core/base/time.ts";
import { expectData, TEST_DOMAIN } from "./support/harness.ts";
import { fleetWorld, ROUTING_KEY, type FleetWorld } from "./support/fleet_world.ts";

let w: FleetWorld;
afterEach(async () => {
  await w?.close();
  w = undefined as unknown as FleetWorld;
});

test("a skipped PagerDuty trigger does not clear failingSince of a channel whose endpoint keeps failing", async () => {
  w = await fleetWorld();
  const ch = expectData(await w.h.request("POST", "/v1/channels", { body: { type: "pagerduty", name: "pd", config: { routingKey: ROUTING_KEY } } }), 201);
  w.pagerduty.answer = () => ({ status: 500 });
  const domain = `pdhealth.${TEST_DOMAIN}`;
  const server = await w.tlsServer(domain, new Date(w.clock.now() + 5 * DAY + HOUR), "0a01");
  const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const t0 = w.clock.now();
  await w.settle(); // the expiring trigger fails (retry in 1 s)
  expect(w.pagerduty.requests.map((r) => r.json.event_action)).toEqual(["trigger"]);

  w.clock.advance(500);
  await w.renew(server, domain, new Date(w.clock.now() + 80 * DAY), "0a02");
  expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
  await w.h.core.services.deliveries!.loop.runDue(); // the renewal's resolves fail too (retry in 1 s)
  const resolvesSent = w.pagerduty.requests.length;
  expect(resolvesSent).toBeGreaterThan(1);
  let health = expectData(await w.h.request("GET", `/v1/channels/${ch.id}`), 200).health;
  expect(health.failingSince).toBe(new Date(t0).toISOString());

  w.clock.advance(500); // the trigger's retry comes due; it is not sent
  await w.h.core.services.deliveries!.loop.runDue();
  expect(w.pagerduty.requests.length).toBe(resolvesSent);
  const after = expectData(await w.h.request("GET", `/v1/channels/${ch.id}`), 200).health;
  // No attempt succeeded since t0: the channel is still failing, as the resolves' attempts left it.
  expect(after).toEqual(health);
  expect(after.failingSince).toBe(new Date(t0).toISOString());
  expect(after.lastStatus).not.toBe("delivered");
  // The trigger's delivery ended with the one attempt it made.
  const triggers = (expectData(await w.h.request("GET", "/v1/events?limit=100"), 200) as any[]).filter((e) => e.type === "certificate.expiring");
  expect(triggers.flatMap((e) => e.deliveries ?? []).map((d: any) => [d.status, d.attempts])).toEqual([["delivered", 1]]);
});
