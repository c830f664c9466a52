/**
 * Each process running checks says in the store, every BEAT_MS, that it is alive for ALIVE_MS more.
 * A process whose word has lapsed (killed, crashed, its machine gone) has its leased checks given back
 * at the next beat of any other: they are due about a minute after it stopped beating, not when their
 * leases run out (twelve minutes by default; see create_core.ts checkLeaseMs). A process that stops
 * cleanly gives its leases back itself (scheduler.ts) and its word is forgotten.
 *
 * A live process taken for dead (its beats held up for a minute: a machine suspended, a database
 * unanswering) loses nothing: the certificates it was checking may be checked by another at the same
 * time, and each save applies to the certificate as stored (a compare-and-swap on its version).
 */
import { SECOND, type Clock } from "../base/time.ts";
import type { Logger } from "../base/log.ts";
import type { Store } from "../store/ports.ts";

export const BEAT_MS = 15 * SECOND;
/** Four beats: one or two held up by a busy database are not taken for death. */
export const ALIVE_MS = 4 * BEAT_MS;

export interface Liveness {
  start(): void;
  stop(): Promise<void>;
}

export function createLiveness(options: { store: Store; owner: string; clock: Clock; logger: Logger }): Liveness {
  const { store, owner, clock, logger } = options;
  let stopping: AbortController | null = null;
  let loop: Promise<void> | undefined;

  async function beat(): Promise<void> {
    const now = clock.now();
    try {
      const given = await store.certificates.beat({ owner, now, aliveUntil: now + ALIVE_MS });
      if (given > 0) logger.warn("checks leased by a process that stopped answering are due again", { certificates: given });
    } catch (error) {
      logger.warn("could not say this process is alive; its leases run out as usual if it dies", { error });
    }
  }

  return {
    start() {
      if (stopping) return;
      const signal = (stopping = new AbortController()).signal;
      loop = (async () => {
        while (!signal.aborted) {
          await beat();
          await clock.sleep(BEAT_MS, signal);
        }
      })();
    },
    async stop() {
      if (!stopping) return;
      stopping.abort();
      stopping = null;
      await loop;
      await store.certificates.forgetBeat(owner).catch((error: unknown) => logger.warn("could not forget this process's word", { error }));
    },
  };
}
