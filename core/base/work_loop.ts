/**
 * One loop for leased background work (certificate checks, notification deliveries): claim due items
 * from the store with a lease (so processes sharing a database never take the same item), keep at
 * most `concurrency` in flight (a slow item occupies one slot, never the loop), sleep until the next
 * item is due. Only the claimed batch is ever in memory.
 *
 * With `prefetch`, a claim leases that many items beyond the free slots and keeps them in memory,
 * starting each as a slot frees up: at saturation one claim (a write transaction) then serves
 * concurrency + prefetch items instead of one per finished item.
 */
import type { Clock } from "./time.ts";
import type { Logger } from "./log.ts";

export interface WorkSource<T> {
  /** Leases up to `limit` items due at `now`. */
  claim(limit: number, now: number): Promise<T[]>;
  /** When the next item becomes due, or null when there is none. */
  nextDueAt(): Promise<number | null>;
  run(item: T): Promise<void>;
  /** Fields identifying an item in logs. */
  describe(item: T): Record<string, unknown>;
}

export interface WorkLoopOptions {
  name: string;
  clock: Clock;
  logger: Logger;
  concurrency: number;
  /** Longest sleep between looks at the store, so work added by other processes is picked up. */
  pollMs: number;
  /**
   * Items leased ahead of free slots (default 0). They wait in memory for a slot, so they must start
   * well within their lease; on stop() those not started are dropped and become due again when their
   * lease runs out.
   */
  prefetch?: number;
  /**
   * Claim only once this many slots are free (or nothing is in flight): one claim per few items
   * finished rather than per item, when claiming costs more than an item. Default 1.
   */
  minBatch?: number;
}

export class WorkLoop<T> {
  #running = false;
  #loop: Promise<void> | undefined;
  #inFlight = new Set<Promise<void>>();
  /** Claimed, waiting for a free slot. */
  #ready: T[] = [];
  #wake = new AbortController();

  constructor(
    private readonly source: WorkSource<T>,
    private readonly options: WorkLoopOptions,
  ) {}

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops claiming new work and waits for the work in flight to finish. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake.abort();
    await this.#loop;
    // Claimed but not started: dropped (their leases run out); the loop may have added to them until now.
    this.#ready = [];
    await Promise.all(this.#inFlight);
  }

  /** Wakes the loop early: work was just added in this process. */
  poke(): void {
    this.#wake.abort();
  }

  /**
   * Runs everything due now and waits for it, repeating until nothing is due: for simulations that
   * move a clock by hand instead of starting the loop. Returns the number of items run.
   */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.#claim(this.options.concurrency);
      if (claimed === 0 && this.#inFlight.size === 0) return total;
      total += claimed;
      while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
    }
  }

  async #run(): Promise<void> {
    const { clock, logger, pollMs, concurrency, name } = this.options;
    const prefetch = this.options.prefetch ?? 0;
    while (this.#running) {
      // A fresh signal per round: a slot freeing with nothing left in memory, or a poke(), from now on
      // cuts this round's sleep short.
      const wake = (this.#wake = new AbortController());
      let wait = pollMs;
      try {
        this.#startReady();
        const free = concurrency - this.#inFlight.size;
        const enough = free >= Math.min(this.options.minBatch ?? 1, concurrency) || (free > 0 && this.#inFlight.size === 0);
        // Ask when work is due first (a read), so an idle loop never takes a write lock to find nothing.
        const next = enough ? await this.source.nextDueAt() : null;
        if (next !== null && next <= clock.now()) {
          const claimed = await this.#claim(free + prefetch);
          if (claimed === free + prefetch) continue; // a full batch: more may be due right now
          if (claimed > 0) wait = 10; // the rest may be leased by others: look again soon
        } else if (next !== null) {
          wait = Math.min(pollMs, Math.max(next - clock.now(), 10));
        }
      } catch (error) {
        logger.error(`${name}: could not claim work`, { error });
      }
      if (!this.#running) break;
      await clock.sleep(wait, wake.signal);
    }
  }

  async #claim(limit: number): Promise<number> {
    const items = await this.source.claim(limit, this.options.clock.now());
    this.#ready.push(...items);
    this.#startReady();
    return items.length;
  }

  /** Starts claimed items while slots are free. */
  #startReady(): void {
    while (this.#ready.length > 0 && this.#inFlight.size < this.options.concurrency) this.#start(this.#ready.shift()!);
  }

  #start(item: T): void {
    const task = this.source
      .run(item)
      .catch((error) => this.options.logger.error(`${this.options.name}: work failed`, { ...this.source.describe(item), error }))
      .finally(() => {
        this.#inFlight.delete(task);
        // The freed slot goes to the next claimed item at once; the loop is woken only to claim more.
        this.#startReady();
        if (this.#ready.length === 0) this.#wake.abort();
      });
    this.#inFlight.add(task);
  }
}
