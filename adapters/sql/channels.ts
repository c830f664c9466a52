/** Notification channels in SQL. */
import { DELIVERY_CANCELLED, type ChannelStore } from "../../core/store/mod.ts";
import type { ChannelRecord, Scope } from "../../core/base/mod.ts";
import type { Executor } from "./executor.ts";
import { CHANNEL_HEALTH_COLUMNS, channelFrom, cancelDeliveries, healthStatement, placeholders } from "./rows.ts";
import { CHANNEL_COLUMNS } from "./events.ts";

const SELECT = `SELECT ${CHANNEL_COLUMNS}, ${CHANNEL_HEALTH_COLUMNS} FROM channels`;

export function sqlChannels(db: Executor): ChannelStore {
  return {
    async insert(record, { limit }) {
      const values = [
        record.id,
        record.organizationId,
        record.mode,
        record.type,
        record.name,
        record.enabled ? 1 : 0,
        JSON.stringify(record.config),
        record.signingSecret,
        record.createdAt,
        record.updatedAt,
        record.filter === null ? null : JSON.stringify(record.filter),
      ];
      const { rowsAffected } = await db.execute(
        `INSERT INTO channels (${CHANNEL_COLUMNS}) SELECT ${placeholders(values.length)}
         WHERE (SELECT COUNT(*) FROM channels WHERE organization_id = ? AND mode = ?) < ?`,
        [...values, record.organizationId, record.mode, limit],
      );
      return rowsAffected > 0;
    },

    get: (scope, id) => channelIn(db, scope, id),

    async list(scope, query) {
      const before = query.before;
      const { rows } = await db.execute(
        `${SELECT} WHERE organization_id = ? AND mode = ?
           AND (? IS NULL OR created_at < ? OR (created_at = ? AND id < ?))
         ORDER BY created_at DESC, id DESC LIMIT ?`,
        [
          scope.organizationId,
          scope.mode,
          before ? 1 : null,
          before?.createdAt ?? 0,
          before?.createdAt ?? 0,
          before?.id ?? "",
          query.limit,
        ],
      );
      return rows.map((row) => channelFrom(row));
    },

    async update(scope, id, patch) {
      if (patch.enabled !== false) return updateChannel(db, scope, id, patch);
      return db.transaction(async (tx) => {
        const updated = await updateChannel(tx, scope, id, patch);
        // Only a channel of this scope: another's is left as it is, its deliveries too.
        if (!updated) return null;
        await cancelWaiting(tx, { channelId: id, at: patch.updatedAt });
        // Answered as it now is: its health settled by the cancellation.
        return channelIn(tx, scope, id);
      });
    },

    async remove(scope, id, at) {
      return db.transaction(async (tx) => {
        const { rowsAffected } = await tx.execute("DELETE FROM channels WHERE id = ? AND organization_id = ? AND mode = ?", [
          id,
          scope.organizationId,
          scope.mode,
        ]);
        if (rowsAffected === 0) return false;
        await cancelDeliveries(tx, { reason: DELIVERY_CANCELLED.channelDeleted, at, where: "channel_id = ?", args: [id] });
        return true;
      });
    },

    async disable(id, at) {
      await db.transaction(async (tx) => {
        await tx.execute("UPDATE channels SET enabled = 0, updated_at = ? WHERE id = ?", [at, id]);
        await cancelWaiting(tx, { channelId: id, at });
      });
    },

    async recordAttempt(id, attempt) {
      const { sql, args } = healthStatement(id, attempt);
      await db.execute(sql, args);
    },
  };
}

type ChannelPatch = Parameters<ChannelStore["update"]>[2];

async function channelIn(db: Executor, scope: Scope, id: string): Promise<ChannelRecord | null> {
  const { rows } = await db.execute(`${SELECT} WHERE id = ? AND organization_id = ? AND mode = ?`, [id, scope.organizationId, scope.mode]);
  return rows[0] ? channelFrom(rows[0]) : null;
}

async function updateChannel(db: Executor, scope: Scope, id: string, patch: ChannelPatch): Promise<ChannelRecord | null> {
  const { rows } = await db.execute(
    `UPDATE channels SET name = COALESCE(?, name), enabled = COALESCE(?, enabled), config = COALESCE(?, config),
       filter = CASE WHEN ? THEN ? ELSE filter END, updated_at = ?
     WHERE id = ? AND organization_id = ? AND mode = ?
     RETURNING ${CHANNEL_COLUMNS}, ${CHANNEL_HEALTH_COLUMNS}`,
    [
      patch.name ?? null,
      patch.enabled === undefined ? null : patch.enabled ? 1 : 0,
      patch.config === undefined ? null : JSON.stringify(patch.config),
      patch.filter === undefined ? 0 : 1,
      patch.filter ? JSON.stringify(patch.filter) : null,
      patch.updatedAt,
      id,
      scope.organizationId,
      scope.mode,
    ],
  );
  return rows[0] ? channelFrom(rows[0]) : null;
}

/**
 * A channel switched off: its deliveries waiting for an attempt are cancelled at once, as the
 * deliverer would at their time (one in flight is settled with its outcome).
 */
async function cancelWaiting(tx: Executor, { channelId, at }: { channelId: string; at: number }): Promise<void> {
  await cancelDeliveries(tx, { reason: DELIVERY_CANCELLED.channelOff, at, where: "channel_id = ? AND lease_owner IS NULL", args: [channelId] });
}
