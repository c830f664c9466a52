/** Certificate Transparency watches and the shared revocation cache in SQL. */
import { LONGEST_RETRY_AFTER_MS, type RevocationCache, type WatchStore } from "../../core/store/mod.ts";
import type { RevocationAnswer, WatchRecord } from "../../core/base/mod.ts";
import { ConstraintError, type Executor, type Row } from "./executor.ts";
import { insertEvents } from "./events.ts";
import { makeDueNow } from "./rows.ts";

export const WATCH_COLUMNS =
  "id, organization_id, mode, domain, include_subdomains, auto_monitor, allowed_issuers, last_polled_at, last_error, " +
  "issuances_seen, cursor, baseline_done, pending_names, next_poll_at, created_at, updated_at";

const numOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

export function watchFrom(row: Row): WatchRecord {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    mode: String(row.mode) as WatchRecord["mode"],
    domain: String(row.domain),
    includeSubdomains: Number(row.include_subdomains) === 1,
    autoMonitor: Number(row.auto_monitor) === 1,
    allowedIssuers: JSON.parse(String(row.allowed_issuers)),
    lastPolledAt: numOrNull(row.last_polled_at),
    lastError: row.last_error === null || row.last_error === undefined ? null : String(row.last_error),
    issuancesSeen: Number(row.issuances_seen),
    cursor: row.cursor === null || row.cursor === undefined ? null : String(row.cursor),
    baselineDone: Number(row.baseline_done) === 1,
    pendingNames: JSON.parse(String(row.pending_names)),
    nextPollAt: Number(row.next_poll_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** `bookkeeping` runs a poll's writes (pollSoon, claimDue, savePoll); see sqlCtLogs. */
export function sqlWatches(db: Executor, bookkeeping: Executor = db): WatchStore {
  const select = `SELECT ${WATCH_COLUMNS} FROM watches`;
  const store: WatchStore = {
    async insert(w, { limit }) {
      try {
        return await db.transaction(async (tx) => {
          const { rows } = await tx.execute(
            "SELECT COUNT(*) AS n, SUM(domain = ?) AS same FROM watches WHERE organization_id = ? AND mode = ?",
            [w.domain, w.organizationId, w.mode],
          );
          if (Number(rows[0]?.same ?? 0) > 0) return "duplicate" as const;
          if (Number(rows[0]?.n ?? 0) >= limit) return "limit_reached" as const;
          await tx.execute(
            `INSERT INTO watches (${WATCH_COLUMNS}, lease_owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
            [
              w.id, w.organizationId, w.mode, w.domain, w.includeSubdomains ? 1 : 0, w.autoMonitor ? 1 : 0,
              JSON.stringify(w.allowedIssuers), w.lastPolledAt, w.lastError, w.issuancesSeen, w.cursor,
              w.baselineDone ? 1 : 0, JSON.stringify(w.pendingNames), w.nextPollAt, w.createdAt, w.updatedAt,
            ],
          );
          return "created" as const;
        });
      } catch (error) {
        if (error instanceof ConstraintError) return "duplicate";
        throw error;
      }
    },
    async get(scope, id) {
      const { rows } = await db.execute(`${select} WHERE id = ? AND organization_id = ? AND mode = ?`, [id, scope.organizationId, scope.mode]);
      return rows[0] ? watchFrom(rows[0]) : null;
    },
    async list(scope, { limit, before }) {
      const args: Array<string | number> = [scope.organizationId, scope.mode];
      let where = "organization_id = ? AND mode = ?";
      if (before) {
        where += " AND (created_at < ? OR (created_at = ? AND id < ?))";
        args.push(before.createdAt, before.createdAt, before.id);
      }
      const { rows } = await db.execute(`${select} WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ?`, [...args, limit]);
      return rows.map(watchFrom);
    },
    async update(scope, id, patch) {
      const { rowsAffected } = await db.execute(
        `UPDATE watches SET include_subdomains = COALESCE(?, include_subdomains), auto_monitor = COALESCE(?, auto_monitor),
           allowed_issuers = COALESCE(?, allowed_issuers), updated_at = ?
         WHERE id = ? AND organization_id = ? AND mode = ?`,
        [
          patch.includeSubdomains === undefined ? null : patch.includeSubdomains ? 1 : 0,
          patch.autoMonitor === undefined ? null : patch.autoMonitor ? 1 : 0,
          patch.allowedIssuers === undefined ? null : JSON.stringify(patch.allowedIssuers),
          patch.updatedAt,
          id,
          scope.organizationId,
          scope.mode,
        ],
      );
      return rowsAffected > 0 ? store.get(scope, id) : null;
    },
    async remove(scope, id) {
      const { rowsAffected } = await db.execute("DELETE FROM watches WHERE id = ? AND organization_id = ? AND mode = ?", [id, scope.organizationId, scope.mode]);
      return rowsAffected > 0;
    },
    async pollSoon(scope, id, at) {
      const earliest = `CASE WHEN retry_at IS NULL OR retry_at > ? THEN ? ELSE MAX(?, retry_at) END`;
      await bookkeeping.execute(
        `UPDATE watches SET next_poll_at = MIN(next_poll_at, ${earliest}) WHERE id = ? AND organization_id = ? AND mode = ? AND lease_owner IS NULL`,
        [at + LONGEST_RETRY_AFTER_MS, at, at, id, scope.organizationId, scope.mode],
      );
      return store.get(scope, id);
    },
    async claimDue({ owner, now, leaseUntil, limit }) {
      return bookkeeping.transaction(async (tx) => {
        const { rows } = await tx.execute(`${select} WHERE next_poll_at <= ? ORDER BY next_poll_at, id LIMIT ?`, [now, limit]);
        const due = rows.map(watchFrom);
        for (const watch of due) {
          await tx.execute("UPDATE watches SET next_poll_at = ?, lease_owner = ? WHERE id = ?", [leaseUntil, owner, watch.id]);
        }
        return due;
      });
    },
    pullForwardPolls({ now, latest, polledAfter, owner }) {
      const where = "next_poll_at > ? AND COALESCE(last_polled_at, created_at) > ? AND lease_owner IS NOT ?";
      return makeDueNow(db, bookkeeping, { table: "watches", column: "next_poll_at", where, args: [latest, polledAfter, owner] }, now);
    },
    async nextPollAt() {
      const { rows } = await db.execute("SELECT MIN(next_poll_at) AS next FROM watches");
      return numOrNull(rows[0]?.next);
    },
    async savePoll(p, events) {
      return bookkeeping.transaction(async (tx) => {
        const { rowsAffected } = await tx.execute(
          // SET reads the row as it was: issuances_seen + ? is the count this save leaves.
          `UPDATE watches SET cursor = ?, issuances_seen = issuances_seen + ?, baseline_done = ?, pending_names = ?, last_polled_at = ?,
             last_error = ?, next_poll_at = CASE WHEN ? AND issuances_seen + ? > ? THEN MIN(?, ?) ELSE ? END, updated_at = ?,
             lease_owner = ${p.release ? "NULL" : "lease_owner"}${p.release ? ", retry_at = ?" : ""}
           WHERE id = ? AND lease_owner = ?`,
          [
            p.cursor, p.newIssuances, p.baselineDone ? 1 : 0, JSON.stringify(p.pendingNames), p.lastPolledAt, p.lastError,
            p.release && p.issuancesSeen !== undefined ? 1 : 0, p.newIssuances, p.issuancesSeen ?? 0, p.nextPollAt, p.updatedAt, p.nextPollAt,
            p.updatedAt, ...(p.release ? [p.rateLimited ? p.nextPollAt : null] : []), p.id, p.owner,
          ],
        );
        if (rowsAffected === 0) return false;
        await insertEvents(tx, events);
        return true;
      });
    },
  };
  return store;
}

export function sqlRevocations(db: Executor): RevocationCache {
  let puts = 0;
  return {
    async get(key, now) {
      const { rows } = await db.execute("SELECT answer FROM revocation_cache WHERE key = ? AND valid_until > ?", [key, now]);
      return rows[0] ? (JSON.parse(String(rows[0].answer)) as RevocationAnswer) : null;
    },
    async put(key, answer) {
      await db.execute(
        `INSERT INTO revocation_cache (key, answer, valid_until) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET answer = excluded.answer, valid_until = excluded.valid_until`,
        [key, JSON.stringify(answer), answer.validUntil],
      );
      // Answers past validUntil are never read again; sweep them now and then.
      if (++puts % 256 === 0) await db.execute("DELETE FROM revocation_cache WHERE valid_until <= ?", [answer.checkedAt]);
    },
  };
}
