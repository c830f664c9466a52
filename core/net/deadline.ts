/**
 * A time limit that a pause of the whole process does not turn into a failure. When the process is
 * stopped (SIGSTOP, a suspended VM, a long collection) past a deadline, its timer fires first on
 * waking, before the answer that arrived meanwhile is read from the socket: the attempt would count
 * as timed out and be made again, a copy. So a timer that fires late gives the answer one short
 * grace to be read before it aborts.
 *
 * @example
 * const limit = deadline(10_000);
 * try {
 *   await fetch(url, { signal: limit.signal });
 * } finally {
 *   limit.clear();
 * }
 */

export interface Deadline {
  /** Aborted once the time is up. */
  readonly signal: AbortSignal;
  /** When the time is up, on `performance.now()`'s clock. */
  readonly dueAt: number;
  /** Stops the timer (call it when the work is done). */
  clear(): void;
}

export interface DeadlineOptions {
  /** A timer this late (ms) means the process was paused; default 1 s. */
  lateMs?: number;
  /** The extra time then given to what already arrived; default 500 ms. */
  graceMs?: number;
}

/**
 * Now, in milliseconds since the epoch: this thread's wall-clock origin plus its monotonic clock, so
 * wall-clock steps after the thread started do not move it. Each thread has its own origin, taken from
 * the wall clock when it started: between threads, compare only through an offset measured between
 * them (adapters/check_threads does).
 */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

export function deadline(ms: number, options: DeadlineOptions = {}): Deadline {
  const { lateMs = 1000, graceMs = 500 } = options;
  const controller = new AbortController();
  const due = performance.now() + ms;
  let graced = false;
  const fire = () => {
    if (!graced && performance.now() - due > lateMs) {
      graced = true;
      timer = setTimeout(fire, graceMs);
      return;
    }
    controller.abort();
  };
  let timer = setTimeout(fire, ms);
  return {
    signal: controller.signal,
    dueAt: due,
    clear: () => clearTimeout(timer),
  };
}
