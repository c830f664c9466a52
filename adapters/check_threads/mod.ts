/**
 * Check threads (CERTKEEPER_CHECK_THREADS): the TLS handshakes of checks run on the event loop and on
 * threads of their own, so that a busy server uses more than one core for them.
 *
 * A handshake and the reading of its chain are most of a check's CPU (about 600 µs of 700 on loopback).
 * On the event loop alone they keep it busy at saturation, one core, while the API waits behind them.
 * Here the event loop resolves the name, vets the addresses and takes the connection budget as before,
 * then the check's connections are opened where the fewest checks are under way: on the event loop
 * itself, or on a thread, which gets the addresses and hands the chains back (a message out, one back).
 * The event loop keeps a share because the hand-over costs CPU too: measured on 2 cores, handshakes on a
 * thread alone gave fewer checks a second than the event loop alone; shared, more (docs/benchmarks.md).
 * Threads start with the first check they are given and end with `close()`; `top -H` shows them as
 * `ck-check`.
 *
 * @example
 * const threads = new CheckThreads(1);
 * const core = createCore({ config, store, connector: threads });
 * // …
 * await core.stop();
 * await threads.close();
 */
import { Worker } from "node:worker_threads";
import type { Logger } from "../../core/base/mod.ts";
import { preciseNow } from "../../core/net/mod.ts";
import { connectEndpoints, type EndpointConnector, type EndpointRetrieval, type EndpointsRequest } from "../../core/tls/mod.ts";
import type { ConnectAnswer, ConnectMessage, ThreadMessage } from "./protocol.ts";

export interface CheckThreadsOptions {
  /** Told when a thread fails or stops answering. */
  logger?: Logger;
  /** Past a check's time limit, how long a thread may take to answer before it is ended; default 5 s. */
  answerGraceMs?: number;
  /** How often unanswered checks are looked for; default 1 s. */
  sweepMs?: number;
  /** After a thread failed, how long checks stay on the event loop before another thread starts; default 5 s. */
  restartAfterMs?: number;
  /** The thread's script; tests substitute one that misbehaves. Default: check_thread.ts. */
  script?: URL;
}

interface Pending {
  resolve: (retrievals: EndpointRetrieval[] | PromiseLike<EndpointRetrieval[]>) => void;
  /** On the event loop's clock. */
  request: EndpointsRequest;
}

type Settings = Required<Omit<CheckThreadsOptions, "logger">> & Pick<CheckThreadsOptions, "logger">;

class CheckThread {
  readonly pending = new Map<number, Pending>();
  readonly #worker: Worker;
  readonly #settings: Settings;
  #nextId = 0;
  /**
   * The event loop's clock minus the thread's, measured when the thread said it was ready (null until
   * then). Each thread's preciseNow() starts from the wall clock at its own start, so a clock step
   * between the two starts would otherwise move every time limit. The message's own transit makes it
   * err towards less time, never more.
   */
  #offset: number | null = null;
  /** Answers received and not yet settled. */
  #answers: ConnectAnswer[] = [];
  #settle = () => {
    const answers = this.#answers;
    this.#answers = [];
    for (const answer of answers) this.#answer(answer);
  };
  #sweeper: ReturnType<typeof setInterval>;
  #sweptAt = performance.now();
  /** The last sweep was skipped as late: the next one is not, however late. */
  #skipped = false;
  #ended = false;

  /**
   * `onEnd`: the thread is gone, with the checks it had under way (to be made again elsewhere);
   * `failure`: why, unless it was ended on purpose. Throws when the thread cannot be started.
   */
  constructor(
    settings: Settings,
    private readonly onEnd: (thread: CheckThread, unfinished: Pending[], failure: string | null) => void,
  ) {
    this.#settings = settings;
    this.#worker = new Worker(settings.script, { name: "ck-check" });
    // Held only while a check is under way: an idle thread never keeps a finished process alive.
    this.#worker.unref();
    this.#worker.on("message", (message: ThreadMessage) => {
      if (message[0] === "ready") return this.#ready(message[1]);
      // Settled on the next turn, as the database thread's answers are (adapters/libsql/local_executor.ts):
      // Bun 1.4's test runner does not take a worker's messages while one is being handled.
      this.#answers.push(message as ConnectAnswer);
      if (this.#answers.length === 1) setImmediate(this.#settle);
    });
    this.#worker.on("error", (error) => this.#end(`it failed: ${error instanceof Error ? error.message : String(error)}`));
    this.#worker.on("exit", () => this.#end("it stopped"));
    this.#sweeper = setInterval(() => this.#sweep(), settings.sweepMs);
    this.#sweeper.unref();
  }

  connect(request: EndpointsRequest): Promise<EndpointRetrieval[]> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      if (this.pending.size === 0) this.#worker.ref();
      this.pending.set(id, { resolve, request });
      // Before the thread is ready, checks wait here (their time running) and go when it is.
      if (this.#offset !== null) this.#send(id, request);
    });
  }

  /** Ends the thread once what it has under way is answered (each check ends by its time limit). */
  async close(): Promise<void> {
    while (this.pending.size > 0 && !this.#ended) await new Promise((resolve) => setTimeout(resolve, 20));
    this.#end(null);
    await this.#worker.terminate();
  }

  #send(id: number, request: EndpointsRequest): void {
    this.#worker.postMessage([id, { ...request, dueAt: request.dueAt - this.#offset! }] satisfies ConnectMessage);
  }

  #ready(threadNow: number): void {
    this.#offset = preciseNow() - threadNow;
    // Nothing was sent before: every check under way waited for this.
    for (const [id, { request }] of this.pending) this.#send(id, request);
  }

  #answer([id, retrievals, error]: ConnectAnswer): void {
    const pending = this.#take(id);
    if (!pending) return;
    if (retrievals) return pending.resolve(retrievals);
    // A defect, not the server's doing: the log has it; the check's result says no more than that.
    this.#settings.logger?.error("a check thread could not make a check", { target: `${pending.request.domain}:${pending.request.port}`, error });
    pending.resolve(failed(pending.request, "tls_error", "the check could not be made (certkeeper's log has the cause)"));
  }

  #take(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    if (this.pending.size === 0 && !this.#ended) this.#worker.unref();
    return pending;
  }

  /** The thread is gone: answers already received are settled, the checks still under way handed back. */
  #end(failure: string | null): void {
    if (this.#ended) return;
    this.#settle();
    this.#ended = true;
    clearInterval(this.#sweeper);
    const unfinished = [...this.pending.values()];
    this.pending.clear();
    this.onEnd(this, unfinished, failure);
  }

  /**
   * A check unanswered well past its time limit means the thread is stuck (a defect): it is ended, and
   * the next check that needs a thread starts a new one.
   */
  #sweep(): void {
    const now = performance.now();
    // A sweep this late means the process was paused: the thread's own timers get their grace first.
    const late = now - this.#sweptAt > this.#settings.sweepMs + 1_000;
    this.#sweptAt = now;
    if (late && !this.#skipped) {
      this.#skipped = true;
      return;
    }
    this.#skipped = false;
    const wall = preciseNow();
    for (const { request } of this.pending.values()) {
      if (wall > request.dueAt + this.#settings.answerGraceMs) {
        this.#end(`it gave no answer ${this.#settings.answerGraceMs} ms past a check's time limit`);
        void this.#worker.terminate();
        return;
      }
    }
  }
}

/** Every address of `request` failed for one reason. */
function failed(request: EndpointsRequest, reason: "timeout" | "tls_error", why: string): EndpointRetrieval[] {
  const label = `${request.domain}:${request.port}`;
  return request.addresses.map(({ address }) => ({ address, ok: false, reason, message: `${label} (${address}): ${why}` }));
}

export class CheckThreads implements EndpointConnector {
  readonly #size: number;
  readonly #settings: Settings;
  #threads: CheckThread[] = [];
  #closed = false;
  /** After a thread failed: no new thread before this moment (performance.now()). */
  #restartAt = 0;
  /** Checks whose connections are open on the event loop now. */
  #here = 0;
  readonly #doneHere = () => void this.#here--;
  /** Checks handed to each place so far, for tests and diagnostics. */
  readonly handed = { eventLoop: 0, threads: 0 };

  /** `size`: how many threads beside the event loop, at least 1. */
  constructor(size: number, options: CheckThreadsOptions = {}) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`check threads: ${size} is not a whole number of at least 1`);
    this.#size = size;
    this.#settings = {
      answerGraceMs: 5_000,
      sweepMs: 1_000,
      restartAfterMs: 5_000,
      script: new URL("./check_thread.ts", import.meta.url),
      ...options,
    };
  }

  /** Checks under way on the threads now. */
  get pending(): number {
    return this.#threads.reduce((sum, thread) => sum + thread.pending.size, 0);
  }

  /** Threads running now (they start with the first check each is given). */
  get running(): number {
    return this.#threads.length;
  }

  connect(request: EndpointsRequest): Promise<EndpointRetrieval[]> {
    // The thread with the fewest checks under way; none while a new one may still start (it has none).
    let least: CheckThread | undefined;
    for (const thread of this.#threads) if (!least || thread.pending.size < least.pending.size) least = thread;
    const mayStart = !this.#closed && this.#threads.length < this.#size && performance.now() >= this.#restartAt;
    if (least && least.pending.size > 0 && mayStart) least = undefined;
    // Ties go to the event loop: no hand-over, and no thread started for a lone check. With no thread
    // to take it (closed, or one failed moments ago), the event loop takes it too.
    if (this.#here <= (least?.pending.size ?? 0) || (!least && !mayStart)) return this.#connectHere(request);
    const thread = least ?? this.#start();
    if (!thread) return this.#connectHere(request);
    this.handed.threads++;
    return thread.connect(request);
  }

  /** Ends every thread once the checks under way on them are answered; later checks open on the event loop. */
  async close(): Promise<void> {
    this.#closed = true;
    const threads = this.#threads;
    this.#threads = [];
    await Promise.all(threads.map((thread) => thread.close()));
  }

  #connectHere(request: EndpointsRequest): Promise<EndpointRetrieval[]> {
    this.#here++;
    this.handed.eventLoop++;
    const here = connectEndpoints(request);
    here.then(this.#doneHere, this.#doneHere);
    return here;
  }

  /** A new thread, or none when it cannot start now (it failed to start: the event loop takes checks meanwhile). */
  #start(): CheckThread | undefined {
    try {
      const thread = new CheckThread(this.#settings, (ended, unfinished, failure) => this.#ended(ended, unfinished, failure));
      this.#threads.push(thread);
      return thread;
    } catch (error) {
      this.#failed(`it could not start: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }

  /**
   * A thread is gone. Its checks still under way are made again on the event loop with the time they
   * have left (none left: they fail as timeouts): a defect of ours must not read as the server's failure.
   */
  #ended(thread: CheckThread, unfinished: Pending[], failure: string | null): void {
    this.#threads = this.#threads.filter((t) => t !== thread);
    if (failure !== null) this.#failed(failure);
    for (const { request, resolve } of unfinished) {
      if (request.dueAt - preciseNow() > 0) resolve(this.#connectHere(request));
      else resolve(failed(request, "timeout", "no answer within the time limit"));
    }
  }

  #failed(why: string): void {
    this.#restartAt = performance.now() + this.#settings.restartAfterMs;
    this.#settings.logger?.error("a check thread ended; checks open on the event loop until another starts", { error: why });
  }
}
