/**
 * The libSQL store: the SQL store over `@libsql/client`. An embedded file by default (WAL, a busy
 * timeout on every pooled connection), `:memory:`, or a libSQL server (sqld) shared by many processes.
 *
 * @example
 * const store = await openLibsqlStore({ url: "file:./data/certkeeper.db" });
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createClient, type Client, type InStatement, type Transaction } from "@libsql/client";
import { createSqlStore } from "../sql/mod.ts";
import { ConstraintError, type Executor, type ResultSet, type SqlValue } from "../sql/executor.ts";
import type { Store } from "../../core/store/mod.ts";
import { walChangeToken } from "./wal_token.ts";

export interface LibsqlOptions {
  /** `file:path`, `:memory:`, `http(s)://…` or `libsql://…`. */
  url: string;
  authToken?: string;
  /** How long a local write waits for another process's write lock. */
  busyTimeoutMs?: number;
}

export function isRemoteUrl(url: string): boolean {
  return /^(https?|libsql|wss?):\/\//i.test(url);
}

/** Opens (creating the file and its folder when needed) and migrates the database. */
export async function openLibsqlStore(options: LibsqlOptions): Promise<Store> {
  const remote = isRemoteUrl(options.url);
  const filePath = localPath(options.url);
  if (filePath) mkdirSync(dirname(filePath), { recursive: true });
  // `timeout` is the busy timeout of every connection the client opens (a PRAGMA would reach only the
  // connection it ran on). A local database gets one connection per process: its calls are synchronous
  // anyway, the executor queues statements behind an open transaction, and the connection-level
  // pragmas below then hold for every statement.
  const client = createClient({
    url: options.url,
    authToken: options.authToken,
    timeout: options.busyTimeoutMs ?? 10_000,
    ...(remote ? {} : { concurrency: 1 }),
  });
  if (filePath) {
    await client.execute("PRAGMA journal_mode = WAL");
    // In WAL mode NORMAL fsyncs at checkpoints, not at every commit: a crashed process loses nothing,
    // a power cut at most the last commits. A check result and the events it raised are one
    // transaction, so both would be lost together and the next check raises the events again.
    await client.execute("PRAGMA synchronous = NORMAL");
  }
  const executor = new LibsqlExecutor(client, { singleConnection: !remote });
  const wal = filePath ? walChangeToken(filePath) : undefined;
  return createSqlStore(executor, {
    shared: remote,
    // Remote: nothing can tell us cheaply what other processes wrote, so nothing is cached.
    changeToken: remote ? undefined : () => `${executor.writes}:${wal?.() ?? ""}`,
  });
}

/** The file path of a `file:` URL, or null for memory and remote databases. */
function localPath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path = decodeURIComponent(url.slice("file:".length).replace(/^\/\/(localhost)?(?=\/)/, "").split("?")[0]!);
  return path === ":memory:" || path === "" ? null : path;
}

class LibsqlExecutor implements Executor {
  /** Counts this process's writes: part of the change token. */
  writes = 0;
  #client: Client;
  #singleConnection: boolean;
  #lock: Promise<void> = Promise.resolve();

  constructor(client: Client, options: { singleConnection: boolean }) {
    this.#client = client;
    this.#singleConnection = options.singleConnection;
  }

  async execute(sql: string, args: SqlValue[] = []): Promise<ResultSet> {
    // An in-memory database has one connection, which a transaction holds until it ends.
    if (this.#singleConnection) await this.#lock;
    const result = await run(this.#client, { sql, args });
    // Only a change counts: an UPDATE that matched nothing must not flush every cache.
    if (changedRows(sql, result)) this.writes++;
    return result;
  }

  async transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    // One write transaction at a time per process: SQLite has one writer anyway, and queueing here
    // beats polling the busy timeout between our own pooled connections.
    const previous = this.#lock;
    let release!: () => void;
    this.#lock = new Promise((resolve) => (release = resolve));
    await previous;
    let tx: Transaction | undefined;
    let changed = false;
    try {
      tx = await this.#client.transaction("write");
      const open = tx;
      const result = await fn({
        execute: async (sql, args = []) => {
          const resultSet = await run(open, { sql, args });
          changed ||= changedRows(sql, resultSet);
          return resultSet;
        },
        transaction: () => Promise.reject(new Error("nested transactions are not supported")),
        close: async () => {},
      });
      await tx.commit();
      return result;
    } finally {
      tx?.close();
      if (changed) this.writes++;
      release();
    }
  }

  async close(): Promise<void> {
    this.#client.close();
  }
}

/** Whether a statement changed rows; `… RETURNING` reports rowsAffected 0 through the client, but rows. */
function changedRows(sql: string, result: ResultSet): boolean {
  return result.rowsAffected > 0 || (result.rows.length > 0 && !/^\s*SELECT/i.test(sql));
}

async function run(target: Client | Transaction, statement: InStatement): Promise<ResultSet> {
  try {
    const result = await target.execute(statement);
    return { rows: result.rows as unknown as ResultSet["rows"], rowsAffected: result.rowsAffected };
  } catch (error) {
    const text = `${(error as { code?: string }).code ?? ""} ${(error as Error).message}`;
    if (/UNIQUE constraint failed|PRIMARY KEY constraint|SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)/i.test(text)) {
      throw new ConstraintError((error as Error).message);
    }
    throw error;
  }
}
