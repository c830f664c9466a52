/** The messages between a local executor (local_executor.ts) and its connection's thread (connection_worker.ts). */
import type { MessagePort } from "node:worker_threads";
import type { SqlValue } from "../sql/executor.ts";

/** Runs one statement. */
export const OP_RUN = 0;
/** Rolls back the open transaction, if any. */
export const OP_ROLLBACK = 1;
/** Closes the connection. */
export const OP_CLOSE = 2;
/** Runs statements in order as one write transaction; the answer holds each one's outcome. */
export const OP_BATCH = 3;

/**
 * The channel for statements inside a transaction, sent once at start: a port the thread answers on,
 * and a flag it raises (Atomics) once the answer is posted. The caller blocks on the flag and takes the
 * answer at once (receiveMessageOnPort), so a transaction holds the connection for the time SQLite
 * takes, not for a turn of a busy event loop per statement.
 */
export interface StatementChannel {
  port: MessagePort;
  /** Int32Array over a SharedArrayBuffer: 0 while a statement runs, 1 once its answer is posted. */
  answered: Int32Array;
}

/**
 * `quiet`: sent through the executor's quiet() view, whose commits the change token may leave out (the
 * store tells the caches what they changed). Any other request that commits makes the thread publish no
 * header this process's commits explain (wal_token.ts), so the token moves as it always did.
 */
export type Request =
  | [id: number, op: typeof OP_RUN, sql: string, args: SqlValue[], quiet?: boolean]
  | [id: number, op: typeof OP_BATCH, statements: Array<[sql: string, args: SqlValue[]]>, quiet?: boolean]
  | [id: number, op: typeof OP_ROLLBACK, quiet?: boolean]
  | [id: number, op: typeof OP_CLOSE];

/** Whether a request was sent quiet (see Request). */
export function isQuiet(request: Request): boolean {
  if (request[1] === OP_RUN) return request[4] === true;
  if (request[1] === OP_BATCH) return request[3] === true;
  if (request[1] === OP_ROLLBACK) return request[2] === true;
  return false;
}

export interface WorkerError {
  message: string;
  /** SQLite's code, e.g. SQLITE_CONSTRAINT_UNIQUE or SQLITE_FULL. */
  code: string | undefined;
}

/** One statement's rows as arrays and their columns (null without rows), and the rows it changed. */
export type Outcome = [rows: unknown[][] | null, columns: string[] | null, rowsAffected: number];

/** A statement's outcome (a batch's: one per statement), or why it failed. */
export type Answer = [id: number, outcome: Outcome | Outcome[] | null, error: WorkerError | null];
