/**
 * Event retention (CONTRACT §16): events and their deliveries older than CERTKEEPER_EVENT_RETENTION
 * are deleted, in batches so no single write holds the database for long; an event with a delivery
 * still pending is kept until it settles. Imports finished that long ago go too (their items are
 * kept nowhere else and would only grow), and so do the CT issuances recorded for watches that are
 * gone or of certificates expired that long ago. And the sign-in slowdown's counts once their window
 * is over, and expired sessions: written by anyone who can reach the sign-in form, they were deleted only
 * after someone signed in; and rate-limit windows long over (revoked keys' among them). Every process
 * may run it: deleting twice deletes nothing more.
 */
import type { Clock } from "../base/time.ts";
import { HOUR } from "../base/time.ts";
import type { Logger } from "../base/log.ts";
import type { Store } from "../store/ports.ts";
import { SIGN_IN_THROTTLE } from "../accounts/mod.ts";

const BATCH = 1000;
const EVERY_MS = HOUR;

export class EventRetention {
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<number> | undefined;

  constructor(private readonly options: { store: Store; clock: Clock; logger: Logger; retentionMs: number }) {}

  /** Deletes what is past retention now; resolves with how many events went. */
  runOnce(): Promise<number> {
    this.#running ??= this.#prune().finally(() => (this.#running = undefined));
    return this.#running;
  }

  start(): void {
    if (this.#timer) return;
    const run = () => this.runOnce().catch((error) => this.options.logger.warn("could not delete old events", { error }));
    void run();
    this.#timer = setInterval(run, EVERY_MS);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => {});
  }

  async #prune(): Promise<number> {
    const { store, clock, retentionMs, logger } = this.options;
    const before = clock.now() - retentionMs;
    let total = 0;
    for (;;) {
      const deleted = await store.events.prune({ before, limit: BATCH });
      total += deleted;
      if (deleted < BATCH) break;
    }
    while ((await store.imports.prune({ before, limit: 100 })) === 100);
    // The CT issuances recorded for watches (by the log follower, or by a search service's polls),
    // of certificates expired that long ago or of watches that are gone, whichever source is used.
    await store.ctLogs.pruneIssuances(before);
    const now = clock.now();
    await store.sessions.removeExpired(now);
    await store.signInAttempts.prune(now - Math.max(SIGN_IN_THROTTLE.email.windowMs, SIGN_IN_THROTTLE.address.windowMs));
    // Rate-limit windows (with a shared database: one row per key and signed-in user) an hour over.
    await store.rateLimits.prune(now - HOUR);
    if (total > 0) logger.info("old events deleted", { events: total, before: new Date(before).toISOString() });
    return total;
  }
}
