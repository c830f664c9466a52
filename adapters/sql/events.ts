/** Events and their deliveries (the outbox) in SQL. */
import { candidatesPerOrganization, DELIVERY_CANCELLED, fairShare, type DeliveryJob, type EventStore, type EventWithDeliveries } from "../../core/store/mod.ts";
import type { ChannelRecord, DeliveryRecord, EventRecord } from "../../core/base/mod.ts";
import { isMuted, routeEvent } from "../../core/channels/mod.ts";
import type { Executor, SqlValue } from "./executor.ts";
import { channelFrom, deliveryFrom, eventFrom, healthStatement, makeDueNow, placeholders, powerOfTwoRuns, settleHealthStatement } from "./rows.ts";

const EVENT_COLUMNS = "seq, id, organization_id, mode, type, certificate_id, data, created_at";
const DELIVERY_COLUMNS = "event_id, channel_id, status, attempts, next_attempt_at, last_error, updated_at";
const CANCELLED = DELIVERY_CANCELLED.channelOff;
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
    const list = byEvent.get(delivery.eventId);
    if (list) list.push(delivery);
    else byEvent.set(delivery.eventId, [delivery]);
  }
  return events.map((event) => ({ ...event, deliveries: byEvent.get(event.id) ?? [] }));
}

export function sqlEvents(db: Executor): EventStore {
  // A delivery's claim and outcome go ahead of queued bulk writes (a burst of adds, an import's
  // batches): an answered alert is written down at once, so a crash does not send it again.
  const urgent = db.urgent?.() ?? db;
  return {
    async insert(event, deliveries, options) {
      const leaseOwner = options?.leaseOwner ?? null;
      await db.transaction(async (tx) => {
        await tx.execute(
          "INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
          [event.id, event.organizationId, event.mode, event.type, event.certificateId, JSON.stringify(event.data), event.createdAt],
        );
        // Many rows a statement (runs of powers of two: few distinct statements to prepare): an event
        // for an organization with a thousand channels was a thousand statements in one transaction.
        for (const run of powerOfTwoRuns(deliveries)) {
          await tx.execute(
            `INSERT INTO deliveries (${DELIVERY_COLUMNS}, organization_id, lease_owner) VALUES ${run.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
            run.flatMap((d) => [d.eventId, d.channelId, d.status, d.attempts, d.nextAttemptAt, d.lastError, d.updatedAt, event.organizationId, leaseOwner]),
          );
        }
      });
    },

    async list(scope, query) {
      let after = `seq < ?`;
      let position: number = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
      if (query.beforeId !== undefined) {
        const named = await db.execute("SELECT seq FROM events WHERE id = ? AND organization_id = ? AND mode = ?", [query.beforeId, scope.organizationId, scope.mode]);
        if (named.rows[0]) position = Number(named.rows[0].seq);
        else if (query.beforeCreatedAt !== undefined) [after, position] = ["created_at <= ?", query.beforeCreatedAt];
        else return [];
      }
      const { rows } = await db.execute(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE organization_id = ? AND mode = ? AND ${after} ORDER BY seq DESC LIMIT ?`,
        [scope.organizationId, scope.mode, position, query.limit],
      );
      return withDeliveries(db, rows.map((row) => eventFrom(row)));
    },

    async hasLaterOfCertificate(scope, { afterId, certificateId, types, channelId }) {
      if (types.length === 0) return false;
      const routed = channelId === undefined ? "" : " AND EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.channel_id = ?)";
      const { rows } = await db.execute(
        `SELECT 1 FROM events WHERE certificate_id = ? AND organization_id = ? AND mode = ? AND type IN (${types.map(() => "?").join(", ")})
           AND seq > (SELECT seq FROM events WHERE id = ?)${routed} LIMIT 1`,
        [certificateId, scope.organizationId, scope.mode, ...types, afterId, ...(channelId === undefined ? [] : [channelId])],
      );
      return rows.length > 0;
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
      // One write transaction in the urgent lane: the cancellations, then read, then lease, as claimDue
      // does (claimers at once lease disjoint sets, and the deliveries come back as they were before the
      // lease), with their events and channels. Its statements run while it holds the connection
      // (local_executor.ts): a claim waits for the transaction under way, not for a burst of adds.
      const share = { limit, perOrganization, inFlight, after };
      const claimed = await urgent.transaction(async (tx) => {
        // From the disabled channels to their pending deliveries (CROSS JOIN keeps that order): cheap
        // however large the outbox.
        await tx.execute(
          `UPDATE deliveries SET status = 'failed', last_error = ?, updated_at = ?
           WHERE rowid IN (
             SELECT d.rowid FROM channels c CROSS JOIN deliveries d ON d.channel_id = c.id
             WHERE c.enabled = 0 AND d.status = 'pending' AND d.next_attempt_at <= ?
           )`,
          [CANCELLED, now, now],
        );
        // The organizations with pending deliveries, one index seek each, and of each its earliest due
        // few (never more than could be taken): the candidates of the fair share.
        const { rows: heads } = await tx.execute(
          `WITH RECURSIVE organizations (org) AS (
             SELECT MIN(organization_id) FROM deliveries WHERE status = 'pending'
             UNION ALL
             SELECT (SELECT MIN(organization_id) FROM deliveries WHERE status = 'pending' AND organization_id > org)
             FROM organizations WHERE org IS NOT NULL
           )
           SELECT org, (
             SELECT group_concat(rowid || ' ' || next_attempt_at) FROM (
               SELECT rowid, next_attempt_at FROM deliveries
               WHERE status = 'pending' AND organization_id = o.org AND next_attempt_at <= ?
               ORDER BY next_attempt_at, rowid LIMIT ?
             )
           ) AS due
           FROM organizations o WHERE org IS NOT NULL`,
          [now, candidatesPerOrganization(share)],
        );
        const candidates = heads.flatMap((head) =>
          head.due === null
            ? []
            : String(head.due)
                .split(",")
                .map((pair) => {
                  const [rowid, at] = pair.split(" ").map(Number);
                  return { organizationId: String(head.org), nextAttemptAt: at!, order: rowid! };
                }),
        );
        const chosen = fairShare(candidates, share).map((candidate) => candidate.order);
        if (chosen.length === 0) return null;
        const { rows } = await tx.execute(`SELECT rowid, ${DELIVERY_COLUMNS} FROM deliveries WHERE rowid IN (${placeholders(chosen.length)})`, chosen);
        await tx.execute(`UPDATE deliveries SET next_attempt_at = ?, lease_owner = ? WHERE rowid IN (${placeholders(chosen.length)})`, [
          leaseUntil,
          owner,
          ...chosen,
        ]);
        const byRowid = new Map(rows.map((row) => [Number(row.rowid), deliveryFrom(row)]));
        const deliveries = chosen.map((rowid) => byRowid.get(rowid)!);
        const eventIds = [...new Set(deliveries.map((d) => d.eventId))];
        const channelIds = [...new Set(deliveries.map((d) => d.channelId))];
        const events = await tx.execute(`SELECT ${EVENT_COLUMNS} FROM events WHERE id IN (${placeholders(eventIds.length)})`, eventIds);
        const channels = await tx.execute(`SELECT ${CHANNEL_COLUMNS} FROM channels WHERE id IN (${placeholders(channelIds.length)})`, channelIds);
        return { deliveries, events: events.rows, channels: channels.rows };
      });
      if (!claimed) return [];
      const eventById = new Map(claimed.events.map((row) => [String(row.id), eventFrom(row)]));
      const channelById = new Map(claimed.channels.map((row) => [String(row.id), channelFrom(row)]));
      const jobs: DeliveryJob[] = [];
      for (const delivery of claimed.deliveries) {
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

    pullForwardDeliveries({ now, latest, updatedAfter }) {
      const where = "status = 'pending' AND next_attempt_at > ? AND updated_at > ?";
      return makeDueNow(db, urgent, { table: "deliveries", column: "next_attempt_at", where, args: [latest, updatedAfter] }, now);
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

    async completeDelivery(owner, u, { health = true } = {}) {
      // The outcome and the channel's health in one transaction: a crash between two writes left a
      // channel failing after its delivery went through. The health moves only if the outcome was written.
      const [outcome] = await urgent.batch([
        {
          // A retry to a channel switched off (or deleted) during the attempt is cancelled instead.
          sql: `UPDATE deliveries SET
                  status = CASE WHEN off THEN 'failed' ELSE ? END, attempts = ?, next_attempt_at = ?,
                  last_error = CASE WHEN off THEN ? ELSE ? END, updated_at = ?, lease_owner = NULL
                FROM (SELECT ? = 'pending' AND NOT EXISTS (SELECT 1 FROM channels WHERE id = ? AND enabled = 1) AS off)
                WHERE event_id = ? AND channel_id = ? AND lease_owner = ? AND status = 'pending'`,
          args: [u.status, u.attempts, u.nextAttemptAt, CANCELLED, u.lastError, u.updatedAt, u.status, u.channelId, u.eventId, u.channelId, owner],
        },
        ...(health ? [healthStatement(
          u.channelId,
          { at: u.updatedAt, status: u.status, error: u.lastError },
          {
            sql: "EXISTS (SELECT 1 FROM deliveries WHERE event_id = ? AND channel_id = ? AND lease_owner IS NULL AND attempts = ? AND updated_at = ?)",
            args: [u.eventId, u.channelId, u.attempts, u.updatedAt],
          },
        )] : []),
        // A retry cancelled above (its channel switched off) leaves the health `failed` once nothing tried is left pending.
        ...(health && u.status === "pending"
          ? [settleHealthStatement({ reason: CANCELLED, at: u.updatedAt, where: "event_id = ? AND channel_id = ?", args: [u.eventId, u.channelId] })]
          : []),
      ]);
      return outcome!.rowsAffected > 0;
    },
  };
}

export { CHANNEL_COLUMNS };
