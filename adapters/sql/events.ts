/** Events and their deliveries (the outbox) in SQL. */
import { candidatesPerOrganization, type ClaimDeliveriesOptions, type DeliveryJob, type EventStore, type EventWithDeliveries } from "../../core/store/mod.ts";
import type { ChannelRecord, DeliveryRecord, EventRecord } from "../../core/base/mod.ts";
import { isMuted, routeEvent } from "../../core/channels/mod.ts";
import type { Executor, SqlValue } from "./executor.ts";
import { channelFrom, deliveryFrom, eventFrom, placeholders } from "./rows.ts";

const EVENT_COLUMNS = "seq, id, organization_id, mode, type, certificate_id, data, created_at";
const DELIVERY_COLUMNS = "event_id, channel_id, status, attempts, next_attempt_at, last_error, updated_at";
const CANCELLED = "Cancelled: the channel was disabled or deleted";
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
      `INSERT INTO deliveries (event_id, channel_id, status, attempts, next_attempt_at, last_error, updated_at, organization_id)
       VALUES ${routed.map(() => "(?, ?, 'pending', 0, ?, NULL, ?, ?)").join(", ")}`,
      routed.flatMap((channel) => [event.id, channel.id, event.createdAt, event.createdAt, event.organizationId]),
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

/**
 * The fair share (core/store/fair_share.ts) in SQL, as a `WITH` clause naming `chosen (rid, taken)`:
 * the organizations with pending deliveries, one index seek each, and of each its earliest due few
 * (never more than could be taken), ranked n plus what the caller has in flight of that organization,
 * lower ranks first, equal ranks round-robin after `after`, then earliest due. Deterministic, so each
 * statement of one transaction that repeats it chooses the same rows.
 */
function chosenDeliveries(share: Omit<ClaimDeliveriesOptions, "owner" | "leaseUntil">): { sql: string; args: SqlValue[] } {
  const turn = share.after === undefined ? "" : "CASE WHEN org > ? THEN 0 ELSE 1 END, org, ";
  const sql = `WITH RECURSIVE organizations (org) AS (
      SELECT MIN(organization_id) FROM deliveries WHERE status = 'pending'
      UNION ALL
      SELECT (SELECT MIN(organization_id) FROM deliveries WHERE status = 'pending' AND organization_id > org)
      FROM organizations WHERE org IS NOT NULL
    ),
    candidates AS (
      SELECT o.org AS org, d.rowid AS rid, d.next_attempt_at AS at,
        ROW_NUMBER() OVER (PARTITION BY o.org ORDER BY d.next_attempt_at, d.rowid)
          + COALESCE((SELECT value FROM json_each(?) WHERE key = o.org), 0) AS rank
      FROM organizations o JOIN deliveries d ON d.rowid IN (
        SELECT rowid FROM deliveries
        WHERE status = 'pending' AND organization_id = o.org AND next_attempt_at <= ?
        ORDER BY next_attempt_at, rowid LIMIT ?
      )
      WHERE o.org IS NOT NULL
    ),
    chosen (rid, taken) AS (
      SELECT rid, ROW_NUMBER() OVER (ORDER BY rank, ${turn}at, rid) FROM candidates WHERE rank <= ? ORDER BY 2 LIMIT ?
    )`;
  const args: SqlValue[] = [JSON.stringify(share.inFlight ?? {}), share.now, candidatesPerOrganization(share)];
  if (share.after !== undefined) args.push(share.after);
  args.push(share.perOrganization ?? Number.MAX_SAFE_INTEGER, share.limit);
  return { sql, args };
}

export function sqlEvents(db: Executor): EventStore {
  // A delivery's claim and outcome go ahead of queued bulk writes (a burst of adds, an import's
  // batches): an answered alert is written down at once, so a crash does not send it again.
  const urgent = db.urgent?.() ?? db;
  return {
    async insert(event, deliveries) {
      await db.transaction(async (tx) => {
        await tx.execute(
          "INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
          [event.id, event.organizationId, event.mode, event.type, event.certificateId, JSON.stringify(event.data), event.createdAt],
        );
        for (const d of deliveries) {
          await tx.execute(
            `INSERT INTO deliveries (${DELIVERY_COLUMNS}, organization_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            [d.eventId, d.channelId, d.status, d.attempts, d.nextAttemptAt, d.lastError, d.updatedAt, event.organizationId],
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

    async claimDueDeliveries({ owner, now, leaseUntil, limit, perOrganization, inFlight, after }) {
      // One request (one message to a local connection's thread, one round trip to a server), one write
      // transaction: the cancellations, then the fair share read, its events and channels, and the
      // lease, each statement seeing the same rows, so claimers at once lease disjoint sets. The
      // deliveries come back as they were before the lease. Sent as one, a claim waits for no round
      // trips of its own while the event loop is busy (a burst of adds): alerts keep going out.
      const chosen = chosenDeliveries({ now, limit, perOrganization, inFlight, after });
      const [, picked, events, channels] = await urgent.batch([
        // From the disabled channels to their pending deliveries (CROSS JOIN keeps that order): cheap
        // however large the outbox.
        {
          sql: `UPDATE deliveries SET status = 'failed', last_error = ?, updated_at = ?
                WHERE rowid IN (
                  SELECT d.rowid FROM channels c CROSS JOIN deliveries d ON d.channel_id = c.id
                  WHERE c.enabled = 0 AND d.status = 'pending' AND d.next_attempt_at <= ?
                )`,
          args: [CANCELLED, now, now],
        },
        {
          sql: `${chosen.sql} SELECT d.rowid, ${DELIVERY_COLUMNS.split(", ").map((column) => `d.${column}`).join(", ")}
                FROM chosen JOIN deliveries d ON d.rowid = chosen.rid ORDER BY chosen.taken`,
          args: chosen.args,
        },
        {
          sql: `${chosen.sql} SELECT ${EVENT_COLUMNS} FROM events WHERE id IN (SELECT d.event_id FROM chosen JOIN deliveries d ON d.rowid = chosen.rid)`,
          args: chosen.args,
        },
        {
          sql: `${chosen.sql} SELECT ${CHANNEL_COLUMNS} FROM channels WHERE id IN (SELECT d.channel_id FROM chosen JOIN deliveries d ON d.rowid = chosen.rid)`,
          args: chosen.args,
        },
        { sql: `${chosen.sql} UPDATE deliveries SET next_attempt_at = ?, lease_owner = ? WHERE rowid IN (SELECT rid FROM chosen)`, args: [...chosen.args, leaseUntil, owner] },
      ]);
      const deliveries = picked!.rows.map((row) => deliveryFrom(row));
      if (deliveries.length === 0) return [];
      const eventById = new Map(events!.rows.map((row) => [String(row.id), eventFrom(row)]));
      const channelById = new Map(channels!.rows.map((row) => [String(row.id), channelFrom(row)]));
      const jobs: DeliveryJob[] = [];
      for (const delivery of deliveries) {
        const event = eventById.get(delivery.eventId);
        const channel = channelById.get(delivery.channelId);
        if (event && channel?.enabled) {
          jobs.push({ delivery, event, channel });
        } else {
          // The channel went (or was switched off) since: settled as the cancellation above would.
          await urgent.execute(
            `UPDATE deliveries SET status = 'failed', last_error = ?, updated_at = ?, lease_owner = NULL
             WHERE event_id = ? AND channel_id = ? AND lease_owner = ? AND status = 'pending'`,
            [CANCELLED, now, delivery.eventId, delivery.channelId, owner],
          );
        }
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
      const { rowsAffected } = await urgent.execute(
        `UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, updated_at = ?, lease_owner = NULL
         WHERE event_id = ? AND channel_id = ? AND lease_owner = ? AND status = 'pending'`,
        [u.status, u.attempts, u.nextAttemptAt, u.lastError, u.updatedAt, u.eventId, u.channelId, owner],
      );
      return rowsAffected > 0;
    },
  };
}

export { CHANNEL_COLUMNS };
