/**
 * The executor for a local database (a file or `:memory:`): one connection through libSQL's
 * synchronous driver (`libsql`, the engine under `@libsql/client`), with its prepared statements
 * kept for reuse, owned by a thread of its own (connection_worker.ts).
 *
 * `@libsql/client` prepares every statement anew, probes it by catching an exception, and builds each
 * row with a property definition per column. On the hottest paths (a list page of 100 rows, the
 * scheduler's leases and saves) that cost more than the queries themselves, so the driver is used
 * directly. Its calls are synchronous: on the event loop, at saturation, they took about a tenth of a
 * re-check's time there (reading the leased rows, writing the WAL at each commit), and a write waiting
 * for another process's lock stopped every request. On the connection's thread they cost the event
 * loop one message out and one back per statement.
 */
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { insideTransaction, isSqliteBusy, type Executor, type ResultSet, type SqlValue, type Statement } from "../sql/executor.ts";
import { executorError } from "./storage_failure.ts";
import { StorageUnavailableError } from "../../core/store/mod.ts";
import { backstopPages, startCheckpointer, type Checkpointer, type CheckpointRound } from "./checkpointer.ts";
import { OP_BATCH, OP_CLOSE, OP_ROLLBACK, OP_RUN, type Answer, type Outcome, type Request, type StatementChannel, type WorkerError } from "./connection_protocol.ts";
import { openConnection, type Connection } from "./connection.ts";
import { ownWritesEnded, ownWritesReader, ownWritesState, type OwnWrites } from "./wal_token.ts";

/** Beyond the busy timeout, how long a statement inside a transaction may go unanswered before the thread counts as stuck. */
const SILENT_THREAD_MS = 10_000;
/** Longest a statement inside a transaction is waited for blocking the event loop; beyond, without. */
const BLOCK_AT_MOST_MS = 1;
/** How often the background checkpointer copies the WAL back into the database. */
const CHECKPOINT_EVERY_MS = 100;

type Lane = "urgent" | "ordinary";

interface Pending {
  resolve: (outcome: Outcome | Outcome[] | null) => void;
  reject: (error: unknown) => void;
}

export class LocalExecutor implements Executor {
  /** Counts this process's changes, but for quiet() ones (only ever grows): part of the change token. */
  writes = 0;
  /**
   * For a file on a thread: whether a WAL index header is the one this connection's own commits left
   * (wal_token.ts ownWritesReader), so that the change token can leave quiet() writes out.
   */
  readonly ownWrites: OwnWrites | undefined;
  #quiet: Executor | undefined;
  /** What the connection's thread shares with `ownWrites` (wal_token.ts). */
  #ownWritesState: Int32Array | undefined;
  #onClose: Array<() => void> = [];
  /** The connection's thread; undefined when the connection runs on the event loop (`thread: false`). */
  #worker: Worker | undefined;
  #inline: Connection | undefined;
  #pending = new Map<number, Pending>();
  /** Answers received and not yet settled. */
  #answers: Answer[] = [];
  #settle = () => {
    const answers = this.#answers;
    this.#answers = [];
    for (const answer of answers) this.#answer(answer);
  };
  #nextId = 0;
  /** Why statements can no longer run: the connection closed, or its thread ended. */
  #ended: Error | undefined;
  #closed: Promise<void> | undefined;
  /**
   * Whether a transaction holds the connection. Statements and batches sent meanwhile would run inside
   * it, so they are held, and sent the moment it ends, ahead of the next transaction: they wait for the
   * one transaction under way, never for those queued behind it.
   */
  #open = false;
  #held: Array<() => void> = [];
  /**
   * Transactions waiting for the connection, in order of arrival: the urgent lane's first (a delivery's
   * claim and outcome must not queue behind a burst of adds or an import's batches).
   */
  #waiting: Record<Lane, Array<() => void>> = { urgent: [], ordinary: [] };
  #urgent: Executor | undefined;
  #busyTimeoutMs: number;
  /** Where a transaction's statements go, each waited for (see StatementChannel); a thread's only. */
  #statements: StatementChannel | undefined;
  #checkpointer: Checkpointer | undefined;
  #checkpointing: Promise<void> | undefined;
  /** The background checkpointer's latest round, for tests and diagnostics. */
  lastCheckpoint: CheckpointRound | undefined;
  /** Why the background checkpointer stopped working (the connection then checkpoints by itself again). */
  checkpointFailure: string | undefined;

  /**
   * `path`: a file path or ":memory:"; `busyTimeoutMs`: how long a write waits for another process's
   * lock. A file that cannot be opened fails the first statement. `thread: false` keeps the connection
   * on the event loop: for a command that opens the database for a moment and has nothing else to do,
   * a thread's start (about 90 ms of CPU, a third of such a command's) buys nothing. A statement that
   * waits for another process's write lock then holds the command's event loop (timers too) for that
   * wait, at most `busyTimeoutMs`. The rules of turns and transactions are the same.
   */
  constructor(path: string, options: { busyTimeoutMs: number; thread?: boolean }) {
    this.#busyTimeoutMs = options.busyTimeoutMs;
    if (options.thread === false) {
      this.#inline = openConnection(path, options.busyTimeoutMs);
      return;
    }
    const ownWrites = path === ":memory:" ? undefined : ownWritesState();
    this.ownWrites = ownWrites && ownWritesReader(ownWrites);
    this.#ownWritesState = ownWrites;
    this.#worker = new Worker(new URL("./connection_worker.ts", import.meta.url), {
      workerData: { path, busyTimeoutMs: options.busyTimeoutMs, ownWrites },
      // The thread's name in `top -H` and /proc.
      name: "ck-database",
    });
    // Held only while a statement is under way: an idle connection never keeps a finished process alive.
    this.#worker.unref();
    this.#worker.on("message", (answers: Answer[]) => {
      // Settled on the next turn, not inside the message's dispatch: Bun 1.4's test runner waits for
      // `expect(promise).rejects` without taking a worker's messages while a message is being handled
      // (oven-sh/bun#37189, #43819), so a caller continuing from one answer would never see the next.
      const first = this.#answers.length === 0;
      this.#answers.push(...answers);
      if (first) setImmediate(this.#settle);
    });
    const { port1, port2 } = new MessageChannel();
    this.#statements = { port: port1, answered: new Int32Array(new SharedArrayBuffer(4)) };
    this.#worker.postMessage({ port: port2, answered: this.#statements.answered } satisfies StatementChannel, [port2]);
    this.#worker.on("error", (error) => this.#end(new Error(`The database thread failed: ${error instanceof Error ? error.message : String(error)}`)));
    this.#worker.on("exit", () => this.#end(new Error("The database connection is closed")));
  }

  /** For a file in WAL mode: checkpoints from a worker thread (checkpointer.ts), this connection only as a backstop. */
  checkpointInBackground(path: string): Promise<void> {
    return (this.#checkpointing ??= this.#startCheckpointer(path));
  }

  async #startCheckpointer(path: string): Promise<void> {
    // SQLite's threshold counts pages: the backstop is the same size in bytes whatever the file's page size.
    const { rows } = await this.execute("PRAGMA page_size");
    const pageSize = Number(Object.values(rows[0] ?? {})[0]);
    // NaN would read as 0 to SQLite: no automatic checkpoint at all.
    const setting = this.execute(`PRAGMA wal_autocheckpoint = ${backstopPages(Number.isInteger(pageSize) && pageSize >= 512 ? pageSize : 4096)}`);
    this.#checkpointer = startCheckpointer(path, {
      everyMs: CHECKPOINT_EVERY_MS,
      busyTimeoutMs: this.#busyTimeoutMs,
      onRound: (round) => (this.lastCheckpoint = round),
      onFailure: (reason) => {
        this.checkpointFailure = reason;
        // Back to SQLite's own threshold: the WAL must not grow to the backstop's size unattended.
        if (!this.#ended) this.execute("PRAGMA wal_autocheckpoint = 1000").catch(() => {});
      },
    });
    await setting;
  }

  execute(sql: string, args: SqlValue[] = []): Promise<ResultSet> {
    return this.#outside(() => this.#run(sql, args, true));
  }

  batch(statements: Statement[]): Promise<ResultSet[]> {
    return this.#batch(statements, true);
  }

  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    return this.#transaction(fn, "ordinary", true);
  }

  /**
   * This connection with its writes left out of `writes` (the change token): for writes whose caller
   * tells the caches itself what they changed (a check's save and lease, Store.onCertificatesWritten).
   */
  quiet(): Executor {
    return (this.#quiet ??= {
      execute: (sql, args = []) => this.#outside(() => this.#run(sql, args, false)),
      batch: (statements) => this.#batch(statements, false),
      transaction: (fn) => this.#transaction(fn, "ordinary", false),
      close: () => this.close(),
    });
  }

  #batch(statements: Statement[], counted: boolean): Promise<ResultSet[]> {
    // One message: the thread runs it whole, so it needs the connection only between transactions.
    return this.#outside(async () => {
      const outcomes = (await this.#send([OP_BATCH, statements.map(({ sql, args }) => [sql, args ?? []]), !counted])) as Outcome[];
      // One committed transaction: it counts once, if it changed anything.
      if (counted && outcomes.some((outcome) => outcome[2] > 0)) this.writes++;
      return outcomes.map(resultSet);
    });
  }

  /**
   * This connection with its transactions taken before every ordinary one still waiting (after the
   * one under way): for the small writes that must not queue behind bulk ones.
   */
  urgent(): Executor {
    return (this.#urgent ??= {
      execute: (sql, args) => this.execute(sql, args),
      batch: (statements) => this.batch(statements),
      transaction: (fn) => this.#transaction(fn, "urgent", true),
      close: () => this.close(),
    });
  }

  async #transaction<T>(fn: (tx: Executor) => Promise<T>, lane: Lane, counted: boolean): Promise<T> {
    // One transaction at a time: SQLite has one writer anyway, and the connection is shared.
    await this.#turn(lane);
    try {
      // Sent as any statement: waiting for another process's lock must not stop the event loop. (Waited
      // for at once instead, as the transaction's statements are, when nothing else was under way, it
      // cost an import a fifth of its pace: its batches then began while the thread was still busy.)
      await this.#run("BEGIN IMMEDIATE", [], counted);
      // From here the lock is ours and nothing else is queued on the connection: each statement is
      // waited for, so the transaction holds the connection for SQLite's time (well under a
      // millisecond for an add), not for a turn of the event loop per statement (tens of ms under a
      // burst of adds, with every delivery's outcome held behind it).
      const changes = { any: false };
      const result = await fn(insideTransaction((sql, args = []) => this.#inTransaction(sql, args, counted, changes)));
      await this.#statement([OP_RUN, "COMMIT", [], !counted]);
      // Counted once committed, once: `writes` never moves inside a transaction, so no value seen
      // during one comes back after it (a read begun then would be kept as if nothing had changed).
      if (changes.any) this.writes++;
      return result;
    } catch (error) {
      // Nothing of the transaction may run outside it; a thread that no longer answers is ended.
      await this.#statement([OP_ROLLBACK, !counted]).catch(() => {});
      throw error;
    } finally {
      this.#release();
    }
  }

  /** Sends now, or, while a transaction holds the connection, the moment it ends. `send` posts its message at once. */
  #outside<T>(send: () => Promise<T>): Promise<T> {
    if (!this.#open) return send();
    return new Promise((resolve, reject) => this.#held.push(() => send().then(resolve, reject)));
  }

  /** Resolves when the connection is this transaction's (or close()'s). */
  #turn(lane: Lane): Promise<void> {
    if (!this.#open) {
      this.#open = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting[lane].push(resolve));
  }

  /** The transaction ended: the statements held meanwhile go first, then the next transaction takes the connection. */
  #release(): void {
    this.#open = false;
    // Posted now, before the next transaction's BEGIN (sent once its turn's promise has settled).
    for (const send of this.#held.splice(0)) send();
    const next = this.#waiting.urgent.shift() ?? this.#waiting.ordinary.shift();
    if (next) {
      this.#open = true;
      next();
    }
  }

  /**
   * Runs `fn` once the connection has closed: what reads the database's files beside it (the change
   * token) may then close its own descriptors without releasing SQLite's locks.
   */
  onClose(fn: () => void): void {
    this.#onClose.push(fn);
  }

  close(): Promise<void> {
    return (this.#closed ??= (async () => {
      // A checkpointer still starting is started (its statements must not wait for this close), then stopped: never left running.
      await this.#checkpointing?.catch(() => {});
      await this.#checkpointer?.stop();
      // After the transactions waiting now; what comes later fails, as the connection is closed.
      await this.#turn("ordinary");
      try {
        await this.#send([OP_CLOSE]).catch(() => {});
        this.#end(new Error("The database connection is closed"));
        await this.#worker?.terminate();
        for (const fn of this.#onClose.splice(0)) fn();
      } finally {
        this.#release();
      }
    })());
  }

  async #run(sql: string, args: SqlValue[], counted: boolean): Promise<ResultSet> {
    const outcome = (await this.#send([OP_RUN, sql, args, !counted])) as Outcome;
    // Only a change counts: an UPDATE that matched nothing must not flush every cache.
    if (counted && outcome[2] > 0) this.writes++;
    return resultSet(outcome);
  }

  /** One statement of the open transaction (see #statement). */
  async #inTransaction(sql: string, args: SqlValue[], counted: boolean, changes: { any: boolean }): Promise<ResultSet> {
    const outcome = (await this.#statement([OP_RUN, sql, args, !counted])) as Outcome;
    if (counted && outcome[2] > 0) changes.any = true;
    return resultSet(outcome);
  }

  /**
   * Sends one request on the transaction's channel. Nearly every statement is answered within
   * microseconds: that answer is waited for here, blocking, and costs no turn of the event loop. One
   * that takes longer than BLOCK_AT_MOST_MS (a disk that stalls a write, a thread not scheduled yet on
   * a busy machine: 180 and 400 ms were seen) is waited for without holding the event loop.
   */
  #statement(request: Request extends [number, ...infer Rest] ? Rest : never): Promise<Outcome | Outcome[] | null> {
    if (this.#ended) return Promise.reject(this.#ended);
    const id = ++this.#nextId;
    if (this.#inline) return settled(this.#inline.handle([id, ...request] as Request));
    const { port, answered } = this.#statements!;
    Atomics.store(answered, 0, 0);
    port.postMessage([id, ...request] as Request);
    if (Atomics.wait(answered, 0, 0, BLOCK_AT_MOST_MS) !== "timed-out") {
      const received = receiveMessageOnPort(port);
      if (received) return settled(received.message as Answer);
    }
    return this.#answerLater();
  }

  /** The transaction channel's answer, waited for without blocking; a thread silent for longer than any statement could take is ended. */
  async #answerLater(): Promise<Outcome | Outcome[] | null> {
    const { port, answered } = this.#statements!;
    const deadline = Date.now() + this.#busyTimeoutMs + SILENT_THREAD_MS;
    // The process must not exit while this waits: a transaction's statement (a COMMIT held up by a slow
    // disk, say) may be the connection's only work under way, with nothing else holding the process.
    this.#worker?.ref();
    try {
      for (;;) {
        // An answer that came before the thread ended still counts (a COMMIT it made, say).
        const received = receiveMessageOnPort(port);
        if (received) return settled(received.message as Answer);
        // A thread that failed or exited answers nothing more (#end wakes this wait).
        if (this.#ended) throw this.#ended;
        if (Date.now() > deadline) {
          this.#end(new Error("The database thread stopped answering"));
          void this.#worker?.terminate();
          throw this.#ended;
        }
        const wait = waitAsync(answered, 0, 0, 1000);
        // Raised already, the message not visible yet: look again shortly.
        await (wait.async ? wait.value : new Promise((resolve) => setTimeout(resolve, 1)));
      }
    } finally {
      if (this.#pending.size === 0) this.#worker?.unref();
    }
  }

  /**
   * Sends one request (numbered here) to the connection's thread; its answer settles the promise. The
   * requests of one turn go as one message (in order), and come back as one: a message costs the
   * event loop tens of microseconds whatever it holds, and a busy server sends a thousand a second.
   */
  #send(request: Request extends [number, ...infer Rest] ? Rest : never): Promise<Outcome | Outcome[] | null> {
    if (this.#ended) return Promise.reject(this.#ended);
    if (this.#pending.size === 0) this.#worker?.ref();
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#outbox.push([id, ...request] as Request);
      if (this.#outbox.length === 1) queueMicrotask(this.#post);
    });
  }

  #outbox: Request[] = [];
  #post = () => {
    const requests = this.#outbox;
    this.#outbox = [];
    if (this.#ended) return;
    if (!this.#inline) {
      this.#worker!.postMessage(requests);
      return;
    }
    // On the event loop: answered now, settled on a later turn as a thread's answers are.
    const first = this.#answers.length === 0;
    for (const request of requests) this.#answers.push(this.#inline.handle(request));
    if (first) setImmediate(this.#settle);
  };

  #answer([id, outcome, error]: Answer): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker?.unref();
    if (error) pending.reject(mapError(error));
    else pending.resolve(outcome);
  }

  /** No statement runs any more: those under way fail with `reason`. */
  #end(reason: Error): void {
    this.#ended ??= reason;
    for (const pending of this.#pending.values()) pending.reject(this.#ended);
    this.#pending.clear();
    // A transaction's statement waiting for its answer wakes, and fails with the reason.
    if (this.#statements) Atomics.notify(this.#statements.answered, 0);
    // A quiet request cut short is no longer waited for by reads of the change token.
    if (this.#ownWritesState) ownWritesEnded(this.#ownWritesState);
    this.#worker?.unref();
  }
}

/** Atomics.waitAsync (ES2024), which Bun has; the project's TypeScript library is ES2023. */
const waitAsync = (Atomics as unknown as { waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { async: boolean; value: unknown } }).waitAsync.bind(Atomics);

/** A transaction channel's answer: its outcome, or its error thrown. */
function settled([, outcome, error]: Answer): Promise<Outcome | Outcome[] | null> {
  return error ? Promise.reject(mapError(error)) : Promise.resolve(outcome);
}

function resultSet([rows, columns, rowsAffected]: Outcome): ResultSet {
  return { rows: rows && columns ? rowObjects(rows, columns) : [], rowsAffected };
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

/**
 * SQLite's error from the connection's thread, as the remote executor names the same error; a write
 * that waited out the busy time limit behind another process's lock as {@link StorageUnavailableError}
 * `busy` (nothing was written).
 */
function mapError({ message, code }: WorkerError): unknown {
  const error = executorError(Object.assign(new Error(message), code ? { code } : {}));
  if (!(error instanceof StorageUnavailableError) && isSqliteBusy({ code, message })) {
    return new StorageUnavailableError("busy", { cause: error });
  }
  return error;
}
