/**
 * Checkpoints a local database from a thread of its own.
 *
 * In WAL mode a commit appends the pages it changed to the WAL, and a checkpoint copies them back
 * into the database. SQLite checkpoints automatically, inside the commit that crosses 1,000 WAL pages:
 * on the thread that runs every statement, which for this process is its event loop. At saturation
 * that copying was the largest share of a re-check's database time (a batched save: 42 µs a row with
 * automatic checkpoints, 19 without; a lease transaction's commit: about 1 ms). Here another
 * connection, on a worker thread, checkpoints every `everyMs` instead, and the main connection's own
 * automatic checkpoint moves to a higher threshold (BACKSTOP_BYTES) so that the WAL stays bounded
 * even if this thread falls behind or fails.
 */
import { Worker } from "node:worker_threads";

/** The WAL size at which the main connection checkpoints by itself while the checkpointer runs. */
export const BACKSTOP_BYTES = 40 * 1024 * 1024;

/** BACKSTOP_BYTES in pages of `pageSize` bytes (SQLite's threshold counts pages). */
export function backstopPages(pageSize: number): number {
  return Math.ceil(BACKSTOP_BYTES / pageSize);
}

export interface CheckpointRound {
  /** 1 when a checkpoint could not complete because of a reader or writer. */
  busy: number;
  /** Frames in the WAL. */
  frames: number;
  /** Frames copied into the database so far. */
  copied: number;
}

export interface Checkpointer {
  /** Stops the thread and closes its connection (at once when it has already ended). */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  everyMs: number;
  busyTimeoutMs: number;
  onRound?: (round: CheckpointRound) => void;
  /**
   * The thread could not start, ended, or its checkpoints fail (e.g. a read-only file): called once,
   * so that the main connection takes checkpointing back.
   */
  onFailure?: (reason: string) => void;
}

export function startCheckpointer(path: string, options: CheckpointerOptions): Checkpointer {
  const worker = new Worker(new URL("./checkpoint_worker.ts", import.meta.url), {
    workerData: { path, everyMs: options.everyMs, busyTimeoutMs: options.busyTimeoutMs },
    name: "ck-checkpoint",
  });
  // The thread must never keep a process alive that is otherwise done.
  worker.unref();
  let stopping = false;
  let exited = false;
  let failed = false;
  let failedRounds = 0;
  const fail = (reason: string) => {
    if (failed || stopping) return;
    failed = true;
    options.onFailure?.(reason);
  };
  worker.on("message", (message) => {
    if (typeof message !== "object" || !message) return;
    if ("frames" in message) {
      failedRounds = 0;
      options.onRound?.(message as CheckpointRound);
    } else if ("error" in message && ++failedRounds >= 3) {
      // One failed round may be a busy moment; three in a row mean it cannot work here.
      fail(String((message as { error: unknown }).error));
    }
  });
  worker.on("error", (error) => fail(error instanceof Error ? error.message : String(error)));
  const exit = new Promise<void>((resolve) =>
    worker.on("exit", () => {
      exited = true;
      fail("the checkpoint thread ended");
      resolve();
    }),
  );
  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        if (exited) return;
        worker.postMessage("stop");
        // A thread that does not answer is not waited for.
        const timer = setTimeout(() => void worker.terminate(), 2_000);
        await Promise.race([exit, new Promise<void>((resolve) => worker.on("message", (message) => message === "stopped" && resolve()))]);
        clearTimeout(timer);
        if (!exited) await worker.terminate();
      })()),
  };
}
