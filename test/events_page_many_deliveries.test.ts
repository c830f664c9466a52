/**
 * A page of events carries every event's deliveries, one per channel the event went to: an
 * organization with many channels (the enterprise plan allows 1,000) lists 100 events with up to
 * 100,000 deliveries. Reading them is linear in the deliveries: grouping them by event once copied each
 * event's list at every delivery, so a page of 1,000 channels held the event loop for about half a
 * second (every other organization's requests waited behind it).
 *
 * The same 16,000 deliveries must cost a page about the same as 2 events of 8,000 as they do as 80
 * events of 200, never several times as much: the same rows read and parsed either way, so the machine's
 * pace moves both alike. Measured on the libSQL store, best of five reads each, in this one process.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import type { Scope } from "../core/base/records.ts";
import type { Store } from "../core/store/ports.ts";
import { deliveryRecord, eventRecord, organizationRecord } from "./support/store_conformance/mod.ts";
import { temporaryDirectory } from "./support/temp.ts";

const dir = temporaryDirectory("certkeeper-events-page-");
let store: Store;
afterAll(async () => {
  await store?.close();
});

const url = `file:${join(dir, "certkeeper.db")}`;

/** An organization (made through the store, then closed) for events written by {@link writeEvents}. */
async function organization(): Promise<Scope> {
  const org = organizationRecord();
  await store.organizations.create(org);
  return { organizationId: org.id, mode: "live" };
}

const chunks = <T>(items: T[], size: number): T[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/**
 * `events` events of `scope`, each gone to `channels` channels: the rows the store's events.insert
 * writes, in one transaction. Through events.insert (one statement a delivery) the 32,000 rows cost
 * this file about 4 s; what is measured is the page read, not the writes.
 */
async function writeEvents(scope: Scope, events: number, channels: number): Promise<void> {
  const client = createClient({ url });
  try {
    await client.batch(
      Array.from({ length: events }, () => eventRecord(scope)).flatMap((event) => [
        {
          sql: "INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
          args: [event.id, event.organizationId, event.mode, event.type, event.certificateId, JSON.stringify(event.data), event.createdAt],
        },
        // Many rows a statement (a statement each costs as much as the rows it writes).
        ...chunks(Array.from({ length: channels }, (_, c) => deliveryRecord(event.id, `chn_${String(c).padStart(24, "0")}`)), 500).map((rows) => ({
          sql: `INSERT INTO deliveries (event_id, channel_id, status, attempts, next_attempt_at, last_error, updated_at, organization_id) VALUES ${rows.map(() => "(?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
          args: rows.flatMap((d) => [d.eventId, d.channelId, d.status, d.attempts, d.nextAttemptAt, d.lastError, d.updatedAt, event.organizationId]),
        })),
      ]),
      "write",
    );
  } finally {
    client.close();
  }
}

/** The fastest of five reads of the newest page (up to 200 events), in ms, and the deliveries it held. */
async function readPage(scope: Scope): Promise<{ ms: number; deliveries: number }> {
  let best = Infinity;
  let deliveries = 0;
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    const page = await store.events.list(scope, { limit: 200 });
    best = Math.min(best, performance.now() - started);
    deliveries = page.reduce((n, event) => n + event.deliveries.length, 0);
  }
  return { ms: best, deliveries };
}

test("16,000 deliveries cost a page the same, as 2 events of 8,000 or as 80 events of 200", async () => {
  store = await openLibsqlStore({ url });
  const [few, many] = [await organization(), await organization()];
  await store.close();
  await writeEvents(few, 80, 200);
  await writeEvents(many, 2, 8_000);
  store = await openLibsqlStore({ url });
  await readPage(few); // warm
  const [small, large] = [await readPage(few), await readPage(many)];
  expect(small.deliveries).toBe(16_000);
  expect(large.deliveries).toBe(16_000);
  const perDelivery = (page: { ms: number; deliveries: number }) => (page.ms * 1000) / page.deliveries;
  console.log(`events page: ${small.deliveries} deliveries in ${small.ms.toFixed(1)} ms, ${large.deliveries} in ${large.ms.toFixed(1)} ms (µs a delivery: ${perDelivery(small).toFixed(1)} against ${perDelivery(large).toFixed(1)})`);
  // The same rows either way: about 1 in one pass; the grouping that copied each event's list, several times.
  expect(perDelivery(large) / perDelivery(small)).toBeLessThan(2.5);
}, 60_000);
