/**
 * The deliverer's rules that timing alone decides, driven by a fake clock and a transport that answers
 * when the test says so: one organization never holds more than its share of attempts, writing an
 * outcome down holds no slot, and a delivery whose attempt is still waiting is never attempted a
 * second time by the same process, even once its lease ran out. The network versions of the first
 * and the last are in delivery_fairness.test.ts and delivery_pause.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { Deliverer, deliveryLeaseMs } from "../core/notify/deliverer.ts";
import { deadline } from "../core/net/deadline.ts";
import { silentLogger } from "../core/base/log.ts";
import type { Transports } from "../core/notify/ports.ts";
import type { Store } from "../core/store/ports.ts";
import type { Scope } from "../core/base/records.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { channelRecord, deliveryRecord, eventRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { heldTransport } from "./support/held_transport.ts";

async function organizationWithDeliveries(store: Store, count: number): Promise<{ scope: Scope; url: string }> {
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const url = `https://hooks.example.com/${org.id}`;
  const channel = channelRecord(scope, { config: { url, headers: {} } });
  await store.channels.insert(channel, { limit: 10 });
  for (let i = 0; i < count; i++) {
    const event = eventRecord(scope);
    await store.events.insert(event, [deliveryRecord(event.id, channel.id, { nextAttemptAt: NOW - 100 + i })]);
  }
  return { scope, url };
}

function deliverer(store: Store, clock: FakeClock, transports: Transports, options: { concurrency: number; perOrganization: number }) {
  return new Deliverer({ store, clock, logger: silentLogger, transports, retryMs: [60_000], mailFrom: "a@b.test", owner: "proc_one", timeoutMs: 10_000, pollMs: 1000, ...options });
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

test("one organization holds at most its share of attempts; another's due delivery is attempted at once", async () => {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const busy = await organizationWithDeliveries(store, 10);
  const quiet = await organizationWithDeliveries(store, 1);
  const d = deliverer(store, clock, transports, { concurrency: 4, perOrganization: 3 });
  const running = d.loop.runDue();
  await tick();
  // 3 of the busy one's (its cap), and the quiet one's, though 7 of the busy one's are older.
  expect(held.map((h) => h.request.url).sort()).toEqual([busy.url, busy.url, busy.url, quiet.url].sort());
  for (const h of held.splice(0)) h.answer({ status: 200, retryAfterMs: null });
  while (held.length > 0 || (await store.events.countPending()) > 0) {
    await tick();
    expect(held.length).toBeLessThanOrEqual(3);
    for (const h of held.splice(0)) h.answer({ status: 200, retryAfterMs: null });
  }
  expect(await running).toBe(11);
});

test("a delivery claimed again while this process still waits for its attempt (a pause outlasted the lease) is not attempted again; the late answer counts", async () => {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const { scope } = await organizationWithDeliveries(store, 1);
  const d = deliverer(store, clock, transports, { concurrency: 4, perOrganization: 4 });
  const first = d.loop.runDue();
  await tick();
  expect(held).toHaveLength(1);

  // The lease runs out while the attempt waits; the loop looks again and the delivery is due.
  clock.advance(deliveryLeaseMs(10_000) + 1);
  const second = d.loop.runDue();
  await tick();
  expect(held).toHaveLength(1);
  expect(await store.events.nextDeliveryAt()).toBeGreaterThan(clock.now()); // claimed again, by us: leased anew

  held[0]!.answer({ status: 200, retryAfterMs: null });
  await Promise.all([first, second]);
  const [event] = await store.events.list(scope, { limit: 1 });
  expect(event!.deliveries).toEqual([expect.objectContaining({ status: "delivered", attempts: 1, lastError: null })]);
  expect(held).toHaveLength(1);
});

test("writing an outcome down does not hold the attempt's slot; the delivery is not attempted again meanwhile", async () => {
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const { transports, held } = heldTransport();
  const { scope } = await organizationWithDeliveries(store, 2);
  const writes: Array<() => void> = [];
  const completeDelivery = store.events.completeDelivery.bind(store.events);
  store.events.completeDelivery = async (owner, outcome) => {
    await new Promise<void>((resolve) => writes.push(resolve));
    return completeDelivery(owner, outcome);
  };
  // The loop as a server runs it (runDue, for simulations, takes each round's last steps before the next claim).
  const d = deliverer(store, clock, transports, { concurrency: 4, perOrganization: 1 });
  d.loop.start();
  await tick();
  expect(held).toHaveLength(1);
  const first = held.shift()!;
  first.answer({ status: 200, retryAfterMs: null });
  await tick();
  // The first outcome is still being written; the second delivery is under way already.
  expect(writes).toHaveLength(1);
  expect(held).toHaveLength(1);
  expect(held[0]!.request).not.toBe(first.request);
  held.shift()!.answer({ status: 200, retryAfterMs: null });
  await tick();
  for (const write of writes.splice(0)) write();
  await tick();
  for (const write of writes.splice(0)) write();
  await d.loop.stop();
  expect(held).toHaveLength(0);
  const events = await store.events.list(scope, { limit: 10 });
  expect(events.flatMap((event) => event.deliveries)).toEqual([
    expect.objectContaining({ status: "delivered", attempts: 1 }),
    expect.objectContaining({ status: "delivered", attempts: 1 }),
  ]);
});

test("the lease of a delivery outlasts its attempt's timeout with a margin", () => {
  for (const timeoutMs of [500, 10_000, 60_000, 300_000]) expect(deliveryLeaseMs(timeoutMs)).toBeGreaterThanOrEqual(2 * timeoutMs);
});

describe("deadline()", () => {
  test("aborts on time when the process runs normally", async () => {
    const limit = deadline(100);
    await Bun.sleep(60);
    expect(limit.signal.aborted).toBe(false);
    await Bun.sleep(120);
    expect(limit.signal.aborted).toBe(true);
  });

  test("fired late (the process was stopped past it), it first gives what arrived meanwhile a grace", async () => {
    const limit = deadline(100, { lateMs: 500, graceMs: 400 });
    Bun.sleepSync(900); // the whole process stands still, as under SIGSTOP
    await Bun.sleep(50);
    expect(limit.signal.aborted).toBe(false);
    await Bun.sleep(500);
    expect(limit.signal.aborted).toBe(true);
  });

  test("clear() stops it", async () => {
    const limit = deadline(50);
    limit.clear();
    await Bun.sleep(100);
    expect(limit.signal.aborted).toBe(false);
  });
});
