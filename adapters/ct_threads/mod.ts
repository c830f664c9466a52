/**
 * The CT reading thread (CERTKEEPER_CT_SOURCE=logs): the follower's requests for entries are fetched
 * and decoded on a thread of its own, so the CPU of receiving and reading tens of millions of entries a
 * day stays off the event loop that answers the API. The event loop sends what to fetch (a URL and
 * which entries) and gets back a few subtree roots and the rare entries naming a watched domain. If the
 * thread fails, its reads under way fail (the log is read again after its backoff) and reading stays on
 * the event loop for a while before a new thread is started. `top -H` shows it as `ck-ct`.
 *
 * @example
 * const reader = new CtReadThread({ extraCaFile: config.extraCaFile, resolve: config.resolve });
 * const core = createCore({ config, store, ctEntryReader: reader });
 * // …
 * await core.stop();
 * await reader.close();
 */
import { Worker } from "node:worker_threads";
import type { Logger } from "../../core/base/mod.ts";
import type { HttpFetcher } from "../../core/net/mod.ts";
import { EntryError, LocalEntryReader, LogFailure, type DecodedChunk, type EntryFetch, type EntryReader, type WatchDomains } from "../../core/ctlogs/mod.ts";
import type { ReadAnswer, ReadFailure, ReadMessage, ReadThreadData } from "./protocol.ts";

export interface CtReadThreadOptions extends ReadThreadData {
  /** Reads on the event loop while the thread is down. */
  fetcher: HttpFetcher;
  logger?: Logger;
  /** After the thread failed, how long reading stays on the event loop; default 30 s. */
  restartAfterMs?: number;
  /** The thread's script; default read_thread.ts. */
  script?: URL;
}

export class CtReadThread implements EntryReader {
  #worker: Worker | null = null;
  #pending = new Map<number, { resolve: (chunk: DecodedChunk) => void; reject: (error: Error) => void }>();
  #nextId = 0;
  /** The watches' version the thread holds. */
  #sent: string | null = null;
  #failedAt = -Infinity;
  #closed = false;
  readonly #local: LocalEntryReader;

  constructor(private readonly options: CtReadThreadOptions) {
    this.#local = new LocalEntryReader({ fetcher: options.fetcher });
  }

  read(fetch: EntryFetch, watches: WatchDomains): Promise<DecodedChunk> {
    const worker = this.#thread();
    if (!worker) return this.#local.read(fetch, watches);
    const id = ++this.#nextId;
    const message: ReadMessage = { id, fetch, version: watches.version };
    if (this.#sent !== watches.version) {
      message.domains = [...watches.domains];
      this.#sent = watches.version;
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage(message);
    });
  }

  /** Starts the thread now, not at the first read: a following process holds it all along. */
  prepare(): void {
    this.#thread();
  }

  /** Ends the thread; reads under way fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    this.#fail(new Error("the CT reading thread was closed"));
    await worker?.terminate();
  }

  #thread(): Worker | null {
    if (this.#worker || this.#closed) return this.#worker;
    if (performance.now() - this.#failedAt < (this.options.restartAfterMs ?? 30_000)) return null;
    const data: ReadThreadData = { extraCaFile: this.options.extraCaFile, resolve: this.options.resolve };
    let worker: Worker;
    try {
      worker = new Worker(this.options.script ?? new URL("./read_thread.ts", import.meta.url), { name: "ck-ct", workerData: data });
    } catch (error) {
      this.options.logger?.warn("could not start the CT reading thread: reading on the event loop", { error });
      this.#failedAt = performance.now();
      return null;
    }
    worker.unref();
    worker.on("message", (answer: ReadAnswer) => this.#answer(answer));
    worker.on("error", (error: Error) => this.#ended(worker, `failed: ${error.message}`));
    worker.on("exit", (code: number) => this.#ended(worker, `ended (exit code ${code})`));
    this.#worker = worker;
    this.#sent = null;
    return worker;
  }

  #answer(answer: ReadAnswer): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return;
    this.#pending.delete(answer.id);
    if ("chunk" in answer) pending.resolve(answer.chunk);
    else pending.reject(errorOf(answer.failure));
  }

  #ended(worker: Worker, how: string): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    this.#failedAt = performance.now();
    if (!this.#closed) this.options.logger?.warn(`the CT reading thread ${how}: reading on the event loop for a while`);
    this.#fail(new Error(`the CT reading thread ${how}`));
    void worker.terminate();
  }

  #fail(error: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { reject } of pending) reject(error);
  }
}

function errorOf(failure: ReadFailure): Error {
  if (failure.kind === "log") return new LogFailure(failure.message, failure.retryAfterMs ?? null, failure.notFound ?? false);
  if (failure.kind === "entry") return new EntryError(failure.message);
  return new Error(failure.message);
}
