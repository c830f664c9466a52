/**
 * The deliverer's outcome rules (CONTRACT §6, §7):
 * - only a 2xx counts as delivered: a 300 (certkeeper follows no redirect) is a failure;
 * - a failed test delivery is not retried, also when the process that sent it died and another one
 *   makes its attempt once the lease ran out.
 */
import { describe, expect, test } from "bun:test";
import { Deliverer, deliveryLeaseMs } from "../core/notify/deliverer.ts";
import { silentLogger } from "../core/base/log.ts";
import type { Transports } from "../core/notify/ports.ts";
import type { Store } from "../core/store/ports.ts";
import type { Scope } from "../core/base/records.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { channelRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { heldTransport } from "./support/held_transport.ts";
import { until } from "./support/until.ts";

function deliverer(store: Store, clock: FakeClock, transports: Transports, owner: string) {
  return new Deliverer({ store, clock, logger: silentLogger, transports, retryMs: [60_000], mailFrom: "a@b.test", owner, timeoutMs: 10_000, pollMs: 1000, concurrency: 4 });
}

async function world() {
  const store = createMemoryStore() as Store;
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channel = channelRecord(scope, { enabled: true, config: { url: "https://hooks.example.com/t", headers: {} } });
  await store.channels.insert(channel, { limit: 10 });
  return { store, scope, channel };
}

describe("what counts as delivered", () => {
  test("a 300 answer is not delivered: the test reports failed with the status", async () => {
    const { store, scope, channel } = await world();
    const { transports, held } = heldTransport();
    const sending = deliverer(store, new FakeClock(NOW), transports, "proc_a").sendTest(channel);
    await until("the test request", async () => held.length > 0, 10_000);
    held.shift()!.answer({ status: 300, retryAfterMs: null });
    const { result } = await sending;
    expect(result).toMatchObject({ delivered: false, responseStatus: 300 });
    const [event] = await store.events.list(scope, { limit: 1 });
    expect(event!.deliveries).toEqual([expect.objectContaining({ status: "failed", attempts: 1 })]);
  });

  test("a 299 answer is delivered", async () => {
    const { store, channel } = await world();
    const { transports, held } = heldTransport();
    const sending = deliverer(store, new FakeClock(NOW), transports, "proc_a").sendTest(channel);
    await until("the test request", async () => held.length > 0, 10_000);
    held.shift()!.answer({ status: 299, retryAfterMs: null });
    expect((await sending).result).toMatchObject({ delivered: true, responseStatus: 299 });
  });
});

describe("a test left by a dead process", () => {
  test("its one attempt by the next process fails: failed, not retried", async () => {
    const { store, scope, channel } = await world();
    const clock = new FakeClock(NOW);
    const dead = heldTransport();
    void deliverer(store, clock, dead.transports, "proc_dead").sendTest(channel);
    await until("the dead process's request", async () => dead.held.length > 0, 10_000);
    clock.advance(deliveryLeaseMs(10_000) + 1);
    const next = heldTransport();
    const running = deliverer(store, clock, next.transports, "proc_next").loop.runDue();
    await until("the next process's attempt", async () => next.held.length > 0, 10_000);
    next.held.shift()!.answer({ status: 500, retryAfterMs: null });
    await running;
    const [event] = await store.events.list(scope, { limit: 1 });
    expect(event!.type).toBe("test");
    expect(event!.deliveries).toEqual([expect.objectContaining({ status: "failed", attempts: 1 })]);
    // Nothing comes due later either.
    clock.advance(10 * 60_000);
    const later = heldTransport();
    await deliverer(store, clock, later.transports, "proc_later").loop.runDue();
    expect(later.held).toHaveLength(0);
  });
});

describe("credentials never in a delivery's error", () => {
  test("a transport failure whose text carries the Telegram bot token is recorded with the token masked", async () => {
    const store = createMemoryStore() as Store;
    const org = organizationRecord();
    await store.organizations.create(org);
    const scope: Scope = { organizationId: org.id, mode: "live" };
    const token = "123456789:AAEbot-t0ken_secret-part-0123456789";
    const channel = channelRecord(scope, { type: "telegram", name: "tg", config: { botToken: token, chatId: -100123 } });
    await store.channels.insert(channel, { limit: 10 });
    const transports: Transports = {
      http: { post: async (request) => { throw new Error(`request to ${request.url} failed: socket hang up`); } },
      email: { send: async () => {} },
    };
    const d = new Deliverer({ store, clock: new FakeClock(NOW), logger: silentLogger, transports, retryMs: [60_000], mailFrom: "a@b.test", telegramUrl: "https://tg.example.test", owner: "proc_a", timeoutMs: 10_000, pollMs: 1000, concurrency: 4 });
    const { result } = await d.sendTest(channel);
    expect(result.delivered).toBe(false);
    expect(result.error).toContain("socket hang up");
    expect(result.error).toContain("********");
    expect(result.error).not.toContain(token);
    const [event] = await store.events.list(scope, { limit: 1 });
    expect(JSON.stringify(event!.deliveries)).not.toContain(token);
  });
});
