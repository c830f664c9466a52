/**
 * One loop for leased background work (certificate checks, notification deliveries): claim due items
 * from the store with a lease (so processes sharing a database never take the same item), keep at
 * most `concurrency` in flight (a slow item occupies one slot, never the loop), sleep until the next
 * item is due. Only the claimed batch is ever in memory.
 *
 * With `prefetch`, a claim leases that many items beyond the free slots and keeps them in memory,
 * starting each as a slot frees up: at saturation one claim (a write transaction) then serves
 * concurrency + prefetch items instead of one per finished item. The next claim goes out while a few
 * of them still wait (half of min(prefetch, concurrency), rounded down: with one slot, none), so that
 * slots freeing during its round trip start those instead of standing empty: at saturation (the
 * scheduler alone over bench/checks.ts's certificates and servers), 6 % more re-checks a second than
 * claiming only once every claimed item had started (9 of 10 alternating pairs). At most prefetch +
 * that many wait in memory.
 *
 * An item's `run` may hand back its last step (saving what it found) instead of taking it: the item's
 * slot is free at once, and the steps handed back are taken together, in one turn of the event loop,
 * once `group.size` have gathered, `group.waitMs` after the first, or when nothing else is running. A
 * store that writes what arrives in one turn as one statement (the re-check saves) then writes a
 * dozen where it wrote a few, without holding any slot while the group gathers.
 */
import type { Clock } from "./time.ts";
import type { Logger } from "./log.ts";

export interface WorkSource<T> {
  /** Leases up to `limit` items due at `now`. */
  claim(limit: number, now: number): Promise<T[]>;
  /** When the next item becomes due, or null when there is none. */
  nextDueAt(): Promise<number | null>;
  /**
   * Works an item; may hand back its last step, to be taken with others (see `group`). `stopping` aborts
   * when the loop is told to stop: work still waiting for something may give up (its lease runs out).
   */
  run(item: T, stopping: AbortSignal): Promise<void | LastStep>;
  /** Fields identifying an item in logs. */
  describe(item: T): Record<string, unknown>;
  /**
   * Gives back, at stop(), the claimed items never started: their leases end now rather than when they
   * run out. Absent: they are due again when their leases run out.
   */
  release?(items: T[]): Promise<void>;
}

/** What an item left to do once its slot is free: taken later, together with others. */
export type LastStep = () => Promise<void>;

export interface WorkLoopOptions {
  name: string;
  clock: Clock;
  logger: Logger;
  concurrency: number;
  /** Longest sleep between looks at the store, so work added by other processes is picked up. */
  pollMs: number;
  /**
   * Items leased ahead of free slots (default 0). They wait in memory for a slot, so they must start
   * well within their lease; on stop() those not started are dropped and given back (WorkSource.release),
   * else due again when their lease runs out.
   */
  prefetch?: number;
  /**
   * Claim only once this many slots are free (or nothing is in flight): one claim per few items
   * finished rather than per item, when claiming costs more than an item. Default 1.
   */
  minBatch?: number;
  /** How last steps gather (see above); default: each taken as soon as it is handed back. */
  group?: { size: number; waitMs: number };
}

export class WorkLoop<T> {
  #running = false;
  #loop: Promise<void> | undefined;
  #inFlight = new Set<Promise<void>>();
  /** Claimed, waiting for a free slot. */
  #ready: T[] = [];
  #wake = new AbortController();
  #stopping = new AbortController();
  /** Last steps handed back, gathering. */
  #held: { item: T; step: LastStep }[] = [];
  #heldTimer: ReturnType<typeof setTimeout> | undefined;
  /** Last steps being taken. */
  #finishing = new Set<Promise<void>>();

  /**
   * Claimed items left waiting at which the loop claims again (0 without prefetch: it claims once they
   * are all started). Half a round of slots: no slot stands empty while a claim answers within about
   * half an item's run time.
   */
  readonly #lowWater: number;

  constructor(
    private readonly source: WorkSource<T>,
    private readonly options: WorkLoopOptions,
  ) {
    this.#lowWater = options.prefetch ? Math.floor(Math.min(options.prefetch, options.concurrency) / 2) : 0;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    if (this.#stopping.signal.aborted) this.#stopping = new AbortController();
    this.#loop = this.#run();
  }

  /** Stops claiming new work and waits for the work in flight to finish. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake.abort();
    this.#stopping.abort();
    await this.#loop;
    // Claimed but not started: dropped and given back; the loop may have added to them until now.
    const dropped = this.#ready;
    this.#ready = [];
    await Promise.all(this.#inFlight);
    await this.#finishAll();
    if (this.source.release) {
      // When the store cannot take them back, they come back as a dead process's do.
      await this.source.release(dropped).catch((error) => this.options.logger.warn(`${this.options.name}: leases not given back at stop`, { error }));
    }
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
    if (!this.#running && this.#stopping.signal.aborted) this.#stopping = new AbortController();
    let total = 0;
    for (;;) {
      const claimed = await this.#claim(this.options.concurrency);
      if (claimed === 0 && this.#inFlight.size === 0 && this.#held.length === 0 && this.#finishing.size === 0) return total;
      total += claimed;
      while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
      await this.#finishAll();
    }
  }

  async #run(): Promise<void> {
    const { clock, logger, pollMs, concurrency, name } = this.options;
    const prefetch = this.options.prefetch ?? 0;
    // The last claim came back full: more is likely due, and the next claim itself finds out, so the
    // loop does not first ask when work is due (a read per claim at saturation).
    let busy = false;
    // When the last answer said work falls due, and the loop slept until then undisturbed: it claims at
    // once rather than first asking again (a read per item when items fall due one at a time).
    let dueAt: number | null = null;
    while (this.#running) {
      // A fresh signal per round: a slot freeing with few items left in memory, or a poke(), from now
      // on cuts this round's sleep short.
      const wake = (this.#wake = new AbortController());
      let wait = pollMs;
      try {
        this.#startReady();
        const free = concurrency - this.#inFlight.size;
        // With prefetch, the next claim goes out while a few claimed items still wait: slots that free
        // up during the claim's round trip start those instead of standing empty until it answers.
        const runningLow = this.#lowWater > 0 && this.#inFlight.size > 0 && this.#ready.length <= this.#lowWater;
        const enough = free >= Math.min(this.options.minBatch ?? 1, concurrency) || (free > 0 && this.#inFlight.size === 0) || runningLow;
        // Ask when work is due first (a read), so an idle loop never takes a write lock to find nothing;
        // right after a full batch more is likely due, and the claim itself finds out.
        const known: boolean = dueAt !== null && dueAt <= clock.now();
        const guessed = enough && (busy || known);
        const next: number | null = enough ? (busy || known ? clock.now() : await this.source.nextDueAt()) : null;
        dueAt = null;
        if (next !== null && next <= clock.now()) {
          const claimed = await this.#claim(free + prefetch);
          busy = claimed === free + prefetch;
          if (busy) continue; // a full batch: more may be due right now
          if (guessed && claimed === 0) continue; // nothing was due after all: ask when something is
          if (claimed > 0) wait = 10; // the rest may be leased by others: look again soon
        } else if (next !== null) {
          wait = Math.min(pollMs, Math.max(next - clock.now(), 10));
          if (next - clock.now() <= wait) dueAt = next;
        }
      } catch (error) {
        logger.error(`${name}: could not claim work`, { error });
      }
      if (!this.#running) break;
      await clock.sleep(wait, wake.signal);
      // Woken early (a poke, a slot freed): what was due may have changed; it asks again.
      if (wake.signal.aborted) dueAt = null;
    }
  }

  async #claim(limit: number): Promise<number> {
    const items = await this.source.claim(limit, this.options.clock.now());
    this.#ready.push(...items);
    this.#startReady();
    return items.length;
  }

  /** Starts claimed items while slots are free; none once stop() was called (they are dropped). */
  #startReady(): void {
    if (this.#stopping.signal.aborted) return;
    while (this.#ready.length > 0 && this.#inFlight.size < this.options.concurrency) this.#start(this.#ready.shift()!);
  }

  #start(item: T): void {
    const task = this.source
      .run(item, this.#stopping.signal)
      .then(
        (step) => {
          if (typeof step === "function") this.#hold(item, step);
        },
        (error) => this.#failed(item, error),
      )
      .finally(() => {
        this.#inFlight.delete(task);
        // The freed slot goes to the next claimed item at once; the loop is woken only to claim more.
        this.#startReady();
        if (this.#ready.length <= this.#lowWater) this.#wake.abort();
        // Nothing running: nothing more will join the group soon.
        if (this.#inFlight.size === 0) this.#takeHeld();
      });
    this.#inFlight.add(task);
  }

  #failed(item: T, error: unknown): void {
    this.options.logger.error(`${this.options.name}: work failed`, { ...this.source.describe(item), error });
  }

  #hold(item: T, step: LastStep): void {
    const group = this.options.group;
    this.#held.push({ item, step });
    if (!group || this.#held.length >= group.size) this.#takeHeld();
    else this.#heldTimer ??= setTimeout(() => this.#takeHeld(), group.waitMs);
  }

  /** Takes every held last step now, all in this turn of the event loop. */
  #takeHeld(): void {
    clearTimeout(this.#heldTimer);
    this.#heldTimer = undefined;
    const held = this.#held;
    this.#held = [];
    for (const { item, step } of held) {
      const finishing: Promise<void> = Promise.resolve()
        .then(step)
        .catch((error) => this.#failed(item, error))
        .finally(() => this.#finishing.delete(finishing));
      this.#finishing.add(finishing);
    }
  }

  async #finishAll(): Promise<void> {
    this.#takeHeld();
    while (this.#finishing.size > 0) await Promise.all(this.#finishing);
  }
}
