/**
 * A delivery's next attempt is a wall-clock moment in the database. After the wall clock is set back a
 * day (NTP correcting a clock that ran ahead), a failed alert's retry comes within its retry wait of
 * the corrected clock, not a day later.
 */
import { expect, test } from "bun:test";
import { Deliverer } from "../core/notify/deliverer.ts";
import { silentLogger } from "../core/base/log.ts";
import { DAY, MINUTE } from "../core/base/time.ts";
import type { Transports } from "../core/notify/ports.ts";
import type { Store } from "../core/store/ports.ts";
import type { Scope } from "../core/base/records.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { channelRecord, deliveryRecord, eventRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { heldTransport } from "./support/held_transport.ts";

async function oneDelivery(store: Store): Promise<void> {
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channel = channelRecord(scope, { config: { url: `https://hooks.example.com/${org.id}`, headers: {} } });
  await store.channels.insert(channel, { limit: 10 });
  const event = eventRecord(scope);
  await store.events.insert(event, [deliveryRecord(event.id, channel.id, { nextAttemptAt: NOW - 100 })]);
}

function deliverer(store: Store, clock: FakeClock, transports: Transports, owner: string) {
  return new Deliverer({ store, clock, logger: silentLogger, transports, retryMs: [60_000, 60_000], mailFrom: "a@b.test", owner, timeoutMs: 10_000, pollMs: 1000, concurrency: 4, random: () => 0.5 });
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

test("after the clock steps back a day, a failed alert is retried within its retry wait (a minute), not a day later", async () => {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  await oneDelivery(store);
  const d = deliverer(store, clock, transports, "proc_one");
  const first = d.loop.runDue();
  await tick();
  expect(held).toHaveLength(1);
  held.shift()!.answer({ status: 500, retryAfterMs: null }); // retried in a minute
  await first;

  clock.set(NOW - DAY); // NTP: the clock had run a day ahead
  clock.advance(2 * MINUTE);
  const second = d.loop.runDue();
  await tick();
  const attempted = held.length;
  for (const h of held.splice(0)) h.answer({ status: 200, retryAfterMs: null });
  await second;
  expect(attempted).toBe(1);
});
