/**
 * One connection to a local database through libSQL's synchronous driver (`libsql`), with its
 * prepared statements kept for reuse, answering requests of the connection protocol
 * (connection_protocol.ts). It runs on a thread of its own for a process that stays
 * (connection_worker.ts), or on the event loop for a command that opens the database for a moment.
 */
import Database from "libsql";
import { OP_BATCH, OP_ROLLBACK, OP_RUN, type Answer, type Outcome, type Request, type WorkerError } from "./connection_protocol.ts";

/** A statement that writes rows (and so commits, outside a transaction). */
const WRITE = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** Statements kept prepared; beyond this the oldest is dropped (IN lists and batches vary in length). */
const MAX_STATEMENTS = 256;

interface Prepared {
  statement: Database.Statement;
  /** Whether it returns rows (SELECT, or a write with RETURNING). */
  reader: boolean;
  /** The names of the columns it returns. */
  columns: string[];
  /** Whether returned rows mean a change (a write with RETURNING). */
  writes: boolean;
  /** Whether it writes rows (WRITE), and so commits when run outside a transaction. */
  commits: boolean;
}

export interface Connection {
  /**
   * Runs one request; never throws (a failure is the answer's error). `locked`, when given, is called
   * once this connection holds the write lock and before what the request commits: a write outside a
   * transaction is then run in one of its own (BEGIN IMMEDIATE), so that the lock is taken first.
   */
  handle(request: Request, locked?: () => void): Answer;
  /**
   * SQLite's `PRAGMA data_version`: a number that moves when another connection (another process, or
   * another connection of this one) committed since this one last looked, never for this connection's
   * own commits. Null when it cannot be read.
   */
  dataVersion(): number | null;
}

/** Opens `path`; an open that fails is the answer to every request, so the first statement's caller learns why. */
export function openConnection(path: string, busyTimeoutMs: number): Connection {
  const prepared = new Map<string, Prepared>();
  let db: Database.Database | undefined;
  let openFailure: WorkerError | undefined;
  try {
    db = new Database(path, { timeout: busyTimeoutMs });
  } catch (error) {
    openFailure = errorOf(error);
  }

  const prepare = (sql: string): Prepared => {
    let found = prepared.get(sql);
    if (found) return found;
    const statement = db!.prepare(sql);
    const reader = statement.reader;
    // Rows as arrays: the driver's own objects cost a native property definition per column, and
    // arrays cross to the main thread more cheaply than objects.
    if (reader) statement.raw(true);
    const columns = reader ? statement.columns().map((column) => column.name) : [];
    found = { statement, reader, columns, writes: reader && !/^\s*(SELECT|PRAGMA|WITH|EXPLAIN)\b/i.test(sql), commits: WRITE.test(sql) };
    if (prepared.size >= MAX_STATEMENTS) prepared.delete(prepared.keys().next().value!);
    prepared.set(sql, found);
    return found;
  };

  /** Runs one statement; with `locked`, a write outside a transaction runs in one of its own (Connection.handle). */
  const runLocked = (sql: string, args: unknown[], locked: (() => void) | undefined): Outcome => {
    if (!locked) return run(sql, args);
    if (db!.inTransaction) {
      // Every transaction here begins with BEGIN IMMEDIATE (local_executor.ts, batch below): the lock is held.
      locked();
      return run(sql, args);
    }
    if (!prepare(sql).commits) return run(sql, args);
    return batch([[sql, args]], locked)[0]!;
  };

  const run = (sql: string, args: unknown[]): Outcome => {
    const statement = prepare(sql);
    if (statement.reader) {
      const rows = statement.statement.all(args) as unknown[][];
      return [rows, rows.length > 0 ? statement.columns : null, statement.writes ? rows.length : 0];
    }
    const { changes } = statement.statement.run(args) as { changes: number };
    return [null, null, changes];
  };

  /** Rolls back the transaction left open by a failed statement or COMMIT; nothing when none is open. */
  const rollback = (): void => {
    if (db!.inTransaction) db!.exec("ROLLBACK");
  };

  /** The statements as one write transaction: each one's outcome, or none of them if one fails. */
  const batch = (statements: Array<[sql: string, args: unknown[]]>, locked?: () => void): Outcome[] => {
    db!.exec("BEGIN IMMEDIATE");
    try {
      locked?.();
      const outcomes = statements.map(([sql, args]) => run(sql, args));
      db!.exec("COMMIT");
      return outcomes;
    } catch (error) {
      // The statement's error is the answer: one from ROLLBACK itself must not hide it (SQLITE_FULL).
      try {
        rollback();
      } catch {}
      throw error;
    }
  };

  const close = (): void => {
    prepared.clear();
    if (db?.open) db.close();
  };

  return {
    dataVersion() {
      if (!db) return null;
      try {
        const [row] = prepare("PRAGMA data_version").statement.all([]) as unknown[][];
        return typeof row?.[0] === "number" ? row[0] : null;
      } catch {
        return null;
      }
    },
    handle(request, locked) {
      const id = request[0];
      if (openFailure) return [id, null, openFailure];
      try {
        if (request[1] === OP_RUN) return [id, runLocked(request[2], request[3], locked), null];
        if (request[1] === OP_BATCH) return [id, batch(request[2], locked), null];
        if (request[1] === OP_ROLLBACK) rollback();
        else close();
        return [id, null, null];
      } catch (error) {
        return [id, null, errorOf(error)];
      }
    },
  };
}

/** What of an error crosses the thread boundary: SQLite's code and message are what callers test. */
function errorOf(error: unknown): WorkerError {
  const { message, code } = error as { message?: unknown; code?: unknown };
  return { message: String(message ?? error), code: typeof code === "string" ? code : undefined };
}
