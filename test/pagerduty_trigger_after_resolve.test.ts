/**
 * PagerDuty (CONTRACT §16): a problem opens an alert (dedup_key = certificate id + ":" + problem) and
 * its end resolves it. A trigger whose delivery failed once and is retried on the schedule must not
 * reach PagerDuty after the resolve that ended its problem: PagerDuty keeps the last word on a dedup
 * key, and would hold an incident open for a certificate already renewed, which nothing resolves any
 * more. Such a trigger is not sent; its delivery ends as done.
 */
import { expect, test } from "bun:test";
import { Deliverer } from "../core/notify/deliverer.ts";
import { silentLogger } from "../core/base/log.ts";
import type { Scope } from "../core/base/records.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { channelRecord, deliveryRecord, eventRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { heldTransport } from "./support/held_transport.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

test("a retried PagerDuty trigger does not reopen an alert its certificate's later renewal already resolved", async () => {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channel = channelRecord(scope, {
    type: "pagerduty",
    name: "On call",
    config: { routingKey: "R0123456789abcdef0123456789abcde" },
    signingSecret: null,
  });
  await store.channels.insert(channel, { limit: 10 });
  const certificate = { id: "cert_x", domain: "example.com", name: "example.com", port: 443, daysUntilExpiry: 6, expiresAt: new Date(NOW + 6 * 86_400_000).toISOString(), issuer: "Let's Encrypt", serialNumber: "01", status: "expiring" };
  const expiring = eventRecord(scope, { type: "certificate.expiring", certificateId: "cert_x", data: { certificate, threshold: 7 }, createdAt: NOW - 10 });
  await store.events.insert(expiring, [deliveryRecord(expiring.id, channel.id, { nextAttemptAt: NOW - 10 })]);

  const deliverer = new Deliverer({
    store, clock, logger: silentLogger, transports, retryMs: [60_000, 60_000], mailFrom: "a@b.test", owner: "proc_one",
    timeoutMs: 10_000, pollMs: 1000, concurrency: 4, perOrganization: 4, random: () => 0.5,
  });
  // What PagerDuty is sent, each request answered `status` as it comes, while the due deliveries run.
  const sent: Array<{ event_action: string; dedup_key: string }> = [];
  const runAnswering = async (status: number) => {
    const run = deliverer.loop.runDue();
    for (let i = 0; i < 30; i++) {
      await tick();
      for (const h of held.splice(0)) {
        sent.push(JSON.parse(h.request.body));
        h.answer({ status, retryAfterMs: null });
      }
    }
    await run;
  };

  // 1. The trigger meets a PagerDuty hiccup (HTTP 500): retried in a minute.
  await runAnswering(500);
  expect(sent.map((b) => b.event_action)).toEqual(["trigger"]);

  // 2. The certificate is renewed meanwhile: the renewed event's resolves go out and are accepted.
  clock.advance(10_000);
  const renewed = eventRecord(scope, { type: "certificate.renewed", certificateId: "cert_x", data: { certificate: { ...certificate, status: "valid", daysUntilExpiry: 90 } }, createdAt: clock.now() });
  await store.events.insert(renewed, [deliveryRecord(renewed.id, channel.id, { nextAttemptAt: clock.now() })]);
  await runAnswering(202);

  // 3. The trigger's retry comes due.
  clock.advance(120_000);
  await runAnswering(202);

  // What PagerDuty last heard about cert_x:expiring decides whether an incident stays open.
  const forExpiring = sent.filter((b) => b.dedup_key === "cert_x:expiring").map((b) => b.event_action);
  expect(forExpiring).toEqual(["trigger", "resolve"]);
  // Nothing left pending: the trigger's delivery is done, the alert it was for ended.
  const stored = await store.events.get(scope, expiring.id);
  expect(stored?.deliveries.map((d) => d.status)).toEqual(["delivered"]);
});
