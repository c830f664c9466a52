/**
 * The three things the SQL store needs from a database driver (as in Lucia's SQLite adapter): run a
 * statement, run a function in a write transaction, close. The libSQL adapter supplies one.
 */
export type SqlValue = string | number | bigint | null | Uint8Array;
export type Row = Record<string, unknown>;

export interface ResultSet {
  rows: Row[];
  rowsAffected: number;
}

export interface Executor {
  execute(sql: string, args?: SqlValue[]): Promise<ResultSet>;
  /**
   * Runs `fn` in a write transaction (taken at BEGIN, so concurrent writers queue rather than fail)
   * and commits; rolls back if it throws.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Thrown by executors for a UNIQUE or PRIMARY KEY violation. */
export class ConstraintError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConstraintError";
  }
}
