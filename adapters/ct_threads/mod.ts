/**
 * The CT decoding thread (CERTKEEPER_CT_SOURCE=logs): the follower's answers from the logs are decoded
 * on a thread of its own, so the CPU of reading tens of millions of entries a day stays off the event
 * loop that answers the API. The event loop sends each answer (a copy of its bytes; it keeps its own
 * in case the chunk must be decoded again against newer watches) and gets back a few subtree roots and
 * the rare entries naming a watched domain. If the thread fails, its decodes under way fail (the log
 * is read again after its backoff) and decoding stays on the event loop for a while before a new
 * thread is started. `top -H` shows it as `ck-ct`.
 *
 * @example
 * const decoder = new CtDecodeThread();
 * const core = createCore({ config, store, ctDecoder: decoder });
 * // …
 * await core.stop();
 * await decoder.close();
 */
import { Worker } from "node:worker_threads";
import type { Logger } from "../../core/base/mod.ts";
import { EntryError, inProcessDecoder, type DecodedChunk, type DecodeRequest, type EntryDecoder, type WatchDomains } from "../../core/ctlogs/mod.ts";
import type { DecodeAnswer, DecodeMessage } from "./protocol.ts";

export interface CtDecodeThreadOptions {
  logger?: Logger;
  /** After the thread failed, how long decoding stays on the event loop; default 30 s. */
  restartAfterMs?: number;
  /** The thread's script; default decode_thread.ts. */
  script?: URL;
}

export class CtDecodeThread implements EntryDecoder {
  #worker: Worker | null = null;
  #pending = new Map<number, { resolve: (chunk: DecodedChunk) => void; reject: (error: Error) => void }>();
  #nextId = 0;
  /** The watches' version the thread holds. */
  #sent: string | null = null;
  #failedAt = -Infinity;
  #closed = false;

  constructor(private readonly options: CtDecodeThreadOptions = {}) {}

  decode(request: DecodeRequest, watches: WatchDomains): Promise<DecodedChunk> {
    const worker = this.#thread();
    if (!worker) return inProcessDecoder.decode(request, watches);
    const id = ++this.#nextId;
    const message: DecodeMessage = { id, request, version: watches.version };
    if (this.#sent !== watches.version) {
      message.domains = [...watches.domains];
      this.#sent = watches.version;
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage(message);
    });
  }

  /** Ends the thread; decodes under way fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    this.#fail(new Error("the CT decoding thread was closed"));
    await worker?.terminate();
  }

  #thread(): Worker | null {
    if (this.#worker || this.#closed) return this.#worker;
    if (performance.now() - this.#failedAt < (this.options.restartAfterMs ?? 30_000)) return null;
    let worker: Worker;
    try {
      worker = new Worker(this.options.script ?? new URL("./decode_thread.ts", import.meta.url), { name: "ck-ct" });
    } catch (error) {
      this.options.logger?.warn("could not start the CT decoding thread: decoding on the event loop", { error });
      this.#failedAt = performance.now();
      return null;
    }
    worker.unref();
    worker.on("message", (answer: DecodeAnswer) => this.#answer(answer));
    worker.on("error", (error: Error) => this.#ended(worker, `failed: ${error.message}`));
    worker.on("exit", (code) => this.#ended(worker, `ended (exit code ${code})`));
    this.#worker = worker;
    this.#sent = null;
    return worker;
  }

  #answer(answer: DecodeAnswer): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return;
    this.#pending.delete(answer.id);
    if ("chunk" in answer) pending.resolve(answer.chunk);
    else pending.reject(answer.entry ? new EntryError(answer.error) : new Error(answer.error));
  }

  #ended(worker: Worker, how: string): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    this.#failedAt = performance.now();
    if (!this.#closed) this.options.logger?.warn(`the CT decoding thread ${how}: decoding on the event loop for a while`);
    this.#fail(new Error(`the CT decoding thread ${how}`));
    void worker.terminate();
  }

  #fail(error: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { reject } of pending) reject(error);
  }
}
