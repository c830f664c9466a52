/**
 * The executor for a local database (a file or `:memory:`): one connection through libSQL's
 * synchronous driver (`libsql`, the engine under `@libsql/client`), with its prepared statements
 * kept for reuse.
 *
 * `@libsql/client` prepares every statement anew, probes it by catching an exception, and builds each
 * row with a property definition per column. On the hottest paths (a list page of 100 rows, the
 * scheduler's leases and saves) that cost more than the queries themselves. A local database's calls
 * are synchronous anyway; this keeps them so, and cheap.
 */
import Database from "libsql";
import { ConstraintError, type Executor, type ResultSet, type SqlValue } from "../sql/executor.ts";
import { storageFailure } from "./storage_failure.ts";
import { BACKSTOP_PAGES, startCheckpointer, type Checkpointer, type CheckpointRound } from "./checkpointer.ts";

/** How often the background checkpointer copies the WAL back into the database. */
const CHECKPOINT_EVERY_MS = 100;

/** Statements kept prepared; beyond this the oldest is dropped (IN lists and batches vary in length). */
const MAX_STATEMENTS = 256;

type Statement = Database.Statement;

interface Prepared {
  statement: Statement;
  /** Whether it returns rows (SELECT, or a write with RETURNING). */
  reader: boolean;
  /** The names of the columns it returns. */
  columns: string[];
  /** Whether returned rows mean a change (a write with RETURNING). */
  writes: boolean;
}

export class LocalExecutor implements Executor {
  /** Counts this process's writes: part of the change token. */
  writes = 0;
  #onClose: Array<() => void> = [];
  #db: Database.Database;
  #prepared = new Map<string, Prepared>();
  /** Open transaction: statements outside it wait, as they would share its connection. */
  #lock: Promise<void> = Promise.resolve();
  #busyTimeoutMs: number;
  #checkpointer: Checkpointer | undefined;
  /** The background checkpointer's latest round, for tests and diagnostics. */
  lastCheckpoint: CheckpointRound | undefined;
  /** Why the background checkpointer stopped working (the connection then checkpoints by itself again). */
  checkpointFailure: string | undefined;

  /** `path`: a file path or ":memory:"; `busyTimeoutMs`: how long a write waits for another process's lock. */
  constructor(path: string, options: { busyTimeoutMs: number }) {
    this.#db = new Database(path, { timeout: options.busyTimeoutMs });
    this.#busyTimeoutMs = options.busyTimeoutMs;
  }

  /** For a file in WAL mode: checkpoints from a worker thread (checkpointer.ts), this connection only as a backstop. */
  checkpointInBackground(path: string): void {
    if (this.#checkpointer) return;
    this.#run(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`, []);
    this.#checkpointer = startCheckpointer(path, {
      everyMs: CHECKPOINT_EVERY_MS,
      busyTimeoutMs: this.#busyTimeoutMs,
      onRound: (round) => (this.lastCheckpoint = round),
      onFailure: (reason) => {
        this.checkpointFailure = reason;
        // Back to SQLite's own threshold: the WAL must not grow to the backstop's size unattended.
        if (this.#db.open) this.#run("PRAGMA wal_autocheckpoint = 1000", []);
      },
    });
  }

  async execute(sql: string, args: SqlValue[] = []): Promise<ResultSet> {
    await this.#lock;
    return this.#run(sql, args);
  }

  async transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    // One transaction at a time: SQLite has one writer anyway, and the connection is shared.
    const previous = this.#lock;
    let release!: () => void;
    this.#lock = new Promise((resolve) => (release = resolve));
    await previous;
    const writesBefore = this.writes;
    try {
      this.#run("BEGIN IMMEDIATE", []);
      const result = await fn({
        execute: async (sql, args = []) => this.#run(sql, args),
        transaction: () => Promise.reject(new Error("nested transactions are not supported")),
        close: async () => {},
      });
      this.#run("COMMIT", []);
      return result;
    } catch (error) {
      if (this.#db.inTransaction) this.#run("ROLLBACK", []);
      // Nothing was committed: a change counted inside must not count.
      this.writes = writesBefore;
      throw error;
    } finally {
      // Counted once per committed transaction that changed something.
      if (this.writes > writesBefore) this.writes = writesBefore + 1;
      release();
    }
  }

  /**
   * Runs `fn` once the connection has closed: what reads the database's files beside it (the change
   * token) may then close its own descriptors without releasing SQLite's locks.
   */
  onClose(fn: () => void): void {
    this.#onClose.push(fn);
  }

  async close(): Promise<void> {
    await this.#lock;
    await this.#checkpointer?.stop();
    this.#prepared.clear();
    this.#db.close();
    for (const fn of this.#onClose.splice(0)) fn();
  }

  #run(sql: string, args: SqlValue[]): ResultSet {
    const prepared = this.#prepare(sql);
    try {
      if (prepared.reader) {
        const rows = rowObjects(prepared.statement.all(args) as unknown[][], prepared.columns);
        if (prepared.writes && rows.length > 0) this.writes++;
        return { rows, rowsAffected: prepared.writes ? rows.length : 0 };
      }
      const { changes } = prepared.statement.run(args) as { changes: number };
      // Only a change counts: an UPDATE that matched nothing must not flush every cache.
      if (changes > 0) this.writes++;
      return { rows: [], rowsAffected: changes };
    } catch (error) {
      throw mapError(error);
    }
  }

  #prepare(sql: string): Prepared {
    let prepared = this.#prepared.get(sql);
    if (prepared) return prepared;
    let statement: Statement;
    try {
      statement = this.#db.prepare(sql);
    } catch (error) {
      throw mapError(error);
    }
    const reader = statement.reader;
    // Rows as arrays, made objects here: the driver's own objects cost a native property definition
    // per column (a page of 100 certificates took five times as long).
    if (reader) statement.raw(true);
    const columns = reader ? statement.columns().map((column) => column.name) : [];
    prepared = { statement, reader, columns, writes: reader && !/^\s*(SELECT|PRAGMA|WITH|EXPLAIN)\b/i.test(sql) };
    if (this.#prepared.size >= MAX_STATEMENTS) this.#prepared.delete(this.#prepared.keys().next().value!);
    this.#prepared.set(sql, prepared);
    return prepared;
  }
}

function rowObjects(rows: unknown[][], columns: string[]): ResultSet["rows"] {
  const objects: ResultSet["rows"] = new Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const values = rows[r]!;
    const row: ResultSet["rows"][number] = {};
    for (let c = 0; c < columns.length; c++) row[columns[c]!] = values[c];
    objects[r] = row;
  }
  return objects;
}

function mapError(error: unknown): unknown {
  const text = `${(error as { code?: string }).code ?? ""} ${(error as Error).message}`;
  if (/UNIQUE constraint failed|PRIMARY KEY constraint|SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)/i.test(text)) {
    return new ConstraintError((error as Error).message);
  }
  return storageFailure(error) ?? error;
}
