/**
 * Synchronous pieces of heavy work, a few milliseconds of them per turn of the event loop. Parsing
 * and describing a new certificate chain costs 1–5 ms of CPU; a burst of first checks (200 adds at
 * once, an import) would otherwise parse a dozen chains in one turn, and everything else ready in the
 * meantime (a delivery's answer, a request) would wait for all of them. Pieces run at once while the
 * turn's budget lasts; beyond it they wait for the next turn, in order.
 *
 * @example
 * const turns = new Turns();
 * const certs = await turns.take(() => parseCertificates(ders));
 */
export class Turns {
  /** Milliseconds of pieces run in this turn. */
  #spent = 0;
  #turnScheduled = false;
  #waiting: Array<() => void> = [];

  /** `budgetMs`: how long pieces may run in one turn before the next wait for another. */
  constructor(private readonly budgetMs = 4) {}

  /** Runs `work` now if this turn's budget allows and nothing waits; otherwise in a later turn. */
  async take<T>(work: () => T): Promise<T> {
    if (this.#spent >= this.budgetMs || this.#waiting.length > 0) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    const started = performance.now();
    try {
      return work();
    } finally {
      this.#spent += performance.now() - started;
      if (!this.#turnScheduled) {
        this.#turnScheduled = true;
        setImmediate(this.#newTurn);
      }
      // Within the budget, the next waiting piece goes on in this turn (right after this one's caller).
      if (this.#spent < this.budgetMs) this.#waiting.shift()?.();
    }
  }

  #newTurn = () => {
    this.#turnScheduled = false;
    this.#spent = 0;
    this.#waiting.shift()?.();
  };
}

/** Lets a turn of the event loop go by: whatever else was ready (a request, a delivery's answer) runs first. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A long loop over what a remote party sent (a CRL's entries, a log's matches), a few milliseconds of
 * it per turn of the event loop: `await slice.pause()` between steps lets a turn go by once the budget
 * since the last one is spent.
 *
 * @example
 * const slice = new TimeSlice();
 * for (const entry of entries) { read(entry); await slice.pause(); }
 */
export class TimeSlice {
  #started = performance.now();

  constructor(private readonly budgetMs = 4) {}

  /** Whether this slice's budget is spent. */
  get spent(): boolean {
    return performance.now() - this.#started > this.budgetMs;
  }

  /** A turn goes by if the budget is spent; then a new slice begins. */
  async pause(): Promise<void> {
    if (!this.spent) return;
    await nextTurn();
    this.#started = performance.now();
  }
}
