/**
 * What a receiver's answer does to a delivery (docs/alerting.md, Deliveries): a Retry-After counts
 * only on a 429 or 503, a 404 is a failure to retry (only a 410 disables the channel), and a redirect
 * is recorded as one that certkeeper does not follow. A webhook channel, a deliverer over held transports.
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

async function webhookWorld(retryMs: number[]) {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channel = channelRecord(scope, { enabled: true, config: { url: "https://hooks.example.com/t", headers: {} } });
  await store.channels.insert(channel, { limit: 10 });
  const deliverer = new Deliverer({
    store, clock, logger: silentLogger, transports, retryMs, mailFrom: "a@b.test", owner: "proc_one",
    timeoutMs: 10_000, pollMs: 1000, concurrency: 4, perOrganization: 4, random: () => 0.5,
  });
  let sent = 0;
  const certificate = { id: "cert_r", domain: "example.com", name: "example.com", port: 443, daysUntilExpiry: 6, expiresAt: new Date(NOW + 6 * 86_400_000).toISOString(), issuer: "R3", serialNumber: "01", status: "expiring" };
  const event = eventRecord(scope, { type: "certificate.expiring", certificateId: certificate.id, data: { certificate, threshold: 7 }, createdAt: clock.now() });
  await store.events.insert(event, [deliveryRecord(event.id, channel.id, { nextAttemptAt: clock.now() })]);
  return {
    store,
    clock,
    scope,
    channel,
    event,
    sent: () => sent,
    /** Runs the due deliveries, answering every request `status` (with `retryAfterMs`). */
    async run(status: number, retryAfterMs: number | null = null) {
      const run = deliverer.loop.runDue();
      for (let i = 0; i < 30; i++) {
        await tick();
        for (const h of held.splice(0)) {
          sent++;
          h.answer({ status, retryAfterMs });
        }
      }
      await run;
    },
  };
}

test("a 500 with Retry-After is retried on the schedule: the header counts only on a 429 or 503", async () => {
  // A Retry-After of 5 min, within the longest wait (10 min): honoured on a 429 or 503, not here.
  const w = await webhookWorld([60_000, 600_000]);
  await w.run(500, 5 * 60_000);
  expect(w.sent()).toBe(1);
  w.clock.advance(61_000);
  await w.run(204);
  expect(w.sent()).toBe(2);
  expect((await w.store.events.get(w.scope, w.event.id))?.deliveries.map((d) => d.status)).toEqual(["delivered"]);
});

test("a 404 is a failure retried on the schedule; the channel stays enabled (only a 410 disables it)", async () => {
  const w = await webhookWorld([60_000]);
  await w.run(404);
  const delivery = (await w.store.events.get(w.scope, w.event.id))!.deliveries[0]!;
  expect(delivery).toMatchObject({ status: "pending", attempts: 1, lastError: "The endpoint answered HTTP 404" });
  expect((await w.store.channels.get(w.scope, w.channel.id))?.enabled).toBe(true);
  w.clock.advance(61_000);
  await w.run(404);
  expect((await w.store.events.get(w.scope, w.event.id))!.deliveries[0]).toMatchObject({ status: "failed", attempts: 2 });
  expect((await w.store.channels.get(w.scope, w.channel.id))?.enabled).toBe(true);
});

test("a redirect is recorded as such: certkeeper does not follow it", async () => {
  const w = await webhookWorld([60_000]);
  await w.run(302);
  expect((await w.store.events.get(w.scope, w.event.id))!.deliveries[0]).toMatchObject({
    status: "pending",
    lastError: "The endpoint answered HTTP 302 (a redirect: certkeeper does not follow redirects)",
  });
});
