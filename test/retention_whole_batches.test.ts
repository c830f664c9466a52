/**
 * Event retention (CONTRACT §16; core/notify/retention.ts): one run deletes every event older than
 * CERTKEEPER_EVENT_RETENTION, however many there are (it deletes in batches), and nothing younger;
 * and the imports finished that long ago, however many.
 */
import { expect, test } from "bun:test";
import { EventRetention } from "../core/notify/retention.ts";
import { silentLogger } from "../core/base/log.ts";
import type { ImportRecord, Scope } from "../core/base/records.ts";
import { newId } from "../core/base/ids.ts";
import { DAY } from "../core/base/time.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { eventRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";

test("one run deletes every event past retention, a whole batch's worth and more, and keeps the younger ones", async () => {
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  // Exactly two batches of 1,000 events past a 90-day retention, the oldest first.
  const old = Array.from({ length: 2000 }, (_, i) => eventRecord(scope, { createdAt: NOW - 120 * DAY + i }));
  for (const event of old) await store.events.insert(event, []);
  const young = eventRecord(scope, { createdAt: NOW - 89 * DAY });
  await store.events.insert(young, []);
  const retention = new EventRetention({ store, clock: new FakeClock(NOW), logger: silentLogger, retentionMs: 90 * DAY });
  expect(await retention.runOnce()).toBe(2000);
  expect(await store.events.get(scope, old[0]!.id)).toBeNull();
  expect(await store.events.get(scope, old[1999]!.id)).toBeNull();
  expect(await store.events.get(scope, young.id)).not.toBeNull();
});

test("one run deletes every import finished before retention, more than a batch of them, and keeps the younger ones", async () => {
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const finished = (finishedAt: number): ImportRecord => ({
    ...scope, id: newId("imp"), certificateLimit: 100, status: "finished", total: 1, processed: 1, created: 1, failed: 0, createdAt: finishedAt - 1000, finishedAt,
  });
  // Exactly two batches of 100 imports finished before a 90-day retention.
  const old = Array.from({ length: 200 }, (_, i) => finished(NOW - 120 * DAY + i));
  for (const record of old) expect(await store.imports.create(record, ["{}"], 1_000)).toBe(true);
  const young = finished(NOW - 89 * DAY);
  await store.imports.create(young, ["{}"], 1_000);
  const retention = new EventRetention({ store, clock: new FakeClock(NOW), logger: silentLogger, retentionMs: 90 * DAY });
  await retention.runOnce();
  expect(await store.imports.get(scope, old[0]!.id)).toBeNull();
  expect(await store.imports.get(scope, old[199]!.id)).toBeNull();
  expect(await store.imports.get(scope, young.id)).not.toBeNull();
});
