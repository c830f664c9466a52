/**
 * Group commit for the most frequent write of a running server: the bookkeeping of a re-check that
 * found the same certificate and raised nothing (last check, next check, failure counters, version).
 * Saves that arrive in the same turn of the event loop are written by one statement, and each still
 * learns whether its compare-and-swap held (RETURNING lists the rows that matched their version).
 *
 * One statement instead of one per check matters because a local libSQL call runs on the event loop:
 * interleaved with TLS handshakes, each prepared statement costs several times its cost alone.
 */
import type { CertificateRecord } from "../../core/base/mod.ts";
import type { Executor, SqlValue } from "./executor.ts";
import { statusPeriods } from "./rows.ts";

/** At most this many rows per statement (SQLite binds at most 32,766 values). */
const MAX_BATCH = 200;
const COLUMNS_PER_ROW = 11;

interface Pending {
  record: CertificateRecord;
  resolve: (saved: boolean) => void;
  reject: (error: unknown) => void;
}

export class RecheckBatcher {
  #queue: Pending[] = [];
  #scheduled = false;

  /** `single` saves one record the plain way: a batch of one pays no join. */
  constructor(
    private readonly db: Executor,
    private readonly single: (record: CertificateRecord) => Promise<boolean>,
  ) {}

  /** Resolves true when the stored version was `record.version` and the row is now updated. */
  save(record: CertificateRecord): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ record, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    this.#scheduled = false;
    // One row per certificate per statement: two saves of one certificate from one version must not
    // both believe they won. A later one waits for the next statement, where its version is stale.
    const batch: Pending[] = [];
    const deferred: Pending[] = [];
    const ids = new Set<string>();
    for (const pending of this.#queue) {
      if (batch.length < MAX_BATCH && !ids.has(pending.record.id)) {
        ids.add(pending.record.id);
        batch.push(pending);
      } else {
        deferred.push(pending);
      }
    }
    this.#queue = deferred;
    if (deferred.length > 0) {
      this.#scheduled = true;
      setImmediate(() => void this.#flush());
    }
    try {
      if (batch.length === 1) {
        batch[0]!.resolve(await this.single(batch[0]!.record));
        return;
      }
      const args: SqlValue[] = [];
      for (const { record: r } of batch) {
        args.push(
          r.id,
          r.version,
          r.lastCheckedAt,
          r.failure,
          r.failureCount,
          r.alertedThreshold,
          r.expiryAlerted ? 1 : 0,
          r.health,
          r.nextCheckAt,
          r.updatedAt,
          // The failure can change without the details, and with it the status over time.
          statusPeriods(r),
        );
      }
      const row = `(${Array.from({ length: COLUMNS_PER_ROW }, () => "?").join(", ")})`;
      // VALUES columns are named column1, column2, … in SQLite.
      const { rows } = await this.db.execute(
        `UPDATE certificates SET
           last_checked_at = v.column3, failure = v.column4, failure_count = v.column5,
           alerted_threshold = v.column6, expiry_alerted = v.column7, health = v.column8,
           next_check_at = v.column9, updated_at = v.column10, status_periods = v.column11,
           lease_owner = NULL, version = certificates.version + 1
         FROM (VALUES ${batch.map(() => row).join(", ")}) AS v
         WHERE certificates.id = v.column1 AND certificates.version = v.column2
         RETURNING certificates.id AS id`,
        args,
      );
      const saved = new Set(rows.map((r) => String(r.id)));
      for (const pending of batch) pending.resolve(saved.has(pending.record.id));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
  }
}
