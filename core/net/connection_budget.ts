/**
 * How many connections checks may have open at once in one process: background checks have one budget,
 * checks asked for through the API another. CERTKEEPER_CHECK_CONCURRENCY bounds checks; a name behind
 * several addresses (CONTRACT §11) opens a connection to each, so without this a pass over such names
 * would open concurrency × addresses connections at once.
 *
 * Bounding connections is also what keeps handshakes from being lost: Bun's TLS client advances at most
 * five handshakes per turn of its event loop and parks the rest in a last-in-first-out queue, so under a
 * steady stream of new handshakes the oldest parked ones starve until their deadline (measured: with 64
 * handshakes in flight on loopback, about 1 in 100 never completes; with 16, none in 16,000).
 *
 * Waiting here is not part of a check's time limit: the limit bounds the network, not the queue.
 *
 * @example
 * const budget = new ConnectionBudget(16);
 * const release = await budget.acquire(4);
 * try {
 *   // open four connections
 * } finally {
 *   release();
 * }
 */
export class ConnectionBudget {
  #free: number;
  /** First come, first served: a check needing many connections is not overtaken forever by small ones. */
  readonly #waiting: { count: number; grant: () => void }[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a connection budget needs a positive integer, not ${limit}`);
    this.#free = limit;
  }

  /** Connections free now. */
  get free(): number {
    return this.#free;
  }

  /**
   * Waits until `count` connections are free (at most the whole budget: a check with more addresses
   * than the budget takes all of it) and takes them; the returned function gives them back, once.
   * Rejects with `signal`'s reason if it aborts first.
   */
  acquire(count: number, signal?: AbortSignal): Promise<() => void> {
    const now = this.tryAcquire(count);
    if (now) return Promise.resolve(now);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const taken = this.#clamp(count);
    return new Promise((resolve, reject) => {
      const waiter = {
        count: taken,
        grant: () => {
          signal?.removeEventListener("abort", giveUp);
          resolve(this.#releaser(taken));
        },
      };
      // Given up while waiting: out of the queue, and those behind it may go first.
      const giveUp = () => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal!.reason);
        this.#grant();
      };
      signal?.addEventListener("abort", giveUp, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /** Takes `count` connections if they are free now and nobody waits before us; null otherwise. */
  tryAcquire(count: number): (() => void) | null {
    const taken = this.#clamp(count);
    if (this.#waiting.length > 0 || this.#free < taken) return null;
    this.#free -= taken;
    return this.#releaser(taken);
  }

  #clamp(count: number): number {
    return Math.min(Math.max(count, 0), this.limit);
  }

  #releaser(taken: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#free += taken;
      this.#grant();
    };
  }

  #grant(): void {
    while (this.#waiting.length > 0 && this.#free >= this.#waiting[0]!.count) {
      const next = this.#waiting.shift()!;
      this.#free -= next.count;
      next.grant();
    }
  }
}
