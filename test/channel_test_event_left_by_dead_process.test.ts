/**
 * A channel test left by a process that died before writing its outcome (its delivery leased to that
 * process, written down before it was sent): for an enabled channel the next process sends it once
 * more when the lease runs out, one attempt, recorded delivered; for a channel switched off since (or
 * a test asked of a disabled channel) it is cancelled as every delivery of a switched-off channel is
 * (docs/api.md). A live test to a disabled channel is sent and recorded, the channel's health with it.
 * Both stores are held to it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deliverer, deliveryLeaseMs } from "../core/notify/deliverer.ts";
import { silentLogger } from "../core/base/log.ts";
import type { Transports } from "../core/notify/ports.ts";
import { DELIVERY_CANCELLED, type Store } from "../core/store/ports.ts";
import type { Scope } from "../core/base/records.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { channelRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { heldTransport } from "./support/held_transport.ts";

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** Resolves once `done()` holds (checked every 5 ms), or after 10 s: the expectations then say what was not so. */
async function until(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !done() && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 5));
}

function deliverer(store: Store, clock: FakeClock, transports: Transports, owner: string) {
  return new Deliverer({ store, clock, logger: silentLogger, transports, retryMs: [60_000], mailFrom: "a@b.test", owner, timeoutMs: 10_000, pollMs: 1000, concurrency: 4 });
}

async function scenario(store: Store, enabled: boolean) {
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const channel = channelRecord(scope, { enabled, config: { url: "https://hooks.example.com/t", headers: {} } });
  await store.channels.insert(channel, { limit: 10 });
  const clock = new FakeClock(NOW);
  // The first process sends the test; its attempt never comes back (the process dies mid-attempt).
  const dead = heldTransport();
  void deliverer(store, clock, dead.transports, "proc_dead").sendTest(channel);
  await until(() => dead.held.length > 0);
  expect(dead.held).toHaveLength(1);
  // The next process, once the lease ran out.
  clock.advance(deliveryLeaseMs(10_000) + 1);
  const next = heldTransport();
  let finished = false;
  const running = deliverer(store, clock, next.transports, "proc_next")
    .loop.runDue()
    .finally(() => (finished = true));
  // Sent once more (held until answered), or the run over without sending.
  await until(() => next.held.length > 0 || finished);
  const sentAgain = next.held.length;
  for (const h of next.held.splice(0)) h.answer({ status: 200, retryAfterMs: null });
  await running;
  const [event] = await store.events.list(scope, { limit: 1 });
  return { sentAgain, event: event! };
}

for (const [name, open] of [
  ["memory", async () => createMemoryStore() as Store],
  [
    "libSQL",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "certkeeper-test-event-"));
      const store = await openLibsqlStore({ url: `file:${join(dir, "db.db")}` });
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      cleanups.unshift(() => store.close());
      return store as Store;
    },
  ],
] as const) {
  describe(name, () => {
    test("an enabled channel's test left pending by a dead process is sent once more", async () => {
      const { sentAgain, event } = await scenario(await open(), true);
      expect(event.type).toBe("test");
      expect(sentAgain).toBe(1);
      expect(event.deliveries).toEqual([expect.objectContaining({ status: "delivered", attempts: 1 })]);
    });

    test("a live test to a disabled channel is sent and recorded delivered, the channel's health with it", async () => {
      const store = await open();
      const org = organizationRecord();
      await store.organizations.create(org);
      const scope: Scope = { organizationId: org.id, mode: "live" };
      const channel = channelRecord(scope, { enabled: false, config: { url: "https://hooks.example.com/t", headers: {} } });
      await store.channels.insert(channel, { limit: 10 });
      const { transports, held } = heldTransport();
      const sending = deliverer(store, new FakeClock(NOW), transports, "proc_live").sendTest(channel);
      await until(() => held.length > 0);
      held.shift()!.answer({ status: 200, retryAfterMs: null });
      expect((await sending).result.delivered).toBe(true);
      const [event] = await store.events.list(scope, { limit: 1 });
      expect(event!.deliveries).toEqual([expect.objectContaining({ status: "delivered", attempts: 1 })]);
      expect((await store.channels.get(scope, channel.id))!.health).toMatchObject({ lastStatus: "delivered" });
    });

    test("a disabled channel's test left pending by a dead process is cancelled, not sent, as a switched-off channel's deliveries are", async () => {
      const { sentAgain, event } = await scenario(await open(), false);
      expect(event.type).toBe("test");
      expect(sentAgain).toBe(0);
      expect(event.deliveries).toEqual([expect.objectContaining({ status: "failed", lastError: DELIVERY_CANCELLED.channelOff })]);
    });
  });
}
