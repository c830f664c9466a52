/** The messages between a local executor (local_executor.ts) and its connection's thread (connection_worker.ts). */
import type { SqlValue } from "../sql/executor.ts";

/** Runs one statement. */
export const OP_RUN = 0;
/** Rolls back the open transaction, if any. */
export const OP_ROLLBACK = 1;
/** Closes the connection. */
export const OP_CLOSE = 2;
/** Runs statements in order as one write transaction; the answer holds each one's outcome. */
export const OP_BATCH = 3;

export type Request =
  | [id: number, op: typeof OP_RUN, sql: string, args: SqlValue[]]
  | [id: number, op: typeof OP_BATCH, statements: Array<[sql: string, args: SqlValue[]]>]
  | [id: number, op: typeof OP_ROLLBACK | typeof OP_CLOSE];

export interface WorkerError {
  message: string;
  /** SQLite's code, e.g. SQLITE_CONSTRAINT_UNIQUE or SQLITE_FULL. */
  code: string | undefined;
}

/** One statement's rows as arrays and their columns (null without rows), and the rows it changed. */
export type Outcome = [rows: unknown[][] | null, columns: string[] | null, rowsAffected: number];

/** A statement's outcome (a batch's: one per statement), or why it failed. */
export type Answer = [id: number, outcome: Outcome | Outcome[] | null, error: WorkerError | null];
