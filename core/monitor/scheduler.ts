/**
 * The re-check loop of one process. It leases due certificates from the store (so processes sharing a
 * database never check one certificate at once), keeps at most `concurrency` checks in flight (a slow
 * or silent server occupies one slot, never the loop), and sleeps until the next certificate is due.
 * Only the leased batch is ever in memory.
 */
import type { Clock } from "../time.ts";
import type { Store } from "../store/ports.ts";
import type { Logger } from "../log.ts";
import type { Monitor } from "./monitor.ts";

export interface SchedulerOptions {
  store: Store;
  clock: Clock;
  monitor: Monitor;
  logger: Logger;
  /** Identifies this process in leases. */
  owner: string;
  concurrency: number;
  leaseMs: number;
  /** Longest sleep between looks at the store, so work added by other processes is picked up. */
  pollMs: number;
}

export class Scheduler {
  #running = false;
  #loop: Promise<void> | undefined;
  #inFlight = new Set<Promise<void>>();
  #wake = new AbortController();

  constructor(private readonly options: SchedulerOptions) {}

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops leasing new work and waits for the checks in flight to finish. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake.abort();
    await this.#loop;
    await Promise.all(this.#inFlight);
  }

  /** Wakes the loop early (a certificate was added in this process). */
  poke(): void {
    this.#wake.abort();
  }

  /**
   * Checks everything due now and waits for all of it, repeating until nothing is due: for
   * simulations that move a clock by hand instead of starting the loop. Returns the checks run.
   */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.#claim(this.options.concurrency);
      if (claimed === 0 && this.#inFlight.size === 0) return total;
      total += claimed;
      await Promise.all(this.#inFlight);
    }
  }

  async #run(): Promise<void> {
    const { clock, logger, pollMs } = this.options;
    while (this.#running) {
      // A fresh signal per round: a check finishing or a poke() from now on cuts this round's sleep short.
      const wake = (this.#wake = new AbortController());
      let wait = pollMs;
      try {
        const free = this.options.concurrency - this.#inFlight.size;
        const claimed = free > 0 ? await this.#claim(free) : 0;
        if (claimed > 0 && claimed === free) continue; // a full batch: more may be due right now
        if (this.#inFlight.size < this.options.concurrency) {
          const next = await this.options.store.certificates.nextDueAt();
          if (next !== null) wait = Math.min(pollMs, Math.max(next - clock.now(), 10));
        }
      } catch (error) {
        logger.error("scheduler could not read due certificates", { error });
      }
      if (!this.#running) break;
      await clock.sleep(wait, wake.signal);
    }
  }

  async #claim(limit: number): Promise<number> {
    const { store, clock, owner, leaseMs, monitor, logger } = this.options;
    const now = clock.now();
    const due = await store.certificates.claimDue({ owner, now, leaseUntil: now + leaseMs, limit });
    for (const record of due) {
      const task = monitor
        .check(record, { manual: false })
        .then(() => undefined)
        .catch((error) => logger.error("certificate check failed", { certificateId: record.id, error }))
        .finally(() => {
          this.#inFlight.delete(task);
          this.#wake.abort(); // a slot is free
        });
      this.#inFlight.add(task);
    }
    return due.length;
  }
}
