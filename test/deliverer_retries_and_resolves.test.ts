/**
 * PagerDuty resolves retried after a problem was opened again (CONTRACT §16; core/notify/deliverer.ts):
 * a certificate.renewed whose resolves are retried after a later event of the certificate opened one
 * of its problems again leaves that problem open, and still resolves every other one (an incident
 * for the old certificate's expiry must not stay open because the new one was revoked since).
 */
import { expect, test } from "bun:test";
import { Deliverer } from "../core/notify/deliverer.ts";
import { silentLogger } from "../core/base/log.ts";
import type { ChannelRecord, EventType, Scope } from "../core/base/records.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { channelRecord, deliveryRecord, eventRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { heldTransport } from "./support/held_transport.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/** A certificate as an event carries it, expiring in `days`. */
function certificateShown(id: string, domain: string, days: number) {
  return { id, domain, name: domain, port: 443, daysUntilExpiry: days, expiresAt: new Date(NOW + days * 86_400_000).toISOString(), issuer: "Let's Encrypt", serialNumber: "01", status: "expiring" };
}

/**
 * An organization with a PagerDuty channel (`filter` on it), a deliverer retrying on `retryMs` over
 * held transports, and the requests it sent, each with the status it was answered.
 */
async function pagerDutyWorld(retryMs: number[], filter: ChannelRecord["filter"] = null) {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const pagerduty = channelRecord(scope, { type: "pagerduty", name: "On call", config: { routingKey: "R0123456789abcdef0123456789abcde" }, signingSecret: null, filter });
  await store.channels.insert(pagerduty, { limit: 10 });
  const deliverer = new Deliverer({
    store, clock, logger: silentLogger, transports, retryMs, mailFrom: "a@b.test", owner: "proc_one",
    timeoutMs: 10_000, pollMs: 1000, concurrency: 4, perOrganization: 4, random: () => 0.5,
  });
  const sent: Array<{ url: string; status: number; body: { event_action: string; dedup_key: string } }> = [];
  return {
    store,
    clock,
    scope,
    pagerduty,
    sent,
    /** Records an event of the certificate shown, due now, for `channels` (default: the PagerDuty channel). */
    async raise(type: EventType, data: Record<string, unknown>, channels: string[] = [pagerduty.id]) {
      const certificate = data.certificate as { id: string };
      const event = eventRecord(scope, { type, certificateId: certificate.id, data, createdAt: clock.now() });
      await store.events.insert(event, channels.map((id) => deliveryRecord(event.id, id, { nextAttemptAt: clock.now() })));
      return event;
    },
    /** Runs the due deliveries, answering every request `status` (with `retryAfterMs`). */
    async run(status: number, retryAfterMs: number | null = null) {
      const run = deliverer.loop.runDue();
      for (let i = 0; i < 30; i++) {
        await tick();
        for (const h of held.splice(0)) {
          sent.push({ url: h.request.url, status, body: JSON.parse(h.request.body) });
          h.answer({ status, retryAfterMs });
        }
      }
      await run;
    },
  };
}

test("a retried renewal's resolves leave open the problem a later event reopened, and close the others", async () => {
  const w = await pagerDutyWorld([60_000, 60_000]);
  const certificate = certificateShown("cert_x", "example.com", 6);
  // 1. The old certificate's expiry opens cert_x:expiring.
  await w.raise("certificate.expiring", { certificate, threshold: 7 });
  await w.run(202);
  // 2. It is renewed; the resolves meet a PagerDuty hiccup and are retried in a minute.
  w.clock.advance(10_000);
  const renewed = await w.raise("certificate.renewed", { certificate: { ...certificate, status: "valid", daysUntilExpiry: 90, serialNumber: "02" } });
  await w.run(500);
  // 3. The new certificate is revoked meanwhile: cert_x:revoked is opened again.
  w.clock.advance(10_000);
  await w.raise("certificate.revoked", { certificate: { ...certificate, status: "revoked", daysUntilExpiry: 90, serialNumber: "02" } });
  await w.run(202);
  // 4. The renewal's resolves come due again.
  w.clock.advance(120_000);
  await w.run(202);

  // What PagerDuty accepted last on each key decides which incidents stay open (a request answered 5xx changed nothing there).
  const last = (key: string) => w.sent.filter((s) => s.status < 300 && s.body.dedup_key === key).map((s) => s.body.event_action).at(-1);
  // The revoked incident stays open; the old certificate's expiry incident is closed.
  expect(last("cert_x:revoked")).toBe("trigger");
  expect(last("cert_x:expiring")).toBe("resolve");
  const stored = await w.store.events.get(w.scope, renewed.id);
  expect(stored?.deliveries.map((d) => d.status)).toEqual(["delivered"]);
});

test("a 429 asking to wait longer than the longest retry wait is retried after that wait, not after the Retry-After", async () => {
  const w = await pagerDutyWorld([60_000, 120_000, 120_000]);
  const event = await w.raise("certificate.expiring", { certificate: certificateShown("cert_y", "example.org", 6), threshold: 7 });
  // Rate limited, asked to come back in ten days.
  await w.run(429, 10 * 86_400_000);
  expect(w.sent).toHaveLength(1);
  // The longest wait of the schedule is two minutes: the retry is due by then.
  w.clock.advance(120_001);
  await w.run(202);
  expect(w.sent).toHaveLength(2);
  const stored = await w.store.events.get(w.scope, event.id);
  expect(stored?.deliveries.map((d) => d.status)).toEqual(["delivered"]);
});

test("a 503 with Retry-After is retried no sooner than it asked (within the longest retry wait)", async () => {
  const w = await pagerDutyWorld([60_000, 120_000, 120_000]);
  const event = await w.raise("certificate.expiring", { certificate: certificateShown("cert_z", "example.net", 6), threshold: 7 });
  await w.run(503, 90_000);
  expect(w.sent).toHaveLength(1);
  // The first wait of the schedule (60 s) is over, the Retry-After (90 s) is not: nothing sent yet.
  w.clock.advance(61_000);
  await w.run(202);
  expect(w.sent).toHaveLength(1);
  w.clock.advance(30_000);
  await w.run(202);
  expect(w.sent).toHaveLength(2);
  expect((await w.store.events.get(w.scope, event.id))?.deliveries.map((d) => d.status)).toEqual(["delivered"]);
});

test("a problem reopened since only on another channel does not hold back this channel's resolve", async () => {
  // PagerDuty takes the overdue alert and the renewal; a webhook takes everything.
  const w = await pagerDutyWorld([60_000, 60_000], { events: ["certificate.renewal_overdue", "certificate.renewed"] });
  const webhook = channelRecord(w.scope, { name: "Everything" });
  await w.store.channels.insert(webhook, { limit: 10 });
  const certificate = certificateShown("cert_w", "example.com", 20);
  const both = [w.pagerduty.id, webhook.id];
  await w.raise("certificate.renewal_overdue", { certificate }, both);
  await w.run(202);
  w.clock.advance(10_000);
  await w.raise("certificate.renewed", { certificate }, both);
  await w.run(500);
  // A renewal that will fail (the `renewal` problem on PagerDuty): routed to the webhook only.
  w.clock.advance(10_000);
  await w.raise("certificate.renewal_blocked", { certificate }, [webhook.id]);
  await w.run(202);
  w.clock.advance(120_000);
  await w.run(202);
  const forRenewal = w.sent.filter((s) => s.url.includes("pagerduty") && s.body.dedup_key === "cert_w:renewal").map((s) => s.body.event_action);
  // PagerDuty heard the overdue trigger, and the renewal's resolve: no incident left open there.
  expect(forRenewal.at(0)).toBe("trigger");
  expect(forRenewal.at(-1)).toBe("resolve");
});
