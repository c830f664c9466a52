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
 * thread alone gave fewer checks a second than the event loop alone; shared, more (see the README).
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
import { connectEndpoints, type EndpointConnector, type EndpointRetrieval, type EndpointsRequest } from "../../core/tls/mod.ts";
import type { ConnectAnswer, ConnectMessage } from "./protocol.ts";

/** Past the check's own time limit, how long a thread may take to answer before its check fails. */
const ANSWER_GRACE_MS = 5_000;
/** How often unanswered checks are looked for. */
const SWEEP_MS = 1_000;

interface Pending {
  resolve: (retrievals: EndpointRetrieval[]) => void;
  reject: (error: Error) => void;
  request: EndpointsRequest;
  answerBy: number;
}

class CheckThread {
  readonly pending = new Map<number, Pending>();
  readonly #worker: Worker;
  #nextId = 0;
  /** Answers received and not yet settled. */
  #answers: ConnectAnswer[] = [];
  #settle = () => {
    const answers = this.#answers;
    this.#answers = [];
    for (const answer of answers) this.#answer(answer);
  };
  #sweeper: ReturnType<typeof setInterval>;
  ended = false;

  constructor(onEnd: (thread: CheckThread) => void) {
    this.#worker = new Worker(new URL("./check_thread.ts", import.meta.url), { name: "ck-check" });
    // Held only while a check is under way: an idle thread never keeps a finished process alive.
    this.#worker.unref();
    this.#worker.on("message", (answer: ConnectAnswer) => {
      // Settled on the next turn, as the database thread's answers are (adapters/libsql/local_executor.ts):
      // Bun 1.4's test runner does not take a worker's messages while one is being handled.
      this.#answers.push(answer);
      if (this.#answers.length === 1) setImmediate(this.#settle);
    });
    const end = (why: string) => {
      if (this.ended) return;
      this.ended = true;
      clearInterval(this.#sweeper);
      onEnd(this);
      for (const { reject } of this.pending.values()) reject(new Error(why));
      this.pending.clear();
    };
    this.#worker.on("error", (error) => end(`the check thread failed: ${error instanceof Error ? error.message : String(error)}`));
    this.#worker.on("exit", () => end("the check thread stopped"));
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_MS);
    this.#sweeper.unref();
  }

  connect(request: EndpointsRequest): Promise<EndpointRetrieval[]> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.#worker.ref();
      this.pending.set(id, { resolve, reject, request, answerBy: performance.now() + request.timeoutMs + ANSWER_GRACE_MS });
      this.#worker.postMessage([id, request] satisfies ConnectMessage);
    });
  }

  terminate(): Promise<unknown> {
    return this.#worker.terminate();
  }

  #answer([id, retrievals, error]: ConnectAnswer): void {
    const pending = this.#take(id);
    if (!pending) return;
    if (retrievals) pending.resolve(retrievals);
    else pending.reject(new Error(`the check thread could not check ${pending.request.domain}:${pending.request.port}: ${error}`));
  }

  #take(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    if (this.pending.size === 0) this.#worker.unref();
    return pending;
  }

  /** A thread that does not answer in time (a defect, or a thread starved of CPU) fails its checks as timeouts. */
  #sweep(): void {
    const now = performance.now();
    for (const [id, { answerBy, request }] of this.pending) {
      if (now < answerBy) continue;
      this.#take(id)!.resolve(
        request.addresses.map(({ address }) => ({
          address,
          ok: false,
          reason: "timeout",
          message: `${request.domain}:${request.port} (${address}) did not answer in time: the check thread gave no result within ${request.timeoutMs + ANSWER_GRACE_MS} ms`,
        })),
      );
    }
  }
}

export class CheckThreads implements EndpointConnector {
  readonly #size: number;
  #threads: CheckThread[] = [];
  #closed = false;
  /** Checks whose connections are open on the event loop now. */
  #here = 0;
  readonly #doneHere = () => void this.#here--;
  /** Checks handed to each place so far, for tests and diagnostics. */
  readonly handed = { eventLoop: 0, threads: 0 };

  /** `size`: how many threads beside the event loop, at least 1. */
  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`check threads: ${size} is not a whole number of at least 1`);
    this.#size = size;
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
    if (this.#closed) return Promise.reject(new Error("the check threads are closed"));
    // The thread with the fewest checks under way; none while a new one may still start (it has none).
    let least: CheckThread | undefined;
    for (const thread of this.#threads) if (!least || thread.pending.size < least.pending.size) least = thread;
    if (least && least.pending.size > 0 && this.#threads.length < this.#size) least = undefined;
    // Ties go to the event loop: no hand-over, and no thread started for a lone check.
    if (this.#here <= (least?.pending.size ?? 0)) {
      this.#here++;
      this.handed.eventLoop++;
      const here = connectEndpoints(request);
      here.then(this.#doneHere, this.#doneHere);
      return here;
    }
    this.handed.threads++;
    return (least ?? this.#start()).connect(request);
  }

  /** Ends every thread; checks still under way fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const threads = this.#threads;
    this.#threads = [];
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  #start(): CheckThread {
    const thread = new CheckThread((ended) => (this.#threads = this.#threads.filter((t) => t !== ended)));
    this.#threads.push(thread);
    return thread;
  }
}
