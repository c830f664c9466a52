/**
 * Each process running checks says a new word in the store every BEAT_MS (a counter, not a time), and
 * reads the others' last words. A process whose word has not changed over LAPSE_BEATS of this one's
 * beats (about a minute: killed, crashed, its machine gone, or held up that long) has its leased checks
 * given back, due at once, instead of when their leases run out (twelve minutes by default; see
 * create_core.ts checkLeaseMs). The judgement runs on the reader's own elapsed time, so processes whose
 * wall clocks disagree, or are set, do not take each other for dead. A process that stops cleanly gives
 * its leases back itself (scheduler.ts) and its word is forgotten; one whose give-back failed keeps its
 * word, which lapses, and the others give its leases back.
 *
 * A live process taken for dead (its beats held up for a minute: a machine suspended, a database not
 * answering) loses nothing: the certificates it was checking may be checked by another at the same
 * time, and each save applies to the certificate as stored (a compare-and-swap on its version).
 */
import { SECOND, type Clock } from "../base/time.ts";
import type { Logger } from "../base/log.ts";
import type { Store } from "../store/ports.ts";

export const BEAT_MS = 15 * SECOND;
/** Four of this process's beats with no new word from another: one or two held up by a busy database are not death. */
export const LAPSE_BEATS = 4;

export interface Liveness {
  start(): void;
  stop(): Promise<void>;
}

export function createLiveness(options: { store: Store; owner: string; clock: Clock; logger: Logger }): Liveness {
  const { store, owner, clock, logger } = options;
  /** Each other process's last word, and how many of this process's beats have seen it unchanged. */
  const heard = new Map<string, { word: number; unchanged: number }>();
  let running: { stopping: AbortController; loop: Promise<void> } | null = null;

  async function beat(): Promise<void> {
    try {
      const words = await store.certificates.beat(owner);
      const lapsed: Array<{ owner: string; word: number }> = [];
      const present = new Set<string>();
      for (const { owner: other, word } of words) {
        present.add(other);
        const last = heard.get(other);
        if (last?.word !== word) heard.set(other, { word, unchanged: 0 });
        else if (++last.unchanged >= LAPSE_BEATS) lapsed.push({ owner: other, word });
      }
      for (const other of heard.keys()) if (!present.has(other)) heard.delete(other);
      if (lapsed.length === 0) return;
      const given = await store.certificates.giveBackLapsed(lapsed, clock.now());
      for (const { owner: other } of lapsed) heard.delete(other);
      if (given > 0) logger.warn("checks leased by a process that stopped answering are due again", { certificates: given });
    } catch (error) {
      logger.warn("could not say this process is alive; its leases run out as usual if it dies", { error });
    }
  }

  return {
    start() {
      // Started again while a stop is under way: a new run, whose word that stop leaves alone.
      if (running && !running.stopping.signal.aborted) return;
      const stopping = new AbortController();
      const loop = (async () => {
        while (!stopping.signal.aborted) {
          await beat();
          await clock.sleep(BEAT_MS, stopping.signal);
        }
      })();
      running = { stopping, loop };
    },
    async stop() {
      const stopped = running;
      if (!stopped) return;
      stopped.stopping.abort();
      await stopped.loop;
      // Started again meanwhile: the word is the new run's.
      if (running !== stopped) return;
      running = null;
      heard.clear();
      await store.certificates.forgetBeat(owner, clock.now()).catch((error: unknown) => logger.warn("could not forget this process's word", { error }));
    },
  };
}
