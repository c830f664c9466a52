/**
 * The thread that owns a local database's connection (local_executor.ts). Every statement of the
 * process runs here, one after another in the order they were sent, so SQLite's work never runs on
 * the event loop that completes handshakes and answers requests. That work includes reading pages,
 * building rows, writing the WAL at each commit, and waiting out another process's write lock.
 *
 * Requests are `[id, OP_RUN, sql, args]`, `[id, OP_BATCH, statements]`, `[id, OP_ROLLBACK]` or
 * `[id, OP_CLOSE]` (connection_protocol.ts), several to a message; each answer is `[id, outcome,
 * error]`, with rows as arrays and their columns named once, one message of answers per message of
 * requests. A transaction's statements come on a channel of their own, answered
 * the same way, while their caller waits for each (StatementChannel).
 */
import Database from "libsql";
import { parentPort, workerData } from "node:worker_threads";
import { OP_BATCH, OP_ROLLBACK, OP_RUN, type Answer, type Outcome, type Request, type StatementChannel, type WorkerError } from "./connection_protocol.ts";

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
}

const { path, busyTimeoutMs } = workerData as { path: string; busyTimeoutMs: number };
const prepared = new Map<string, Prepared>();
let db: Database.Database | undefined;
// An open that fails is the answer to every request, so the first statement's caller learns why.
let openFailure: WorkerError | undefined;
try {
  db = new Database(path, { timeout: busyTimeoutMs });
} catch (error) {
  openFailure = errorOf(error);
}

parentPort!.on("message", (requests: Request[] | StatementChannel) => {
  if (!Array.isArray(requests)) {
    // The transaction's statements: answered on their own port, the flag raised once the answer is there.
    const { port, answered } = requests;
    port.on("message", (statement: Request) => {
      port.postMessage(handle(statement));
      Atomics.store(answered, 0, 1);
      Atomics.notify(answered, 0);
    });
    return;
  }
  // The requests of one of the caller's turns, answered together.
  parentPort!.postMessage(requests.map(handle));
});

function handle(request: Request): Answer {
  const id = request[0];
  if (openFailure) return [id, null, openFailure];
  try {
    if (request[1] === OP_RUN) return [id, run(request[2], request[3]), null];
    if (request[1] === OP_BATCH) return [id, batch(request[2]), null];
    if (request[1] === OP_ROLLBACK) rollback();
    else close();
    return [id, null, null];
  } catch (error) {
    return [id, null, errorOf(error)];
  }
}

/** The statements as one write transaction: each one's outcome, or none of them if one fails. */
function batch(statements: Array<[sql: string, args: unknown[]]>): Outcome[] {
  db!.exec("BEGIN IMMEDIATE");
  try {
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
}

function run(sql: string, args: unknown[]): Outcome {
  const statement = prepare(sql);
  if (statement.reader) {
    const rows = statement.statement.all(args) as unknown[][];
    return [rows, rows.length > 0 ? statement.columns : null, statement.writes ? rows.length : 0];
  }
  const { changes } = statement.statement.run(args) as { changes: number };
  return [null, null, changes];
}

/** Rolls back the transaction left open by a failed statement or COMMIT; nothing when none is open. */
function rollback(): void {
  if (db!.inTransaction) db!.exec("ROLLBACK");
}

function close(): void {
  prepared.clear();
  if (db?.open) db.close();
}

function prepare(sql: string): Prepared {
  let found = prepared.get(sql);
  if (found) return found;
  const statement = db!.prepare(sql);
  const reader = statement.reader;
  // Rows as arrays: the driver's own objects cost a native property definition per column, and
  // arrays cross to the main thread more cheaply than objects.
  if (reader) statement.raw(true);
  const columns = reader ? statement.columns().map((column) => column.name) : [];
  found = { statement, reader, columns, writes: reader && !/^\s*(SELECT|PRAGMA|WITH|EXPLAIN)\b/i.test(sql) };
  if (prepared.size >= MAX_STATEMENTS) prepared.delete(prepared.keys().next().value!);
  prepared.set(sql, found);
  return found;
}

/** What of an error crosses the thread boundary: SQLite's code and message are what callers test. */
function errorOf(error: unknown): WorkerError {
  const { message, code } = error as { message?: unknown; code?: unknown };
  return { message: String(message ?? error), code: typeof code === "string" ? code : undefined };
}
