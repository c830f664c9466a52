/**
 * Clocks that move only when told: {@link FakeClock}, whose sleeps resolve as time is advanced past
 * them, and {@link SteppingClock}, whose wall clock can also be set (stepped) while sleeps run on
 * elapsed time, as setTimeout's do.
 */
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

/** A wall clock that can be set (now() jumps, back or forward) while sleeps run on elapsed time, as setTimeout's do. */
export class SteppingClock implements Clock {
  #wall: number;
  #elapsed = 0;
  #sleepers: Array<{ until: number; resolve: () => void }> = [];

  constructor(start: number) {
    this.#wall = start;
  }

  now(): number {
    return this.#wall;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      this.#sleepers.push({ until: this.#elapsed + Math.max(0, ms), resolve });
      signal?.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  /** Time passes: the wall clock and elapsed time alike. */
  advance(ms: number): void {
    this.#wall += ms;
    this.#elapsed += ms;
    const due = this.#sleepers.filter((s) => s.until <= this.#elapsed);
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#elapsed);
    for (const sleeper of due) sleeper.resolve();
  }

  /** The wall clock is set: no time passes. */
  step(ms: number): void {
    this.#wall += ms;
  }
}
