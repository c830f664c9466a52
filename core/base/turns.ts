/**
 * Synchronous pieces of heavy work taken one per turn of the event loop. Parsing and describing a new
 * certificate chain costs 1–5 ms of CPU; a burst of first checks (200 adds at once, an import) would
 * otherwise parse a dozen chains in one turn, and everything else ready in the meantime (a delivery's
 * answer, a request) would wait for all of them. One piece a turn leaves room between them.
 *
 * @example
 * const turns = new Turns();
 * const certs = await turns.take(() => parseCertificates(ders));
 */
export class Turns {
  #busy = false;
  #waiting: Array<() => void> = [];

  /** Runs `work` when no other piece has run this turn; the next waiting piece runs in the next turn. */
  async take<T>(work: () => T): Promise<T> {
    if (this.#busy) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#busy = true;
    try {
      return work();
    } finally {
      setImmediate(this.#next);
    }
  }

  #next = () => {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#busy = false;
  };
}
