/**
 * Certificates as last read, parsed, by id, with the version and next check they were read at: a list
 * reads each row's id, version and next check first, and whole only the rows that moved since (every
 * write to a certificate's content raises its version, by any process; the next check is the one
 * column written without it that a record shows). A page of 100 read after every write (a running
 * server saves re-checks many times a second, and each write empties core's read cache) then costs
 * the rows that changed, not 100 rows of 2.5 KB handed over by the database thread and parsed on the
 * event loop (5.8 ms of CPU a page, measured, against 0.5 ms from the cache). The records are
 * shared, so frozen; each keeps its rendering (core/certificates/present.ts) while unchanged.
 */
import type { CertificateRecord } from "../../core/base/mod.ts";
import { freeze } from "../../core/store/mod.ts";

/** Records kept at most; beyond, the least recently read go. */
const MAX_ENTRIES = 5000;

export class ParsedRows {
  #records = new Map<string, CertificateRecord>();

  /** The record of `id` as stored at `version` with next check `nextCheckAt`, if it is the one kept. */
  get(id: string, version: number, nextCheckAt: number): CertificateRecord | undefined {
    const record = this.#records.get(id);
    if (!record || record.version !== version || record.nextCheckAt !== nextCheckAt) return undefined;
    // Most recently read last: the oldest go first when the map is full.
    this.#records.delete(id);
    this.#records.set(id, record);
    return record;
  }

  /** Keeps a record just read whole; returns it, frozen. */
  keep(record: CertificateRecord): CertificateRecord {
    this.#records.delete(record.id);
    this.#records.set(record.id, freeze(record));
    while (this.#records.size > MAX_ENTRIES) this.#records.delete(this.#records.keys().next().value!);
    return record;
  }

  forget(id: string): void {
    this.#records.delete(id);
  }
}
