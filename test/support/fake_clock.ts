/** A clock that moves only when told: sleeps resolve as time is advanced past them. */
import type { Clock } from "../../core/base/time.ts";

export class FakeClock implements Clock {
  #now: number;
  #sleepers: Array<{ until: number; resolve: () => void }> = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const sleeper = { until: this.#now + ms, resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  /** Moves time forward, waking every sleeper whose time has come. */
  advance(ms: number): void {
    this.set(this.#now + ms);
  }

  set(at: number): void {
    this.#now = at;
    const due = this.#sleepers.filter((s) => s.until <= at);
    this.#sleepers = this.#sleepers.filter((s) => s.until > at);
    for (const sleeper of due) sleeper.resolve();
  }
}
