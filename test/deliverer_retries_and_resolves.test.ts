/**
 * PagerDuty resolves retried after a problem was opened again (CONTRACT §16; core/notify/deliverer.ts):
 * a certificate.renewed whose resolves are retried after a later event of the certificate opened one
 * of its problems again leaves that problem open, and still resolves every other one (an incident
 * for the old certificate's expiry must not stay open because the new one was revoked since).
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

test("a retried renewal's resolves leave open the problem a later event reopened, and close the others", async () => {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channel = channelRecord(scope, { type: "pagerduty", name: "On call", config: { routingKey: "R0123456789abcdef0123456789abcde" }, signingSecret: null });
  await store.channels.insert(channel, { limit: 10 });
  const certificate = { id: "cert_x", domain: "example.com", name: "example.com", port: 443, daysUntilExpiry: 6, expiresAt: new Date(NOW + 6 * 86_400_000).toISOString(), issuer: "Let's Encrypt", serialNumber: "01", status: "expiring" };
  const raise = async (type: "certificate.expiring" | "certificate.renewed" | "certificate.revoked", data: Record<string, unknown>) => {
    const event = eventRecord(scope, { type, certificateId: "cert_x", data: { certificate: { ...certificate, ...data } }, createdAt: clock.now() });
    await store.events.insert(event, [deliveryRecord(event.id, channel.id, { nextAttemptAt: clock.now() })]);
    return event;
  };

  const deliverer = new Deliverer({
    store, clock, logger: silentLogger, transports, retryMs: [60_000, 60_000], mailFrom: "a@b.test", owner: "proc_one",
    timeoutMs: 10_000, pollMs: 1000, concurrency: 4, perOrganization: 4, random: () => 0.5,
  });
  const sent: Array<{ event_action: string; dedup_key: string }> = [];
  const runAnswering = async (status: number) => {
    const run = deliverer.loop.runDue();
    for (let i = 0; i < 30; i++) {
      await tick();
      for (const h of held.splice(0)) {
        // What PagerDuty took in: a request answered 5xx changed nothing there.
        if (status < 300) sent.push(JSON.parse(h.request.body));
        h.answer({ status, retryAfterMs: null });
      }
    }
    await run;
  };

  // 1. The old certificate's expiry opens cert_x:expiring.
  await raise("certificate.expiring", { threshold: 7 });
  await runAnswering(202);
  // 2. It is renewed; the resolves meet a PagerDuty hiccup and are retried in a minute.
  clock.advance(10_000);
  const renewed = await raise("certificate.renewed", { status: "valid", daysUntilExpiry: 90, serialNumber: "02" });
  await runAnswering(500);
  // 3. The new certificate is revoked meanwhile: cert_x:revoked is opened again.
  clock.advance(10_000);
  await raise("certificate.revoked", { status: "revoked", daysUntilExpiry: 90, serialNumber: "02" });
  await runAnswering(202);
  // 4. The renewal's resolves come due again.
  clock.advance(120_000);
  await runAnswering(202);

  // What PagerDuty accepted last on each key decides which incidents stay open.
  const last = (key: string) => sent.filter((b) => b.dedup_key === key).map((b) => b.event_action).at(-1);
  // The revoked incident stays open; the old certificate's expiry incident is closed.
  expect(last("cert_x:revoked")).toBe("trigger");
  expect(last("cert_x:expiring")).toBe("resolve");
  const stored = await store.events.get(scope, renewed.id);
  expect(stored?.deliveries.map((d) => d.status)).toEqual(["delivered"]);
});

test("a 429 asking to wait longer than the longest retry wait is retried after that wait, not after the Retry-After", async () => {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channel = channelRecord(scope, { type: "pagerduty", name: "On call", config: { routingKey: "R0123456789abcdef0123456789abcde" }, signingSecret: null });
  await store.channels.insert(channel, { limit: 10 });
  const certificate = { id: "cert_y", domain: "example.org", name: "example.org", port: 443, daysUntilExpiry: 6, expiresAt: new Date(NOW + 6 * 86_400_000).toISOString(), issuer: "Let's Encrypt", serialNumber: "01", status: "expiring" };
  const event = eventRecord(scope, { type: "certificate.expiring", certificateId: "cert_y", data: { certificate, threshold: 7 }, createdAt: NOW });
  await store.events.insert(event, [deliveryRecord(event.id, channel.id, { nextAttemptAt: NOW })]);
  const deliverer = new Deliverer({
    store, clock, logger: silentLogger, transports, retryMs: [60_000, 120_000, 120_000], mailFrom: "a@b.test", owner: "proc_one",
    timeoutMs: 10_000, pollMs: 1000, concurrency: 4, perOrganization: 4, random: () => 0.5,
  });
  let attempts = 0;
  const runAnswering = async (status: number, retryAfterMs: number | null) => {
    const run = deliverer.loop.runDue();
    for (let i = 0; i < 30; i++) {
      await tick();
      for (const h of held.splice(0)) {
        attempts++;
        h.answer({ status, retryAfterMs });
      }
    }
    await run;
  };
  // Rate limited, asked to come back in ten days.
  await runAnswering(429, 10 * 86_400_000);
  expect(attempts).toBe(1);
  // The longest wait of the schedule is two minutes: the retry is due by then.
  clock.advance(120_001);
  await runAnswering(202, null);
  expect(attempts).toBe(2);
  const stored = await store.events.get(scope, event.id);
  expect(stored?.deliveries.map((d) => d.status)).toEqual(["delivered"]);
});

/** One PagerDuty delivery of an expiring event, with its deliverer; `answer` replies to what is sent. */
async function oneDelivery(retryMs: number[]) {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channel = channelRecord(scope, { type: "pagerduty", name: "On call", config: { routingKey: "R0123456789abcdef0123456789abcde" }, signingSecret: null });
  await store.channels.insert(channel, { limit: 10 });
  const certificate = { id: "cert_z", domain: "example.net", name: "example.net", port: 443, daysUntilExpiry: 6, expiresAt: new Date(NOW + 6 * 86_400_000).toISOString(), issuer: "Let's Encrypt", serialNumber: "01", status: "expiring" };
  const event = eventRecord(scope, { type: "certificate.expiring", certificateId: "cert_z", data: { certificate, threshold: 7 }, createdAt: NOW });
  await store.events.insert(event, [deliveryRecord(event.id, channel.id, { nextAttemptAt: NOW })]);
  const deliverer = new Deliverer({
    store, clock, logger: silentLogger, transports, retryMs, mailFrom: "a@b.test", owner: "proc_one",
    timeoutMs: 10_000, pollMs: 1000, concurrency: 4, perOrganization: 4, random: () => 0.5,
  });
  const state = { attempts: 0 };
  const answer = async (status: number, retryAfterMs: number | null = null) => {
    const run = deliverer.loop.runDue();
    for (let i = 0; i < 30; i++) {
      await tick();
      for (const h of held.splice(0)) {
        state.attempts++;
        h.answer({ status, retryAfterMs });
      }
    }
    await run;
  };
  const deliveries = async () => (await store.events.get(scope, event.id))?.deliveries ?? [];
  return { clock, answer, state, deliveries };
}

test("a 503 with Retry-After is retried no sooner than it asked (within the longest retry wait)", async () => {
  const { clock, answer, state, deliveries } = await oneDelivery([60_000, 120_000, 120_000]);
  await answer(503, 90_000);
  expect(state.attempts).toBe(1);
  // The first wait of the schedule (60 s) is over, the Retry-After (90 s) is not: nothing sent yet.
  clock.advance(61_000);
  await answer(202);
  expect(state.attempts).toBe(1);
  clock.advance(30_000);
  await answer(202);
  expect(state.attempts).toBe(2);
  expect((await deliveries()).map((d) => d.status)).toEqual(["delivered"]);
});

test("a problem reopened since only on another channel does not hold back this channel's resolve", async () => {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  // PagerDuty takes the overdue alert and the renewal; a webhook takes everything.
  const pagerduty = channelRecord(scope, {
    type: "pagerduty", name: "On call", config: { routingKey: "R0123456789abcdef0123456789abcde" }, signingSecret: null,
    filter: { events: ["certificate.renewal_overdue", "certificate.renewed"] },
  });
  const webhook = channelRecord(scope, { name: "Everything" });
  await store.channels.insert(pagerduty, { limit: 10 });
  await store.channels.insert(webhook, { limit: 10 });
  const certificate = { id: "cert_w", domain: "example.com", name: "example.com", port: 443, daysUntilExpiry: 20, expiresAt: new Date(NOW + 20 * 86_400_000).toISOString(), issuer: "Let's Encrypt", serialNumber: "01", status: "expiring" };
  const raise = async (type: "certificate.renewal_overdue" | "certificate.renewed" | "certificate.renewal_blocked", channels: string[]) => {
    const event = eventRecord(scope, { type, certificateId: "cert_w", data: { certificate }, createdAt: clock.now() });
    await store.events.insert(event, channels.map((id) => deliveryRecord(event.id, id, { nextAttemptAt: clock.now() })));
    return event;
  };
  const deliverer = new Deliverer({
    store, clock, logger: silentLogger, transports, retryMs: [60_000, 60_000], mailFrom: "a@b.test", owner: "proc_one",
    timeoutMs: 10_000, pollMs: 1000, concurrency: 4, perOrganization: 4, random: () => 0.5,
  });
  const toPagerDuty: Array<{ event_action: string; dedup_key: string }> = [];
  const runAnswering = async (status: number) => {
    const run = deliverer.loop.runDue();
    for (let i = 0; i < 30; i++) {
      await tick();
      for (const h of held.splice(0)) {
        if (h.request.url.includes("pagerduty")) toPagerDuty.push(JSON.parse(h.request.body));
        h.answer({ status, retryAfterMs: null });
      }
    }
    await run;
  };
  await raise("certificate.renewal_overdue", [pagerduty.id, webhook.id]);
  await runAnswering(202);
  clock.advance(10_000);
  await raise("certificate.renewed", [pagerduty.id, webhook.id]);
  await runAnswering(500);
  // A renewal that will fail (the `renewal` problem on PagerDuty): routed to the webhook only.
  clock.advance(10_000);
  await raise("certificate.renewal_blocked", [webhook.id]);
  await runAnswering(202);
  clock.advance(120_000);
  await runAnswering(202);
  const forRenewal = toPagerDuty.filter((b) => b.dedup_key === "cert_w:renewal").map((b) => b.event_action);
  // PagerDuty heard the overdue trigger, and the renewal's resolve: no incident left open there.
  expect(forRenewal.at(0)).toBe("trigger");
  expect(forRenewal.at(-1)).toBe("resolve");
});
