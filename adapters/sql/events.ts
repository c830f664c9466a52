/** Events and their deliveries (the outbox) in SQL. */
import type { DeliveryJob, EventStore, EventWithDeliveries } from "../../core/store/mod.ts";
import type { ChannelRecord, DeliveryRecord, EventRecord } from "../../core/base/mod.ts";
import { isMuted, routeEvent } from "../../core/channels/mod.ts";
import type { Executor, SqlValue } from "./executor.ts";
import { channelFrom, deliveryFrom, eventFrom, placeholders } from "./rows.ts";

const EVENT_COLUMNS = "seq, id, organization_id, mode, type, certificate_id, data, created_at";
const DELIVERY_COLUMNS = "event_id, channel_id, status, attempts, next_attempt_at, last_error, updated_at";
const CHANNEL_COLUMNS = "id, organization_id, mode, type, name, enabled, config, signing_secret, created_at, updated_at, filter";

/**
 * Inserts events, each with a pending delivery to every channel routeEvent gives it among the channels
 * of its scope as they are right now; call inside the transaction that writes what caused them.
 */
export async function insertEvents(tx: Executor, events: EventRecord[]): Promise<void> {
  const channelsByScope = new Map<string, Array<Pick<ChannelRecord, "id" | "organizationId" | "mode" | "enabled" | "filter">>>();
  for (const event of events) {
    await tx.execute(
      "INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [event.id, event.organizationId, event.mode, event.type, event.certificateId, JSON.stringify(event.data), event.createdAt],
    );
    if (isMuted(event)) continue;
    const scopeKey = `${event.organizationId} ${event.mode}`;
    let channels = channelsByScope.get(scopeKey);
    if (!channels) {
      const { rows } = await tx.execute("SELECT id, filter FROM channels WHERE organization_id = ? AND mode = ? AND enabled = 1", [
        event.organizationId,
        event.mode,
      ]);
      channels = rows.map((row) => ({
        id: String(row.id),
        organizationId: event.organizationId,
        mode: event.mode,
        enabled: true,
        filter: row.filter === null || row.filter === undefined ? null : JSON.parse(String(row.filter)),
      }));
      channelsByScope.set(scopeKey, channels);
    }
    const routed = routeEvent(event, channels);
    if (routed.length === 0) continue;
    await tx.execute(
      `INSERT INTO deliveries (event_id, channel_id, status, attempts, next_attempt_at, last_error, updated_at)
       VALUES ${routed.map(() => "(?, ?, 'pending', 0, ?, NULL, ?)").join(", ")}`,
      routed.flatMap((channel) => [event.id, channel.id, event.createdAt, event.createdAt]),
    );
  }
}

async function withDeliveries(db: Executor, events: Array<EventRecord & { seq: number }>): Promise<EventWithDeliveries[]> {
  if (events.length === 0) return [];
  const { rows } = await db.execute(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE event_id IN (${placeholders(events.length)}) ORDER BY channel_id`,
    events.map((event) => event.id),
  );
  const byEvent = new Map<string, DeliveryRecord[]>();
  for (const row of rows) {
    const delivery = deliveryFrom(row);
    byEvent.set(delivery.eventId, [...(byEvent.get(delivery.eventId) ?? []), delivery]);
  }
  return events.map((event) => ({ ...event, deliveries: byEvent.get(event.id) ?? [] }));
}

export function sqlEvents(db: Executor): EventStore {
  return {
    async insert(event, deliveries) {
      await db.transaction(async (tx) => {
        await tx.execute(
          "INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
          [event.id, event.organizationId, event.mode, event.type, event.certificateId, JSON.stringify(event.data), event.createdAt],
        );
        for (const d of deliveries) {
          await tx.execute(
            `INSERT INTO deliveries (${DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
            [d.eventId, d.channelId, d.status, d.attempts, d.nextAttemptAt, d.lastError, d.updatedAt],
          );
        }
      });
    },

    async list(scope, query) {
      const { rows } = await db.execute(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE organization_id = ? AND mode = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
        [scope.organizationId, scope.mode, query.beforeSeq ?? Number.MAX_SAFE_INTEGER, query.limit],
      );
      return withDeliveries(db, rows.map((row) => eventFrom(row)));
    },

    async get(scope, id) {
      const { rows } = await db.execute(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = ? AND organization_id = ? AND mode = ?`, [
        id,
        scope.organizationId,
        scope.mode,
      ]);
      return (await withDeliveries(db, rows.map((row) => eventFrom(row))))[0] ?? null;
    },

    async claimDueDeliveries({ owner, now, leaseUntil, limit, perOrganization, inFlight }) {
      await db.execute(
        `UPDATE deliveries SET status = 'failed', last_error = 'Cancelled: the channel was disabled or deleted', updated_at = ?
         WHERE status = 'pending' AND next_attempt_at <= ?
           AND channel_id NOT IN (SELECT id FROM channels WHERE enabled = 1)`,
        [now, now],
      );
      // Read, then lease, in one write transaction, as claimDue does: claimers at once lease disjoint
      // sets, and the deliveries come back as they were before the lease.
      const deliveries = await db.transaction(async (tx) => {
        // Each due delivery's rank within its organization, plus what the caller has in flight there.
        const { rows } = await tx.execute(
          `SELECT due.* FROM (
             SELECT d.rowid AS rowid, ${DELIVERY_COLUMNS.split(", ").map((c) => `d.${c} AS ${c}`).join(", ")}, e.organization_id AS org,
               ROW_NUMBER() OVER (PARTITION BY e.organization_id ORDER BY d.next_attempt_at, d.rowid) AS rank
             FROM deliveries d JOIN events e ON e.id = d.event_id
             WHERE d.status = 'pending' AND d.next_attempt_at <= ?
           ) AS due LEFT JOIN json_each(?) AS busy ON busy.key = due.org
           WHERE due.rank + COALESCE(busy.value, 0) <= ?
           ORDER BY due.rank + COALESCE(busy.value, 0), due.next_attempt_at, due.rowid
           LIMIT ?`,
          [now, JSON.stringify(inFlight ?? {}), perOrganization ?? Number.MAX_SAFE_INTEGER, limit],
        );
        if (rows.length > 0) {
          await tx.execute(`UPDATE deliveries SET next_attempt_at = ?, lease_owner = ? WHERE rowid IN (${placeholders(rows.length)})`, [
            leaseUntil,
            owner,
            ...rows.map((row) => row.rowid as SqlValue),
          ]);
        }
        return rows.map((row) => deliveryFrom(row));
      });
      if (deliveries.length === 0) return [];
      const eventIds = [...new Set(deliveries.map((d) => d.eventId))];
      const channelIds = [...new Set(deliveries.map((d) => d.channelId))];
      const [events, channels] = await Promise.all([
        db.execute(`SELECT ${EVENT_COLUMNS} FROM events WHERE id IN (${placeholders(eventIds.length)})`, eventIds),
        db.execute(`SELECT ${CHANNEL_COLUMNS} FROM channels WHERE id IN (${placeholders(channelIds.length)})`, channelIds),
      ]);
      const eventById = new Map(events.rows.map((row) => [String(row.id), eventFrom(row)]));
      const channelById = new Map(channels.rows.map((row) => [String(row.id), channelFrom(row)]));
      const jobs: DeliveryJob[] = [];
      for (const delivery of deliveries) {
        const event = eventById.get(delivery.eventId);
        const channel = channelById.get(delivery.channelId);
        // A channel deleted between the two statements: its delivery was cancelled by the delete.
        if (event && channel) jobs.push({ delivery, event, channel });
      }
      return jobs;
    },

    async nextDeliveryAt() {
      const { rows } = await db.execute("SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE status = 'pending'");
      return rows[0]?.at === null || rows[0]?.at === undefined ? null : Number(rows[0].at);
    },

    async countPending() {
      const { rows } = await db.execute("SELECT COUNT(*) AS n FROM deliveries WHERE status = 'pending'");
      return Number(rows[0]?.n ?? 0);
    },

    async prune({ before, limit }) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.execute(
          `SELECT id FROM events WHERE created_at < ?
             AND NOT EXISTS (SELECT 1 FROM deliveries WHERE deliveries.event_id = events.id AND deliveries.status = 'pending')
           ORDER BY created_at LIMIT ?`,
          [before, limit],
        );
        if (rows.length === 0) return 0;
        const ids = rows.map((row) => String(row.id));
        await tx.execute(`DELETE FROM deliveries WHERE event_id IN (${placeholders(ids.length)})`, ids);
        await tx.execute(`DELETE FROM events WHERE id IN (${placeholders(ids.length)})`, ids);
        return ids.length;
      });
    },

    async completeDelivery(owner, u) {
      const { rowsAffected } = await db.execute(
        `UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, updated_at = ?, lease_owner = NULL
         WHERE event_id = ? AND channel_id = ? AND lease_owner = ? AND status = 'pending'`,
        [u.status, u.attempts, u.nextAttemptAt, u.lastError, u.updatedAt, u.eventId, u.channelId, owner],
      );
      return rowsAffected > 0;
    },
  };
}

export { CHANNEL_COLUMNS };
