/** The CT log follower's lease, each log's position, and the issuances matched to watches, in SQL. */
import type { EventRecord } from "../../core/base/mod.ts";
import { movedLogs, type CtIssuanceRecord, type CtLogRecord, type CtLogStore } from "../../core/store/mod.ts";
import type { Executor, Row, SqlValue } from "./executor.ts";
import { insertEvents } from "./events.ts";
import { WATCH_COLUMNS, watchFrom } from "./watches.ts";

const LOG_COLUMNS = "url, kind, tree_size, root_hash, head_timestamp, position, compact_range, last_error, retry_at, listed, updated_at";
const ISSUANCE_COLUMNS =
  "seq, watch_id, issuance_key, dns_names, issuer_organization, issuer_common_name, not_before, not_after, fingerprint, logged_at";
/** The condition a write of the follower carries: the caller holds the lease. */
const HOLDS_LEASE = "EXISTS (SELECT 1 FROM ct_follower WHERE id = 1 AND owner = ?)";

const numOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));
const textOrNull = (value: unknown) => (value === null || value === undefined ? null : String(value));

function logFrom(row: Row): CtLogRecord {
  return {
    url: String(row.url),
    kind: String(row.kind) as CtLogRecord["kind"],
    treeSize: numOrNull(row.tree_size),
    rootHash: textOrNull(row.root_hash),
    headTimestamp: numOrNull(row.head_timestamp),
    position: numOrNull(row.position),
    compactRange: JSON.parse(String(row.compact_range)),
    lastError: textOrNull(row.last_error),
    retryAt: numOrNull(row.retry_at),
    listed: Number(row.listed) === 1,
    updatedAt: Number(row.updated_at),
  };
}

function issuanceFrom(row: Row): CtIssuanceRecord & { seq: number } {
  return {
    seq: Number(row.seq),
    watchId: String(row.watch_id),
    issuanceKey: String(row.issuance_key),
    dnsNames: JSON.parse(String(row.dns_names)),
    issuerOrganization: textOrNull(row.issuer_organization),
    issuerCommonName: textOrNull(row.issuer_common_name),
    notBefore: Number(row.not_before),
    notAfter: Number(row.not_after),
    fingerprint: textOrNull(row.fingerprint),
    loggedAt: Number(row.logged_at),
  };
}

/**
 * `bookkeeping` runs the follower's frequent writes (its lease, each log's head and position, the
 * issuances it records with their events): the store's quiet executor where there is one, since none
 * of them changes what a cache keyed by the change token holds (key grants, certificates). Moving the
 * token for each of them emptied the read cache several times a second while following, and every
 * GET then read its certificate from the database. A watch's poll, and the revocation and renewal
 * information caches, write through it for the same reason.
 */
export function sqlCtLogs(db: Executor, bookkeeping: Executor = db): CtLogStore {
  return {
    async leaseFollower({ owner, now, leaseUntil, latest }) {
      const { rowsAffected } = await bookkeeping.execute(
        "UPDATE ct_follower SET owner = ?, lease_until = ? WHERE id = 1 AND (owner IS NULL OR owner = ? OR lease_until < ? OR lease_until > ?)",
        [owner, leaseUntil, owner, now, latest ?? Number.MAX_SAFE_INTEGER],
      );
      return rowsAffected > 0;
    },
    async releaseFollower(owner) {
      await bookkeeping.execute("UPDATE ct_follower SET owner = NULL, lease_until = 0 WHERE id = 1 AND owner = ?", [owner]);
    },
    async list() {
      const { rows } = await db.execute(`SELECT ${LOG_COLUMNS} FROM ct_logs ORDER BY url`);
      return rows.map(logFrom);
    },
    async setListed(owner, logs, now) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.execute(`SELECT 1 AS held FROM ct_follower WHERE id = 1 AND owner = ?`, [owner]);
        if (rows.length === 0) return false;
        const known = (await tx.execute("SELECT url, kind, log_key FROM ct_logs")).rows.map((row) => ({
          url: String(row.url),
          kind: String(row.kind),
          key: row.log_key === null || row.log_key === undefined ? undefined : String(row.log_key),
        }));
        for (const [from, to] of movedLogs(known, logs)) await tx.execute("UPDATE ct_logs SET url = ? WHERE url = ?", [to, from]);
        await tx.execute("UPDATE ct_logs SET listed = 0");
        for (const log of logs) {
          await tx.execute(
            `INSERT INTO ct_logs (url, kind, log_key, compact_range, listed, updated_at) VALUES (?, ?, ?, '[]', 1, ?)
             ON CONFLICT (url) DO UPDATE SET listed = 1, kind = excluded.kind, log_key = COALESCE(excluded.log_key, log_key)`,
            [log.url, log.kind, log.keyBase64 ?? null, now],
          );
        }
        return true;
      });
    },
    async updateLog(owner, url, patch) {
      const sets: string[] = [];
      const args: SqlValue[] = [];
      const columns: Array<[keyof typeof patch, string]> = [
        ["treeSize", "tree_size"],
        ["rootHash", "root_hash"],
        ["headTimestamp", "head_timestamp"],
        ["lastError", "last_error"],
        ["retryAt", "retry_at"],
        ["updatedAt", "updated_at"],
      ];
      for (const [field, column] of columns) {
        if (patch[field] === undefined) continue;
        sets.push(`${column} = ?`);
        args.push(patch[field] as SqlValue);
      }
      const { rowsAffected } = await bookkeeping.execute(`UPDATE ct_logs SET ${sets.join(", ")} WHERE url = ? AND ${HOLDS_LEASE}`, [...args, url, owner]);
      return rowsAffected > 0;
    },
    async startLog(owner, url, start) {
      const { rowsAffected } = await bookkeeping.execute(
        `UPDATE ct_logs SET position = ?, compact_range = ?, updated_at = ? WHERE url = ? AND position IS NULL AND ${HOLDS_LEASE}`,
        [start.position, JSON.stringify(start.compactRange), start.updatedAt, url, owner],
      );
      return rowsAffected > 0;
    },
    async commit(batch) {
      const advance = (executor: Executor) =>
        executor.execute(
          `UPDATE ct_logs SET position = ?, compact_range = ?, updated_at = ? WHERE url = ? AND position = ? AND ${HOLDS_LEASE}`,
          [batch.position, JSON.stringify(batch.compactRange), batch.updatedAt, batch.url, batch.from, batch.owner],
        );
      // Nearly every run matches nothing: then one statement, committed alone, holds the connection least.
      if (batch.matches.length === 0) return { saved: (await advance(bookkeeping)).rowsAffected > 0, events: [] };
      return bookkeeping.transaction(async (tx) => {
        const { rowsAffected } = await advance(tx);
        if (rowsAffected === 0) return { saved: false, events: [] };
        const events: EventRecord[] = [];
        for (const { issuance: i, event } of batch.matches) {
          const inserted = await tx.execute(
            `INSERT INTO ct_issuances (watch_id, issuance_key, dns_names, issuer_organization, issuer_common_name, not_before, not_after, fingerprint, logged_at, recorded_at)
             SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM watches WHERE id = ?)
             ON CONFLICT (watch_id, issuance_key) DO NOTHING`,
            [
              i.watchId, i.issuanceKey, JSON.stringify(i.dnsNames), i.issuerOrganization, i.issuerCommonName,
              i.notBefore, i.notAfter, i.fingerprint, i.loggedAt, batch.updatedAt, i.watchId,
            ],
          );
          if (inserted.rowsAffected === 0) {
            if (i.fingerprint !== null) {
              await tx.execute("UPDATE ct_issuances SET fingerprint = ? WHERE watch_id = ? AND issuance_key = ? AND fingerprint IS NULL", [
                i.fingerprint, i.watchId, i.issuanceKey,
              ]);
            }
            continue;
          }
          await tx.execute(
            `UPDATE watches SET issuances_seen = issuances_seen + 1,
               next_poll_at = CASE WHEN lease_owner IS NULL THEN MIN(next_poll_at, ?) ELSE next_poll_at END
             WHERE id = ?`,
            [batch.updatedAt, i.watchId],
          );
          if (event) {
            await insertEvents(tx, [event]);
            events.push(event);
          }
        }
        return { saved: true, events };
      });
    },
    async watchesVersion() {
      const { rows } = await db.execute("SELECT watches_version FROM ct_follower WHERE id = 1");
      return String(rows[0]!.watches_version);
    },
    async allWatches() {
      const { rows } = await db.execute(`SELECT ${WATCH_COLUMNS} FROM watches ORDER BY id`);
      return rows.map(watchFrom);
    },
    async recordSearched(issuances, now) {
      if (issuances.length === 0) return;
      await bookkeeping.transaction(async (tx) => {
        for (const i of issuances) {
          await tx.execute(
            `INSERT INTO ct_issuances (watch_id, issuance_key, dns_names, issuer_organization, issuer_common_name, not_before, not_after, fingerprint, logged_at, recorded_at)
             SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM watches WHERE id = ?)
             ON CONFLICT (watch_id, issuance_key) DO NOTHING`,
            [i.watchId, i.issuanceKey, JSON.stringify(i.dnsNames), i.issuerOrganization, i.issuerCommonName, i.notBefore, i.notAfter, i.fingerprint, i.loggedAt, now, i.watchId],
          );
        }
      });
    },
    async issuances(watchId, after, limit) {
      const { rows } = await db.execute(`SELECT ${ISSUANCE_COLUMNS} FROM ct_issuances WHERE watch_id = ? AND seq > ? ORDER BY seq LIMIT ?`, [
        watchId,
        after,
        limit,
      ]);
      return rows.map(issuanceFrom);
    },
    async pruneIssuances(notAfterBefore) {
      const { rowsAffected } = await db.execute(
        "DELETE FROM ct_issuances WHERE not_after < ? OR NOT EXISTS (SELECT 1 FROM watches WHERE watches.id = ct_issuances.watch_id)",
        [notAfterBefore],
      );
      return rowsAffected;
    },
  };
}
