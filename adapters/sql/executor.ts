/**
 * What the SQL store needs from a database driver (as in Lucia's SQLite adapter): run a statement,
 * run a few statements as one write transaction in one request, run a function in a write
 * transaction, close. The libSQL adapter supplies one.
 */
export type SqlValue = string | number | bigint | null | Uint8Array;
export type Row = Record<string, unknown>;

export interface ResultSet {
  rows: Row[];
  rowsAffected: number;
}

export interface Statement {
  sql: string;
  args?: SqlValue[];
}

export interface Executor {
  execute(sql: string, args?: SqlValue[]): Promise<ResultSet>;
  /**
   * Runs the statements in order as one write transaction, sent as one request (one message to a
   * local connection's thread, one round trip to a database server): all commit, or none if one fails.
   * For work whose later statements need nothing computed from earlier answers.
   */
  batch(statements: Statement[]): Promise<ResultSet[]>;
  /**
   * Runs `fn` in a write transaction (taken at BEGIN, so concurrent writers queue rather than fail)
   * and commits; rolls back if it throws.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * The same database with this executor's transactions taken before every ordinary one still
   * waiting for the connection (not before the one under way): for small writes that must not queue
   * behind bulk ones. Absent where writes do not queue in this process.
   */
  urgent?(): Executor;
  /**
   * The same database with its writes left out of the store's change token: for writes whose caller
   * tells the caches itself what they changed (Store.onCertificatesWritten). Absent where the change
   * token cannot tell this process's commits from other processes'.
   */
  quiet?(): Executor;
}

/**
 * The executor a transaction's function gets: its statements run inside the transaction, and a
 * transaction or batch of its own (which would have to nest) is refused.
 */
export function insideTransaction(execute: Executor["execute"]): Executor {
  const nested = () => Promise.reject(new Error("nested transactions are not supported"));
  return { execute, batch: nested, transaction: nested, close: async () => {} };
}

/** Thrown by executors for a UNIQUE or PRIMARY KEY violation. */
export class ConstraintError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConstraintError";
  }
}

/** SQLite's "another connection holds the lock", by code (a local connection) or in the message (a server). */
export function isSqliteBusy(error: unknown): boolean {
  // sqld's TRANSACTION_TIMEOUT: it ended a transaction that held the write lock while another waited (rolled back).
  return /SQLITE_BUSY|database is locked|TRANSACTION_TIMEOUT/i.test(`${(error as { code?: string })?.code ?? ""} ${(error as Error)?.message ?? ""}`);
}
