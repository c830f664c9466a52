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
 * Waiting here is not part of a check's time limit: the limit bounds the network, not the queue. Those
 * who wait are served first come, first served, or, when they name a party ({@link ConnectionBudget.for}:
 * the checks asked for through the API name their organization), the parties in turn.
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
/** What a check takes its connections from: a budget, or one party's turn in it ({@link ConnectionBudget.for}). */
export interface Connections {
  acquire(count: number, signal?: AbortSignal): Promise<() => void>;
  tryAcquire(count: number): (() => void) | null;
}

interface Waiter {
  count: number;
  grant: () => void;
}

export class ConnectionBudget implements Connections {
  #free: number;
  /**
   * Who waits, by party, each party first come first served: a check needing many connections is not
   * overtaken forever by small ones. Parties take turns in the map's order: the party at the front is
   * served next and, if it still waits, goes to the back.
   */
  readonly #waiting = new Map<string, Waiter[]>();
  /** The party served last: it waits behind the others for its next turn. */
  #served: string | undefined;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a connection budget needs a positive integer, not ${limit}`);
    this.#free = limit;
  }

  /** Connections free now. */
  get free(): number {
    return this.#free;
  }

  /**
   * The budget as `party` (an organization) takes from it: parties waiting take turns, so that one
   * party's many slow checks make another's wait for one of them at most, not for all.
   */
  for(party: string): Connections {
    return { acquire: (count, signal) => this.acquire(count, signal, party), tryAcquire: (count) => this.tryAcquire(count, party) };
  }

  /**
   * Waits until `count` connections are free (at most the whole budget: a check with more addresses
   * than the budget takes all of it) and takes them; the returned function gives them back, once.
   * Rejects with `signal`'s reason if it aborts first.
   */
  acquire(count: number, signal?: AbortSignal, party = ""): Promise<() => void> {
    const now = this.tryAcquire(count, party);
    if (now) return Promise.resolve(now);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const taken = this.#clamp(count);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        count: taken,
        grant: () => {
          signal?.removeEventListener("abort", giveUp);
          resolve(this.#releaser(taken));
        },
      };
      // Given up while waiting: out of the queue, and those behind it may go first.
      const giveUp = () => {
        const queue = this.#waiting.get(party);
        const at = queue?.indexOf(waiter) ?? -1;
        if (at >= 0) queue!.splice(at, 1);
        if (queue?.length === 0) this.#waiting.delete(party);
        reject(signal!.reason);
        this.#grant();
      };
      signal?.addEventListener("abort", giveUp, { once: true });
      const queue = this.#waiting.get(party);
      if (queue) queue.push(waiter);
      else this.#waiting.set(party, [waiter]);
    });
  }

  /** Takes `count` connections if they are free now and nobody waits before us; null otherwise. */
  tryAcquire(count: number, party = ""): (() => void) | null {
    const taken = this.#clamp(count);
    if (this.#waiting.size > 0 || this.#free < taken) return null;
    this.#free -= taken;
    this.#served = party;
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
    // The party served last goes behind the others, even when it was served without waiting.
    const served = this.#served;
    const behind = served === undefined ? undefined : this.#waiting.get(served);
    if (behind && this.#waiting.size > 1) {
      this.#waiting.delete(served!);
      this.#waiting.set(served!, behind);
    }
    for (const [party, queue] of this.#waiting) {
      if (this.#free < queue[0]!.count) return;
      const next = queue.shift()!;
      this.#free -= next.count;
      this.#served = party;
      // Its turn is taken: to the back of the line, if it still waits.
      this.#waiting.delete(party);
      if (queue.length > 0) this.#waiting.set(party, queue);
      next.grant();
    }
  }
}
