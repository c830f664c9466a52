/**
 * The libSQL store: the SQL store over libSQL. An embedded file by default (WAL, a busy timeout),
 * `:memory:` (both through the synchronous driver, local_executor.ts), or a libSQL server (sqld) shared
 * by many processes (through `@libsql/client`).
 *
 * @example
 * const store = await openLibsqlStore({ url: "file:./data/certkeeper.db" });
 */
import { closeSync, mkdirSync, openSync, statfsSync } from "node:fs";
import { dirname } from "node:path";
import type { Client, InStatement, Transaction } from "@libsql/client";
import { createSqlStore, type MigrationReport } from "../sql/mod.ts";
import { insideTransaction, isSqliteBusy, type Executor, type ResultSet, type SqlValue, type Statement } from "../sql/executor.ts";
import { StorageUnavailableError, type Store } from "../../core/store/mod.ts";
import { maskUrl } from "../../core/config/mod.ts";
import { walChangeToken } from "./wal_token.ts";
import { LocalExecutor } from "./local_executor.ts";
import { executorError } from "./storage_failure.ts";

export { storageFailure } from "./storage_failure.ts";

export interface LibsqlOptions {
  /** `file:path`, `:memory:`, `http(s)://…` or `libsql://…`. */
  url: string;
  authToken?: string;
  /** Told of an upgrade of the database, and of a long wait for it (a server not there yet, another process's upgrade). */
  report?: MigrationReport;
  /**
   * How long a write waits for another process's write lock (default 10 s): a local file's, or, with a
   * libSQL server, for as long as the server refuses it as busy.
   */
  busyTimeoutMs?: number;
  /**
   * A libSQL server's: how long one request to it (a statement, a batch, a step of a transaction) or a
   * write's wait for this process's turn may take before it fails as storage_unavailable (default: the
   * busy time limit and 5 s).
   */
  requestTimeoutMs?: number;
  /**
   * Whether a thread copies the WAL back into a local database in the background (default true). A
   * command that opens the database for a moment leaves it to SQLite's own checkpoints and spares
   * the thread's start.
   */
  backgroundCheckpoints?: boolean;
  /**
   * Whether a local connection runs on a thread of its own (default true). A command that opens the
   * database for a moment keeps it on the event loop: nothing else runs there meanwhile, and the
   * thread's start would cost more than its statements.
   */
  thread?: boolean;
}

/**
 * The page size of the database files certkeeper creates: SQLite's default, 4 KiB. A certificate row
 * is about 2 KB, and every write of a row appends its whole page to the WAL, which the checkpointer
 * then copies back: a lease and a save for each re-check. Each certificate's check falls on its own
 * phase (core/monitor/check_phase.ts), so the rows leased and saved together are seldom neighbours and
 * each writes a page of its own, a quarter the size of a 16 KiB one. Measured on one machine the same
 * day against 16 KiB pages: bench:checks, the database thread 68–83 µs a check against 107–113;
 * bench/lease_save.ts, 115–119 µs a certificate against 136–147. A database created with other pages
 * keeps them (SQLite cannot change them in WAL mode) and takes these through `backup` (backup.ts).
 */
export const PAGE_SIZE = 4096;

export function isRemoteUrl(url: string): boolean {
  return /^(https?|libsql|wss?):\/\//i.test(url);
}

/** Opens (creating the file and its folder when needed) and migrates the database. */
export async function openLibsqlStore(options: LibsqlOptions): Promise<Store> {
  const remote = isRemoteUrl(options.url);
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  if (remote) {
    // Loaded for a server only: a local database never uses it, and it is a third of a CLI command's start.
    const { createClient } = await import("@libsql/client");
    // Every request to the server has a time limit (the client has none of its own for a server):
    // one left unanswered fails as storage_unavailable instead of holding its caller for ever.
    const requestTimeoutMs = options.requestTimeoutMs ?? busyTimeoutMs + REQUEST_TIMEOUT_MARGIN_MS;
    const timedFetch = (request: Request) => fetch(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(requestTimeoutMs)]) });
    const client = createClient({ url: options.url, authToken: options.authToken, fetch: timedFetch });
    // Remote: nothing can tell us cheaply what other processes wrote, so nothing is cached.
    return createSqlStore(new LibsqlExecutor(client, { busyTimeoutMs, requestTimeoutMs }), { shared: true, report: options.report });
  }
  const filePath = localPath(options.url);
  if (!filePath && !/^(file:)?:memory:$/.test(options.url)) {
    throw new Error(`Unsupported database URL "${maskUrl(options.url)}" (CERTKEEPER_DATABASE_URL): use file:PATH, :memory:, http(s):// or libsql://`);
  }
  if (filePath) createPrivately(filePath);
  // A local database gets one connection per process: its calls are synchronous anyway, the executor
  // queues statements behind an open transaction, and the connection-level pragmas below then hold
  // for every statement.
  const executor = new LocalExecutor(filePath ?? ":memory:", { busyTimeoutMs, thread: options.thread });
  if (filePath) {
    try {
      // Only a new, empty file takes it (before WAL mode writes its header); an older one keeps its own.
      await executor.execute(`PRAGMA page_size = ${PAGE_SIZE}`);
      await executor.execute("PRAGMA journal_mode = WAL");
      // In WAL mode NORMAL fsyncs at checkpoints, not at every commit: a crashed process loses nothing,
      // a power cut at most the last commits. A check result and the events it raised are one
      // transaction, so both would be lost together and the next check raises the events again.
      await executor.execute("PRAGMA synchronous = NORMAL");
      if (options.backgroundCheckpoints !== false) await executor.checkpointInBackground(filePath);
    } catch (error) {
      // A file that cannot be opened (or set up): the connection's thread is not left behind.
      await executor.close();
      throw error;
    }
  }
  const wal = filePath ? walChangeToken(filePath, executor.ownWrites) : undefined;
  let closed = false;
  if (wal) executor.onClose(() => ((closed = true), wal.close()));
  // Asked twice a request: a new string only when something moved. The WAL index is read once a turn
  // of the event loop (a system call, 6 % of a GET's CPU when read each time): the requests of one
  // turn are answered together anyway, and this process's own writes are counted at once.
  let writes = -1;
  let walToken: string | undefined;
  let token = "";
  let walThisTurn: string | undefined;
  const forgetWal = () => (walThisTurn = undefined);
  const readWal = () => {
    // Closed: every read is a token never seen before, none kept for the turn.
    if (closed) return wal?.read();
    if (walThisTurn === undefined && wal) {
      walThisTurn = wal.read();
      setImmediate(forgetWal);
    }
    return walThisTurn;
  };
  const changeToken = () => {
    const now = readWal();
    if (executor.writes !== writes || now !== walToken) {
      writes = executor.writes;
      walToken = now;
      token = `${writes}:${now ?? ""}`;
    }
    return token;
  };
  let store: Store;
  try {
    // Quiet writes (a check's save and lease) are told to the caches by the store, only where the
    // token can leave them out: a file's connection on its thread.
    const quiet = wal && executor.ownWrites ? executor.quiet() : undefined;
    store = await createSqlStore(executor, { shared: false, changeToken, quiet, report: options.report });
  } catch (error) {
    // E.g. a database migrated by a newer certkeeper: its connection and threads are not left behind.
    await executor.close();
    throw error;
  }
  if (!filePath) return store;
  const write = store.ping;
  return {
    ...store,
    async ping() {
      await write();
      // The probe's small write can land in WAL space a checkpoint freed, and succeed on a disk with no
      // room left: the next checkpoint, or the WAL's next growth, would then fail.
      if ((freeBytes(filePath) ?? Infinity) < FULL_BELOW_BYTES) throw new StorageUnavailableError("full");
    },
  };
}

/** Less room than this on a database file's disk counts as full (see ping above). */
const FULL_BELOW_BYTES = 1024 * 1024;

/**
 * Room left on the disk holding the database file (through a symbolic link, the target's, where SQLite
 * keeps the WAL too): the blocks any user may take, as root may not have the reserved ones either (in
 * a rootless container). Null when the system cannot tell; the write probe then decides alone.
 */
function freeBytes(path: string): number | null {
  try {
    const { bavail, bsize } = statfsSync(path);
    return bavail * bsize;
  } catch {
    return null;
  }
}

/** The file path of a `file:` URL, or null for memory and remote databases. */
export function localPath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path = decodeURIComponent(url.slice("file:".length).replace(/^\/\/(localhost)?(?=\/)/, "").split("?")[0]!);
  return path === ":memory:" || path === "" ? null : path;
}

/**
 * A new database file, and the folders made for it, readable by this user alone (0600, 0700): the
 * database holds channels' signing secrets and tokens. SQLite gives its -wal and -shm files the
 * database file's permissions. An existing file or folder keeps the permissions it has.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/** The `file:` URL that {@link localPath} reads back as `path` (a `%`, `?`, `#` or space in it escaped: copy-pasteable in a shell). */
export function fileUrl(path: string): string {
  return `file:${path.replace(/[%?# ]/g, (c) => encodeURIComponent(c))}`;
}

/**
 * The executor for a libSQL server, over `@libsql/client`.
 *
 * One write at a time from this process (a turn, first come first served): the server takes writes one
 * at a time anyway, and dozens of one process's writes queued in it at once (a burst of adds, an import,
 * the checks' saves) are what its write-lock queue does not survive: sqld 0.24 was seen to hand the
 * lock to a waiter whose connection had closed, after which no write of any process was ever answered.
 * Reads do not take the turn; the urgent lane's writes (a delivery's claim and outcome) take it before
 * every ordinary one still waiting, as on a local connection.
 *
 * The server answers SQLITE_BUSY at once at some moments (a writer whose snapshot went stale while it
 * waited for the lock): a statement, a batch or a transaction's first statement (which carries its
 * BEGIN) refused so did nothing, and is tried again, waiting longer each time, for up to
 * `busyTimeoutMs`; then, or when a later statement of a transaction is refused, it fails as
 * {@link StorageUnavailableError} `busy`, as does a write whose turn does not come within
 * `requestTimeoutMs`. A request unanswered within it fails as `no_answer`, and is not tried again: it
 * may have been applied.
 */
class LibsqlExecutor implements Executor {
  #client: Client;
  #busyTimeoutMs: number;
  #requestTimeoutMs: number;
  #turn = new WriteTurn();
  #urgent: Executor | undefined;

  constructor(client: Client, options: { busyTimeoutMs: number; requestTimeoutMs: number }) {
    this.#client = client;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#requestTimeoutMs = options.requestTimeoutMs;
  }

  execute(sql: string, args: SqlValue[] = [], lane: Lane = "ordinary"): Promise<ResultSet> {
    if (READS.test(sql)) return run(this.#client, { sql, args });
    return this.#write(() => run(this.#client, { sql, args }), lane);
  }

  batch(statements: Statement[], lane: Lane = "ordinary"): Promise<ResultSet[]> {
    return this.#write(async () => {
      try {
        const results = await this.#client.batch(statements.map(({ sql, args }) => ({ sql, args: args ?? [] })), "write");
        return results.map((result) => ({ rows: result.rows as unknown as ResultSet["rows"], rowsAffected: result.rowsAffected }));
      } catch (error) {
        throw remoteError(error);
      }
    }, lane);
  }

  transaction<T>(fn: (tx: Executor) => Promise<T>, lane: Lane = "ordinary"): Promise<T> {
    return this.#write(async () => {
      const tx = await this.#client.transaction("write");
      let sent = 0;
      try {
        const result = await fn(insideTransaction((sql, args = []) => (sent++, run(tx, { sql, args }))));
        await tx.commit();
        return result;
      } catch (error) {
        // Refused with its BEGIN (the first statement carries it): nothing was done, it may be tried again.
        if (isBusy(error) && sent > 1) throw new StorageUnavailableError("busy", { cause: error });
        throw remoteError(error);
      } finally {
        tx.close();
      }
    }, lane);
  }

  /** This executor with its writes taking the turn before every ordinary one still waiting (after the one under way). */
  urgent(): Executor {
    return (this.#urgent ??= {
      execute: (sql, args) => this.execute(sql, args, "urgent"),
      batch: (statements) => this.batch(statements, "urgent"),
      transaction: (fn) => this.transaction(fn, "urgent"),
      close: () => this.close(),
    });
  }

  /** `attempt` in this process's write turn, again while the server answers busy, for up to the busy time limit. */
  async #write<T>(attempt: () => Promise<T>, lane: Lane): Promise<T> {
    const release = await this.#turn.take(lane, this.#requestTimeoutMs);
    // Not sent at all: nothing was changed.
    if (!release) throw new StorageUnavailableError("busy");
    try {
      const deadline = performance.now() + this.#busyTimeoutMs;
      for (let wait = BUSY_FIRST_WAIT_MS; ; wait = Math.min(wait * 2, BUSY_LONGEST_WAIT_MS)) {
        try {
          return await attempt();
        } catch (error) {
          if (!isBusy(error) || error instanceof StorageUnavailableError) throw error;
          const left = deadline - performance.now();
          if (left <= 0) throw new StorageUnavailableError("busy", { cause: error });
          // Jittered, so that processes refused together do not all come back together.
          await Bun.sleep(Math.min(left, wait * (0.5 + Math.random())));
        }
      }
    } finally {
      release();
    }
  }

  async close(): Promise<void> {
    this.#client.close();
  }
}

/** Statements that write nothing: outside the write turn. */
const READS = /^\s*(SELECT|EXPLAIN)\b/i;

/**
 * A server's request time limit beyond the busy one: room for the server's own hand-over of its lock
 * (it takes it back from a transaction left idle for 5 s) and the round trip.
 */
const REQUEST_TIMEOUT_MARGIN_MS = 5_000;

type Lane = "urgent" | "ordinary";

/**
 * A turn taken first come first served in each lane, the urgent lane's waiters first; `take` resolves
 * to its release, or to null when it did not come within `timeoutMs`.
 */
class WriteTurn {
  #held = false;
  #waiting: Record<Lane, Array<(release: () => void) => void>> = { urgent: [], ordinary: [] };

  take(lane: Lane, timeoutMs: number): Promise<(() => void) | null> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve(this.#release());
    }
    return new Promise((resolve) => {
      const grant = (release: () => void) => {
        clearTimeout(timer);
        resolve(release);
      };
      const waiting = this.#waiting[lane];
      const timer = setTimeout(() => {
        const at = waiting.indexOf(grant);
        if (at !== -1) waiting.splice(at, 1);
        resolve(null);
      }, timeoutMs);
      waiting.push(grant);
    });
  }

  /** Hands the turn to the next waiter, once however often it is called. */
  #release(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#waiting.urgent.shift() ?? this.#waiting.ordinary.shift();
      if (next) next(this.#release());
      else this.#held = false;
    };
  }
}

/** Waits between tries of a write the server refused as busy: from 10 ms, doubling, to half a second. */
const BUSY_FIRST_WAIT_MS = 10;
const BUSY_LONGEST_WAIT_MS = 500;

/** SQLITE_BUSY as the server names it, or this executor's own `busy`. */
function isBusy(error: unknown): boolean {
  if (error instanceof StorageUnavailableError) return error.reason === "busy";
  return isSqliteBusy(error);
}

async function run(target: Client | Transaction, statement: InStatement): Promise<ResultSet> {
  try {
    const result = await target.execute(statement);
    return { rows: result.rows as unknown as ResultSet["rows"], rowsAffected: result.rowsAffected };
  } catch (error) {
    throw remoteError(error);
  }
}

/**
 * A server's error as the store names it: a server no connection could be made to (sqld stopped, not
 * yet started, a wrong address) as `unreachable` (nothing was sent); a request unanswered in time, or
 * a connection cut under it, as `no_answer` (whether it was applied is not known); else as both
 * executors name theirs.
 */
function remoteError(error: unknown): unknown {
  if (error instanceof StorageUnavailableError) return error;
  if (connectionFailure(error, NEVER_CONNECTED)) return new StorageUnavailableError("unreachable", { cause: error });
  if (timedOut(error) || connectionFailure(error, CUT)) return new StorageUnavailableError("no_answer", { cause: error });
  return executorError(error);
}

/** Codes of a connection that could not be made (Node's and Bun's names for them). */
const NEVER_CONNECTED = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ConnectionRefused", "FailedToOpenSocket"]);
/** Codes of a connection cut or stalled under a request (whether it was applied is not known). */
const CUT = new Set(["ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "ConnectionClosed", "UND_ERR_SOCKET"]);

/** Whether one of `codes` is anywhere in the chain of causes the client wraps the error in. */
function connectionFailure(error: unknown, codes: Set<string>): boolean {
  for (let cause = error, depth = 0; cause && depth < 4; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && codes.has(code)) return true;
  }
  return false;
}

/** The request's time limit ran out (anywhere in the chain of causes the client wraps it in). */
function timedOut(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 4; cause = (cause as { cause?: unknown }).cause, depth++) {
    if ((cause as Error).name === "TimeoutError") return true;
  }
  return false;
}
