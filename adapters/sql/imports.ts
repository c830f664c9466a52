/** Imports in SQL: the items as sent, settled under the import's lease, each with its certificate at most once. */
import { targetKey, type ImportItemOutcome, type ImportStore } from "../../core/store/mod.ts";
import type { CertificateRecord, EventRecord, ImportItemResult, ImportRecord } from "../../core/base/mod.ts";
import type { Executor, Row } from "./executor.ts";
import { insertJudged, takenTargets } from "./certificates.ts";
import { placeholders, powerOfTwoRuns } from "./rows.ts";

const COLUMNS = "id, organization_id, mode, certificate_limit, status, total, processed, created, failed, created_at, finished_at";

function importFrom(row: Row): ImportRecord {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    mode: String(row.mode) as ImportRecord["mode"],
    certificateLimit: Number(row.certificate_limit),
    status: String(row.status) as ImportRecord["status"],
    total: Number(row.total),
    processed: Number(row.processed),
    created: Number(row.created),
    failed: Number(row.failed),
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null || row.finished_at === undefined ? null : Number(row.finished_at),
  };
}

export function sqlImports(db: Executor): ImportStore {
  return {
    async create(record, items, maxRunning) {
      return db.transaction(async (tx) => {
        // In the write transaction: a create beside it waits for this one, then counts it.
        const { rows } = await tx.execute("SELECT COUNT(*) AS running FROM imports WHERE organization_id = ? AND mode = ? AND status = 'running'", [
          record.organizationId,
          record.mode,
        ]);
        if (Number(rows[0]?.running ?? 0) >= maxRunning) return false;
        await tx.execute(
          `INSERT INTO imports (${COLUMNS}, lease_owner, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0)`,
          [
            record.id,
            record.organizationId,
            record.mode,
            record.certificateLimit,
            record.status,
            record.total,
            record.processed,
            record.created,
            record.failed,
            record.createdAt,
            record.finishedAt,
          ],
        );
        for (const run of powerOfTwoRuns(items.map((body, index) => ({ body, index })))) {
          await tx.execute(
            `INSERT INTO import_items (import_id, idx, body, status) VALUES ${run.map(() => "(?, ?, ?, 'pending')").join(", ")}`,
            run.flatMap(({ body, index }) => [record.id, index, body]),
          );
        }
        return true;
      });
    },

    async get(scope, id) {
      const { rows } = await db.execute(`SELECT ${COLUMNS} FROM imports WHERE id = ? AND organization_id = ? AND mode = ?`, [
        id,
        scope.organizationId,
        scope.mode,
      ]);
      return rows[0] ? importFrom(rows[0]) : null;
    },

    async results(importId) {
      const { rows } = await db.execute(
        "SELECT idx, status, certificate_id, error_code, error_message FROM import_items WHERE import_id = ? AND status != 'pending' ORDER BY idx",
        [importId],
      );
      return rows.map(
        (row): ImportItemResult => ({
          index: Number(row.idx),
          status: String(row.status) as ImportItemResult["status"],
          certificateId: row.certificate_id === null ? null : String(row.certificate_id),
          error: row.error_code === null ? null : { code: String(row.error_code), message: String(row.error_message) },
        }),
      );
    },

    async claim({ owner, now, leaseUntil, limit, latest }) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.execute(
          `SELECT ${COLUMNS} FROM imports WHERE status = 'running' AND (lease_until <= ? OR lease_until > ?)
           ORDER BY (SELECT MAX(o.lease_until) FROM imports o WHERE o.organization_id = imports.organization_id AND o.status = 'running'),
             lease_until, created_at LIMIT ?`,
          [now, latest ?? Number.MAX_SAFE_INTEGER, limit],
        );
        for (const row of rows) {
          await tx.execute("UPDATE imports SET lease_owner = ?, lease_until = ? WHERE id = ?", [owner, leaseUntil, row.id as string]);
        }
        return rows.map(importFrom);
      });
    },

    async nextClaimAt({ latest } = {}) {
      const { rows } = await db.execute("SELECT MIN(CASE WHEN lease_until > ? THEN 0 ELSE lease_until END) AS at FROM imports WHERE status = 'running'", [
        latest ?? Number.MAX_SAFE_INTEGER,
      ]);
      return rows[0]?.at === null || rows[0]?.at === undefined ? null : Number(rows[0].at);
    },

    async renew(id, owner, leaseUntil) {
      const { rowsAffected } = await db.execute(
        "UPDATE imports SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'running'",
        [leaseUntil, id, owner],
      );
      return rowsAffected > 0;
    },

    async pending(importId, { afterIndex, limit }) {
      const { rows } = await db.execute(
        "SELECT idx, body FROM import_items WHERE import_id = ? AND idx > ? AND status = 'pending' ORDER BY idx LIMIT ?",
        [importId, afterIndex, limit],
      );
      return rows.map((row) => ({ index: Number(row.idx), body: String(row.body) }));
    },

    async prune({ before, limit }) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.execute("SELECT id FROM imports WHERE status = 'finished' AND finished_at < ? ORDER BY finished_at LIMIT ?", [
          before,
          limit,
        ]);
        return deleteImports(tx, rows.map((row) => String(row.id)));
      });
    },

    async trim(scope, keep) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.execute(
          "SELECT id FROM imports WHERE organization_id = ? AND mode = ? AND status = 'finished' ORDER BY finished_at DESC, id DESC LIMIT -1 OFFSET ?",
          [scope.organizationId, scope.mode, keep],
        );
        return deleteImports(tx, rows.map((row) => String(row.id)));
      });
    },

    async settle(importId, owner, outcomes, now) {
      // Few statements, whatever the batch: while this transaction is open, the process's other
      // statements (the next items' duplicate checks) wait behind it.
      return db.transaction(async (tx) => {
        const { rows } = await tx.execute(
          // The organization's limit as it is now (an operator may have changed it since the POST), as POST judges.
          `SELECT organization_id, mode,
             COALESCE((SELECT o.certificate_limit FROM organizations o WHERE o.id = imports.organization_id), certificate_limit) AS certificate_limit,
             (SELECT COUNT(*) FROM certificates c WHERE c.organization_id = imports.organization_id AND c.mode = imports.mode) AS certificates
           FROM imports WHERE id = ? AND lease_owner = ? AND status = 'running'`,
          [importId, owner],
        );
        if (!rows[0]) return false;
        if (outcomes.length === 0) return [];
        const limit = Number(rows[0].certificate_limit);
        // Inside this write transaction nobody else adds: the count is kept here rather than re-counted per insert.
        let count = Number(rows[0].certificates);
        const pending = new Set<number>();
        for (const run of powerOfTwoRuns(outcomes)) {
          const { rows: open } = await tx.execute(`SELECT idx FROM import_items WHERE import_id = ? AND status = 'pending' AND idx IN (${placeholders(run.length)})`, [
            importId,
            ...run.map((o) => o.index),
          ]);
          for (const row of open) pending.add(Number(row.idx));
        }
        const scope = { organizationId: String(rows[0].organization_id), mode: String(rows[0].mode) };
        // Judged here in item order, against what is stored and what this batch adds before each item
        // (the whole target, CONTRACT §11, as POST judges it); then written in a few statements, each
        // a round trip the event loop waits for.
        const targetOf = (outcome: ImportItemOutcome) => (outcome.kind === "create" ? outcome.record : outcome.unlessBlocked?.target);
        const taken = await takenTargets(tx, scope, outcomes.flatMap((outcome) => (pending.has(outcome.index) ? (targetOf(outcome) ?? []) : [])));
        const addedHere = new Set<string>();
        const isTaken = (key: string) => taken.has(key) || addedHere.has(key);
        const additions: Array<{ record: CertificateRecord; events: EventRecord[] }> = [];
        const settled: Array<{ index: number; certificateId: string | null; error: { code: string; message: string } | null }> = [];
        for (const outcome of outcomes) {
          if (!pending.has(outcome.index)) continue;
          pending.delete(outcome.index);
          let error = outcome.kind === "failed" ? outcome.error : null;
          if (outcome.kind === "failed" && outcome.unlessBlocked) {
            const { target, duplicate, limitReached } = outcome.unlessBlocked;
            if (isTaken(targetKey(target))) error = duplicate;
            else if (count >= limit) error = limitReached;
          }
          let certificateId: string | null = null;
          if (outcome.kind === "create") {
            const key = targetKey(outcome.record);
            if (isTaken(key)) error = outcome.duplicate;
            else if (count >= limit) error = outcome.limitReached;
            else {
              additions.push({ record: outcome.record, events: outcome.events });
              addedHere.add(key);
              certificateId = outcome.record.id;
              count++;
            }
          }
          settled.push({ index: outcome.index, certificateId, error });
        }
        await insertJudged(tx, additions);
        if (settled.length === 0) return [];
        for (const run of powerOfTwoRuns(settled)) {
          await tx.execute(
            `INSERT INTO import_items (import_id, idx, body, status, certificate_id, error_code, error_message)
             VALUES ${run.map(() => "(?, ?, '', ?, ?, ?, ?)").join(", ")}
             ON CONFLICT (import_id, idx) DO UPDATE SET status = excluded.status, certificate_id = excluded.certificate_id,
               error_code = excluded.error_code, error_message = excluded.error_message`,
            run.flatMap((item) => [importId, item.index, item.error ? "failed" : "created", item.certificateId, item.error?.code ?? null, item.error?.message ?? null]),
          );
        }
        const created = settled.filter((item) => !item.error).length;
        const failed = settled.length - created;
        await tx.execute(
          `UPDATE imports SET processed = processed + ?, created = created + ?, failed = failed + ?,
             status = CASE WHEN processed + ? >= total THEN 'finished' ELSE status END,
             finished_at = CASE WHEN processed + ? >= total THEN ? ELSE finished_at END,
             lease_owner = CASE WHEN processed + ? >= total THEN NULL ELSE lease_owner END
           WHERE id = ?`,
          [settled.length, created, failed, settled.length, settled.length, now, settled.length, importId],
        );
        return settled.flatMap((item) => (item.error ? [] : [item.certificateId!]));
      });
    },
  };
}

/** Deletes the imports `ids` with their items; returns how many. */
async function deleteImports(tx: Executor, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  await tx.execute(`DELETE FROM import_items WHERE import_id IN (${placeholders(ids.length)})`, ids);
  await tx.execute(`DELETE FROM imports WHERE id IN (${placeholders(ids.length)})`, ids);
  return ids.length;
}
