/**
 * Follows one log while the follower's lease holds: reads its head (verified), refuses a head smaller
 * than the last verified one or a second root for the same size, starts a log first seen at its size,
 * then reads its entries in runs. Each run's leaf hashes extend the compact range of what was read
 * before, and the run is only matched into events once that range is proven to begin the tree the
 * head signs; the run's position, compact range, issuances and events are then written in one
 * transaction. Failures are reported on the log and backed off (a 429's Retry-After honoured, and
 * kept, so that a restart or a failover waits it out too); the position never moves past entries that
 * were not verified and written.
 */
import type { Clock } from "../base/time.ts";
import { CLOCK_STEP_SLACK_MS, SECOND, MINUTE, DAY } from "../base/time.ts";
import { TimeSlice } from "../base/turns.ts";
import type { Logger } from "../base/log.ts";
import { logEventsRaised } from "../base/journal.ts";
import type { CtBatch, CtLogRecord, Store } from "../store/ports.ts";
import { LogFailure } from "./_log_http.ts";
import type { ChunkRead, LogReader } from "./log_reader.ts";
import type { WatchDomains } from "./entry_decode.ts";
import type { LogSpec } from "./log_list.ts";
import { CompactRange } from "./merkle.ts";
import { HeadError, type TreeHead } from "./tree_head.ts";
import { distinctMatches, matchesOf } from "./issued.ts";
import type { WatchIndexSource } from "./watch_index.ts";

/** The log's answers cannot be believed (a head or entries that do not verify, a shrinking tree). */
export class LogRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LogRefused";
  }
}

/** Another process took the follower's lease: this one stops. */
export class LeaseLost extends Error {
  constructor() {
    super("the follower's lease was taken by another process");
    this.name = "LeaseLost";
  }
}

/**
 * Matches written per run, at most: a run ends early at the chunk that reaches it, so that a log whose
 * entries name many watched domains (a burst of issuances, or a log that floods) is written, and its
 * events raised, a bounded piece at a time.
 */
const MAX_RUN_MATCHES = 256;

export interface LogFollowerContext {
  store: Store;
  clock: Clock;
  logger: Logger;
  owner: string;
  watches: WatchIndexSource;
  /** Entries matched and written per transaction, at most. */
  runEntries: number;
  /** Requests in flight for one log. */
  fetchesPerLog: number;
  /** How long a caught-up log waits before its head is read again. */
  headIntervalMs: number;
  /** The first wait after a failure, doubled at each further one up to 10 minutes. */
  firstBackoffMs: number;
  onEntries?: (url: string, count: number) => void;
  onEvents?: () => void;
  /** An autoMonitor watch recorded an issuance (its poll is due). */
  onRecorded?: () => void;
  onLeaseLost: () => void;
}

const MAX_BACKOFF_MS = 10 * MINUTE;
/** Chunks planned ahead at once (the feed asks the reader for this many entries' worth). */
const PLAN_ENTRIES = 4096;

export async function followLog(spec: LogSpec, reader: LogReader, context: LogFollowerContext, signal: AbortSignal): Promise<void> {
  const follower = new LogFollower(spec, reader, context, signal);
  await follower.run();
}

class LogFollower {
  #record: CtLogRecord | null = null;
  #range: CompactRange | null = null;
  #failures = 0;
  /** Writes to the store under way: run() ends after them, so a follower started after it reads what they wrote. */
  readonly #writes = new Set<Promise<unknown>>();

  constructor(
    private readonly spec: LogSpec,
    private readonly reader: LogReader,
    private readonly context: LogFollowerContext,
    private readonly signal: AbortSignal,
  ) {}

  async run(): Promise<void> {
    try {
      await this.#run();
    } finally {
      // A run's commit under way when the list changed lands before the new list's followers load
      // their positions: else they would start from the one before it, and find it moved.
      while (this.#writes.size > 0) await Promise.all(this.#writes);
    }
  }

  /** A write to the store, waited for by run() before it ends. */
  #tracked<T>(write: Promise<T>): Promise<T> {
    const forget = (): void => void this.#writes.delete(settled);
    const settled: Promise<void> = write.then(forget, forget);
    this.#writes.add(settled);
    return write;
  }

  async #run(): Promise<void> {
    const { clock, logger, store, owner } = this.context;
    // Stopping does not wait for a request under way (it may take 3 × CERTKEEPER_TLS_TIMEOUT): the
    // round is left to end on its own, and writes nothing once stopped.
    const stopped = new Promise<void>((resolve) => this.signal.addEventListener("abort", () => resolve(), { once: true }));
    // The wait the log asked for before a restart, or before this process took the lease over.
    const waitLeft = await this.#waitLeft();
    if (waitLeft > 0) await clock.sleep(waitLeft, this.signal);
    while (!this.signal.aborted) {
      const startedAt = clock.now();
      let wait: number;
      try {
        const round = this.#round();
        round.catch(() => {});
        await Promise.race([round, stopped]);
        if (this.signal.aborted) return;
        wait = Math.max(0, this.context.headIntervalMs - (clock.now() - startedAt));
        this.#failures = 0;
      } catch (error) {
        if (this.signal.aborted) return;
        if (error instanceof LeaseLost) {
          this.context.onLeaseLost();
          return;
        }
        this.#failures++;
        const known = error instanceof LogFailure || error instanceof HeadError || error instanceof LogRefused;
        const message = known ? `${(error as Error).message}` : "certkeeper could not follow this log (an internal error; see the server log)";
        if (!known) logger.error("CT log follower failed", { log: this.spec.url, error });
        else logger.warn("CT log skipped", { log: this.spec.url, error: message });
        wait = this.#backoff(error);
        try {
          // The error when it is new, and always when the log may be asked again: a restart waits that out too.
          const retryAt = clock.now() + wait;
          const patch = this.#record?.lastError !== message ? { lastError: message, retryAt } : { retryAt };
          if (!(await this.#tracked(store.ctLogs.updateLog(owner, this.spec.url, { ...patch, updatedAt: clock.now() })))) {
            this.context.onLeaseLost();
            return;
          }
          if (this.#record) Object.assign(this.#record, patch);
        } catch (storeError) {
          logger.warn("could not record a CT log's error", { log: this.spec.url, error: storeError });
        }
      }
      await clock.sleep(wait, this.signal);
    }
  }

  /**
   * What is left of the wait written after the log's last failure (at most a day); 0 when none or
   * unknown, or when it was written on a wall clock since set back (the log's record changed in the
   * future): a day back would otherwise keep the log unread a day.
   */
  async #waitLeft(): Promise<number> {
    try {
      const record = (this.#record ??= await this.#load());
      const now = this.context.clock.now();
      if (record.retryAt === null || record.updatedAt > now + CLOCK_STEP_SLACK_MS) return 0;
      return Math.min(Math.max(0, record.retryAt - now), DAY);
    } catch {
      return 0; // the first round meets the same failure and handles it
    }
  }

  /** How long to wait after a failure: the log's Retry-After, else doubling from the first backoff (5 s) to 10 min. */
  #backoff(error: unknown): number {
    // The log's Retry-After is honoured up to a day (beyond that, a value that cannot be meant).
    if (error instanceof LogFailure && error.retryAfterMs !== null) return Math.min(Math.max(error.retryAfterMs, SECOND), DAY);
    return Math.min(this.context.firstBackoffMs * 2 ** (this.#failures - 1), MAX_BACKOFF_MS);
  }

  /** One round: the head, then every entry up to it. */
  async #round(): Promise<void> {
    const { store, owner, clock } = this.context;
    const record = (this.#record ??= await this.#load());
    const head = await this.reader.head();
    // A round stopped while it waited (the list changed, the process stops) writes nothing more.
    if (this.signal.aborted) return;
    const root = Buffer.from(head.root).toString("base64");
    if (record.treeSize !== null && head.size < record.treeSize) {
      throw new LogRefused(`its new head (size ${head.size}) is smaller than the last verified one (size ${record.treeSize}): not believed`);
    }
    if (record.treeSize === head.size && record.rootHash !== root) {
      throw new LogRefused(`it signed two different roots for size ${head.size}: not believed`);
    }
    if (record.treeSize !== null && head.size > record.treeSize && record.position !== null && record.position < record.treeSize) {
      // Behind the last verified head when a larger one comes: the entries up to the verified head
      // are read and proven against it first, so the new head is believed only as the extension of
      // that tree (RFC 6962 §5.3, static-ct-api's "consistency with the current checkpoint"). A log
      // that forked meanwhile (a split view) is refused there, its last verified head kept.
      this.#range ??= CompactRange.decode(record.position, record.compactRange);
      await this.#readTo({ size: record.treeSize, root: new Uint8Array(Buffer.from(record.rootHash!, "base64")), timestamp: record.headTimestamp ?? 0 });
      if (this.signal.aborted) return;
    }
    if (record.treeSize !== null && record.treeSize > 0 && head.size > record.treeSize && record.position === record.treeSize) {
      // Caught up with the last verified head when a larger one comes: it is stored (and shown) only
      // once the leaves read so far are proven the beginning of its tree. A forked head is refused
      // here, before it could take the verified one's place.
      this.#range ??= CompactRange.decode(record.position, record.compactRange);
      const extends_ = await this.reader.consistent(this.#range, head);
      if (this.signal.aborted) return;
      if (!extends_) throw new LogRefused(`its new head (size ${head.size}) does not extend the last verified one (size ${record.treeSize}): not believed`);
    }
    if (record.treeSize !== head.size) {
      const patch = { treeSize: head.size, rootHash: root, headTimestamp: head.timestamp, updatedAt: clock.now() };
      if (!(await this.#tracked(store.ctLogs.updateLog(owner, this.spec.url, patch)))) throw new LeaseLost();
      Object.assign(record, patch);
    }
    if (record.position === null) {
      const range = await this.reader.compactRangeAt(head);
      if (this.signal.aborted) return;
      const start = { position: head.size, compactRange: range.encode(), updatedAt: clock.now() };
      if (!(await this.#tracked(store.ctLogs.startLog(owner, this.spec.url, start)))) throw new LeaseLost();
      Object.assign(record, start);
      this.#range = range;
    }
    this.#range ??= CompactRange.decode(record.position!, record.compactRange);
    if (record.position! < head.size) await this.#readTo(head);
    if (this.signal.aborted) return;
    if (record.lastError !== null) {
      if (!(await this.#tracked(store.ctLogs.updateLog(owner, this.spec.url, { lastError: null, updatedAt: clock.now() })))) throw new LeaseLost();
      record.lastError = null;
    }
  }

  async #load(): Promise<CtLogRecord> {
    const record = (await this.context.store.ctLogs.list()).find((log) => log.url === this.spec.url);
    if (!record) throw new LeaseLost(); // setListed put it there while the lease held
    return record;
  }

  /**
   * Reads, verifies, matches and writes runs of entries from the position to the head. A run is
   * verified and written while the next one is read; runs are written in order, and none after one
   * that failed.
   */
  async #readTo(head: TreeHead): Promise<void> {
    const { watches, runEntries, clock } = this.context;
    const record = this.#record!;
    const feed = new ChunkFeed(this.reader, head, record.position!, this.context.fetchesPerLog, () => watches.current());
    let range = this.#range!;
    let written: Promise<void> = Promise.resolve();
    let failed = false;
    try {
      while (range.size < head.size && !failed) {
        if (this.signal.aborted) break;
        const from = range.size;
        range = range.clone();
        const matches: CtBatch["matches"] = [];
        while (range.size < head.size && range.size - from < runEntries && matches.length < MAX_RUN_MATCHES) {
          const chunk = await feed.take();
          if (this.signal.aborted) break;
          let decoded = chunk.decoded;
          // The watches the chunk was decoded against may predate the freshness its timestamps need.
          const index = await watches.at(decoded.latest, this.signal);
          if (index.version !== decoded.version) decoded = await chunk.redo(index);
          for (const root of decoded.roots) range.appendSubtree(root.hash, root.size);
          // Chunks already fetched follow each other as microtasks: entries that name watched domains
          // (each match an issuance and an event to build, of up to a thousand names) are matched a few
          // milliseconds at a time, the event loop serving a turn between.
          const slice = new TimeSlice();
          for (const candidate of decoded.candidates) {
            const matched = index.match(candidate.fields.dnsNames);
            if (matched.length > 0) matches.push(...matchesOf(candidate, matched, clock.now()));
            await slice.pause();
          }
        }
        if (this.signal.aborted) break;
        const run = range;
        const previous = written;
        written = (async () => {
          const verified = await this.reader.consistent(run, head);
          await previous;
          if (!verified) throw new LogRefused(`its entries ${from}–${run.size - 1} do not match its signed tree head (size ${head.size}): not believed`);
          await this.#write(run, from, distinctMatches(matches));
        })();
        written.catch(() => (failed = true));
      }
    } finally {
      // A run being written is written (or fails) before anything else is read from this log.
      await written.catch(() => {});
    }
    await written;
  }

  /** Writes a verified run: the log's new position and compact range, its matches and events. */
  async #write(range: CompactRange, from: number, matches: CtBatch["matches"]): Promise<void> {
    const { store, owner, clock } = this.context;
    if (this.signal.aborted) return;
    const batch: CtBatch = { owner, url: this.spec.url, from, position: range.size, compactRange: range.encode(), matches, updatedAt: clock.now() };
    const saved = await this.#tracked(store.ctLogs.commit(batch));
    if (!saved.saved) throw new LeaseLost();
    const record = this.#record!;
    record.position = range.size;
    record.compactRange = batch.compactRange;
    this.#range = range;
    // A log that failed and answers again is followed again from its first run written, not once its
    // whole backlog is read (hours of it, on a large log).
    if (record.lastError !== null) {
      if (!(await this.#tracked(store.ctLogs.updateLog(owner, this.spec.url, { lastError: null, updatedAt: clock.now() })))) throw new LeaseLost();
      record.lastError = null;
    }
    this.context.onEntries?.(this.spec.url, range.size - from);
    // Each issuance announced is logged as every event is (CONTRACT §23).
    logEventsRaised(this.context.logger, saved.events);
    if (saved.events.length > 0) this.context.onEvents?.();
    if (matches.length > 0) this.context.onRecorded?.();
  }
}

/** A log's chunks in order, `depth` of them requested ahead, each decoded against the watches of when it was asked. */
class ChunkFeed {
  #planned: Array<[number, number]> = [];
  #requested: Array<{ start: number; end: number; read: Promise<ChunkRead> }> = [];
  #next: number;

  constructor(
    private readonly reader: LogReader,
    private readonly head: TreeHead,
    from: number,
    private readonly depth: number,
    private readonly watches: () => WatchDomains,
  ) {
    this.#next = from;
  }

  /** The next chunk (all its entries, or a LogFailure). */
  async take(): Promise<ChunkRead> {
    this.#fill();
    const chunk = this.#requested.shift();
    if (!chunk) throw new Error("no entries left before the head");
    const read = await chunk.read;
    this.#fill();
    if (read.decoded.from !== chunk.start || read.decoded.to !== chunk.end) {
      throw new LogFailure(`the log answered entries ${read.decoded.from}–${read.decoded.to - 1} for ${chunk.start}–${chunk.end - 1}`);
    }
    return read;
  }

  #fill(): void {
    while (this.#requested.length < this.depth) {
      if (this.#planned.length === 0) {
        if (this.#next >= this.head.size) return;
        this.#planned = this.reader.chunks(this.#next, Math.min(this.head.size, this.#next + PLAN_ENTRIES));
        this.#next = this.#planned.at(-1)![1];
      }
      const [start, end] = this.#planned.shift()!;
      const read = this.reader.entries(start, end, this.head, this.watches());
      // Taken in order by take(); those left when the run stops must not surface as unhandled.
      read.catch(() => {});
      this.#requested.push({ start, end, read });
    }
  }
}
