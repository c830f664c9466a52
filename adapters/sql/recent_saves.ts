/**
 * The certificates this process saved lately and will lease again soon, as stored: a lease then reads
 * only each due row's id, version and next check, and takes the rest from here when the version is the
 * one saved. Every write to a certificate's content raises its version (a save, a settings change, by
 * any process), and the two columns written without it (the next check and the lease) are read with the
 * id, so a record taken from here is the row as a fresh read would give it.
 *
 * At saturation that spares the database thread reading and handing over each leased row's 2.5 KB (the
 * details, endpoints and alert memory as JSON text) and the event loop parsing it again. Only saves
 * whose next check is due within HORIZON_MS of the check are kept, at most MAX_ENTRIES of them: a fleet
 * checked every few hours keeps next to nothing here, and its leases read whole rows as before.
 */
import type { CertificateRecord } from "../../core/base/mod.ts";

/** A save is kept when its next check is at most this long after the check. */
const HORIZON_MS = 5 * 60_000;
const MAX_ENTRIES = 4096;

interface Entry {
  /** The record as saved; its stored version is `version`. */
  record: CertificateRecord;
  version: number;
  /** When it was checked. */
  keptAt: number;
}

export class RecentSaves {
  #entries = new Map<string, Entry>();

  get size(): number {
    return this.#entries.size;
  }

  /** After `record` (written over `record.version`) was saved: the stored version is now one more. */
  keep(record: CertificateRecord): void {
    const at = record.lastCheckedAt;
    if (record.nextCheckAt - at > HORIZON_MS) return;
    this.#entries.delete(record.id);
    this.#entries.set(record.id, { record, version: record.version + 1, keptAt: at });
    // Oldest first: those past the horizon (deleted certificates, taken over by another process) and
    // any beyond the bound go.
    for (const [id, entry] of this.#entries) {
      if (this.#entries.size <= MAX_ENTRIES && at - entry.keptAt <= 2 * HORIZON_MS) break;
      this.#entries.delete(id);
    }
  }

  /**
   * The stored record for a leased row of `id` at `version` whose next check was `nextCheckAt`, if it is
   * the one kept. Taken either way: its next save keeps it again.
   */
  take(id: string, version: number, nextCheckAt: number): CertificateRecord | undefined {
    const record = this.#remove(id, version);
    return record ? { ...record, version, nextCheckAt } : undefined;
  }

  /** Drops the entry of `id`; true when it held `version` (what take() would have handed out). */
  drop(id: string, version: number): boolean {
    return this.#remove(id, version) !== undefined;
  }

  /** Removes the entry of `id`, returning its record if it was kept at `version`. */
  #remove(id: string, version: number): CertificateRecord | undefined {
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    this.#entries.delete(id);
    return entry.version === version ? entry.record : undefined;
  }

  /** Forgets `id` (deleted). */
  forget(id: string): void {
    this.#entries.delete(id);
  }
}
