/**
 * Event retention (CONTRACT §16; core/notify/retention.ts) as a process runs it: the boundary of
 * CERTKEEPER_EVENT_RETENTION, a run at start, a stop that waits for the run under way, concurrent
 * runs that delete once, and expired sessions deleted with the rest.
 */
import { expect, test } from "bun:test";
import { EventRetention } from "../core/notify/retention.ts";
import { silentLogger } from "../core/base/log.ts";
import type { Scope } from "../core/base/records.ts";
import { DAY } from "../core/base/time.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { eventRecord, NOW, organizationRecord, sessionRecord, userRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { until } from "./support/until.ts";

const RETENTION = 90 * DAY;

async function world() {
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const retention = new EventRetention({ store, clock: new FakeClock(NOW), logger: silentLogger, retentionMs: RETENTION });
  return { store, org, scope, retention };
}

test("an event a moment older than the retention goes; one a moment younger stays", async () => {
  const { store, scope, retention } = await world();
  const older = eventRecord(scope, { createdAt: NOW - RETENTION - 1 });
  const younger = eventRecord(scope, { createdAt: NOW - RETENTION + 500 });
  await store.events.insert(older, []);
  await store.events.insert(younger, []);
  expect(await retention.runOnce()).toBe(1);
  expect(await store.events.get(scope, older.id)).toBeNull();
  expect(await store.events.get(scope, younger.id)).not.toBeNull();
});

test("start() deletes what is past retention at once, without waiting for the first hour", async () => {
  const { store, scope, retention } = await world();
  const old = eventRecord(scope, { createdAt: NOW - 120 * DAY });
  await store.events.insert(old, []);
  retention.start();
  try {
    await until("the old event deleted", async () => (await store.events.get(scope, old.id)) === null, 5_000);
  } finally {
    await retention.stop();
  }
});

test("stop() resolves only once the run under way has finished", async () => {
  const { store, scope, retention } = await world();
  const old = Array.from({ length: 2500 }, (_, i) => eventRecord(scope, { createdAt: NOW - 120 * DAY + i }));
  for (const event of old) await store.events.insert(event, []);
  retention.start();
  await retention.stop();
  expect(await store.events.get(scope, old[0]!.id)).toBeNull();
  expect(await store.events.get(scope, old[2499]!.id)).toBeNull();
});

test("two runs asked for at once are one run: each says how many events went", async () => {
  const { store, scope, retention } = await world();
  for (let i = 0; i < 1500; i++) await store.events.insert(eventRecord(scope, { createdAt: NOW - 120 * DAY + i }), []);
  expect(await Promise.all([retention.runOnce(), retention.runOnce()])).toEqual([1500, 1500]);
});

test("expired sessions are deleted by the run; current ones are kept", async () => {
  const { store, org, retention } = await world();
  const user = userRecord(org.id);
  await store.users.create(user);
  const expired = sessionRecord(user, { createdAt: NOW - 2 * DAY, lastSeenAt: NOW - 2 * DAY, expiresAt: NOW - DAY });
  const current = sessionRecord(user);
  await store.sessions.create(expired);
  await store.sessions.create(current);
  await retention.runOnce();
  expect(await store.sessions.get(expired.id)).toBeNull();
  expect(await store.sessions.get(current.id)).not.toBeNull();
});
