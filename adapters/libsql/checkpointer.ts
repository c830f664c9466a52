/**
 * Checkpoints a local database from a thread of its own.
 *
 * In WAL mode a commit appends the pages it changed to the WAL, and a checkpoint copies them back
 * into the database. SQLite checkpoints automatically, inside the commit that crosses 1,000 WAL pages:
 * on the thread that runs every statement, which for this process is its event loop. At saturation
 * that copying was the largest share of a re-check's database time (a batched save: 42 µs a row with
 * automatic checkpoints, 19 without; a lease transaction's commit: about 1 ms). Here another
 * connection, on a worker thread, checkpoints every `everyMs` instead, and the main connection's own
 * automatic checkpoint moves to a higher threshold (BACKSTOP_PAGES) so that the WAL stays bounded
 * even if this thread falls behind or fails.
 */
import { Worker } from "node:worker_threads";

/** The main connection's automatic checkpoint threshold while the checkpointer runs (40 MB of 4 KB pages). */
export const BACKSTOP_PAGES = 10_000;

export interface CheckpointRound {
  /** 1 when a checkpoint could not complete because of a reader or writer. */
  busy: number;
  /** Frames in the WAL. */
  frames: number;
  /** Frames copied into the database so far. */
  copied: number;
}

export interface Checkpointer {
  /** Stops the thread and closes its connection. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, options: { everyMs: number; busyTimeoutMs: number; onRound?: (round: CheckpointRound) => void }): Checkpointer {
  const worker = new Worker(new URL("./checkpoint_worker.ts", import.meta.url), {
    workerData: { path, everyMs: options.everyMs, busyTimeoutMs: options.busyTimeoutMs },
  });
  // The thread must never keep a process alive that is otherwise done.
  worker.unref();
  let stopped: Promise<void> | undefined;
  worker.on("message", (message) => {
    if (typeof message === "object" && message && "frames" in message) options.onRound?.(message as CheckpointRound);
  });
  worker.on("error", () => {});
  return {
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        const done = () => {
          void worker.terminate().finally(resolve);
        };
        worker.on("message", (message) => message === "stopped" && done());
        worker.on("exit", () => resolve());
        worker.postMessage("stop");
        // A thread that does not answer is not waited for.
        setTimeout(done, 2_000).unref();
      })),
  };
}
