/**
 * The CT log follower (CONTRACT §21): one per installation, in whichever process holds its lease in
 * the database (renewed a quarter of the lease at a time; another process takes it over once it runs
 * out). While the lease holds, it reads the log list (CERTKEEPER_CT_LOG_LIST, again every few hours)
 * and follows each listed log (log_follower.ts); positions live in the database, so a new holder goes
 * on where the last one stopped.
 *
 * @example
 * const follower = new CtFollower({ store, clock, logger, fetcher, owner, logList, requestTimeoutMs, leaseMs });
 * follower.start();
 * // …
 * await follower.stop();
 */
import { readFile } from "node:fs/promises";
import type { Clock } from "../base/time.ts";
import { DAY, HOUR, latestLiveLease, MINUTE, SECOND } from "../base/time.ts";
import type { Logger } from "../base/log.ts";
import { maskUrl, maskUrlsIn } from "../config/mod.ts";
import type { Store } from "../store/ports.ts";
import type { HttpFetcher } from "../net/mod.ts";
import { getFromLog, type LogHttp } from "./_log_http.ts";
import { parseLogList, type LogList, type LogSpec } from "./log_list.ts";
import { followLog } from "./log_follower.ts";
import { Rfc6962Reader } from "./rfc6962_reader.ts";
import { TileReader } from "./tile_reader.ts";
import { WatchIndexSource } from "./watch_index.ts";
import { LocalEntryReader, type EntryReader } from "./entry_decode.ts";

export interface CtFollowerOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Reads the logs and the list (the operator's choice: not under the private-address rule). */
  fetcher: HttpFetcher;
  /** This process's lease owner name. */
  owner: string;
  /** CERTKEEPER_CT_LOG_LIST: an https URL, or a file path. */
  logList: string;
  /** One request's limit (CERTKEEPER_TLS_TIMEOUT × 3). */
  requestTimeoutMs: number;
  /** How long the lease lasts unrenewed: a dead holder's follower is taken over after it. */
  leaseMs: number;
  /** How long a caught-up log waits before its head is read again (default 30 s). */
  headIntervalMs?: number;
  /** How often the log list is read again (default 6 h). */
  listIntervalMs?: number;
  /** How long after an entry's timestamp its watches are read (default 5 s): see WatchIndexSource. */
  watchSettleMs?: number;
  /** Entries verified and written per transaction, at most (default 4096). */
  runEntries?: number;
  /** Requests in flight per log (default 4). */
  fetchesPerLog?: number;
  /** The first wait after a log fails (default 5 s), doubled at each further failure up to 10 minutes. */
  firstBackoffMs?: number;
  /** Where the logs' entries are fetched and decoded (default: on the event loop, with `fetcher`). */
  entryReader?: EntryReader;
  /**
   * Recorded issuances are forgotten once their certificate expired this long ago (and when their
   * watch is deleted), at each reading of the list; default 90 days (CERTKEEPER_EVENT_RETENTION's).
   */
  issuanceRetentionMs?: number;
  /** Entries read, verified and matched (for certkeeper_ct_entries_total). */
  onEntries?: (url: string, count: number) => void;
  /** Events were raised (their deliveries are due). */
  onEvents?: () => void;
  /** An autoMonitor watch recorded an issuance (its poll is due). */
  onRecorded?: () => void;
}

/** The largest log list read (Google's is a few hundred KB). */
const MAX_LIST_BYTES = 16 * 1024 * 1024;
const LIST_RETRY_MS = MINUTE;

export class CtFollower {
  #stop = new AbortController();
  #loop: Promise<void> | undefined;
  /** The session while this process holds the lease. */
  #session: { abort: AbortController; done: Promise<void> } | null = null;
  readonly #watches: WatchIndexSource;

  constructor(private readonly options: CtFollowerOptions) {
    this.#watches = new WatchIndexSource({
      store: options.store.ctLogs,
      clock: options.clock,
      settleMs: options.watchSettleMs ?? 5 * SECOND,
      refreshMs: SECOND,
    });
  }

  start(): void {
    if (this.#loop) return;
    this.#stop = new AbortController();
    this.#loop = this.#leaseLoop();
  }

  /** Stops following (runs under way finish their write) and gives the lease up. */
  async stop(): Promise<void> {
    if (!this.#loop) return;
    this.#stop.abort();
    await this.#loop;
    this.#loop = undefined;
  }

  /** Reads the log list named by CERTKEEPER_CT_LOG_LIST. */
  async readList(): Promise<LogList> {
    const { logList, fetcher, requestTimeoutMs } = this.options;
    if (/^https?:\/\//i.test(logList)) {
      const body = await getFromLog({ fetcher, timeoutMs: requestTimeoutMs }, logList, { maxBytes: MAX_LIST_BYTES, accept: "application/json" });
      return parseLogList(Buffer.from(body).toString("utf8"));
    }
    return parseLogList(await readFile(logList, "utf8"));
  }

  async #leaseLoop(): Promise<void> {
    const { store, clock, logger, owner, leaseMs } = this.options;
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      if (this.#session?.abort.signal.aborted) await this.#endSession(); // its lease was taken over
      let held = false;
      try {
        const now = clock.now();
        // A lease ending later than any live holder's was taken on a wall clock since set back, by a
        // process that is gone: it is not waited out.
        held = await store.ctLogs.leaseFollower({ owner, now, leaseUntil: now + leaseMs, latest: latestLiveLease(now, leaseMs) });
      } catch (error) {
        // Keep following: every write checks the lease, so a holder that cannot renew stops at its next one.
        logger.warn("could not renew the CT follower's lease", { error });
        held = this.#session !== null;
      }
      if (held && !this.#session) {
        logger.info("following the CT logs in this process");
        const abort = new AbortController();
        this.#session = { abort, done: this.#follow(abort.signal) };
      } else if (!held && this.#session) {
        await this.#endSession();
      }
      await clock.sleep(leaseMs / 4, stop);
    }
    await this.#endSession();
    await store.ctLogs.releaseFollower(owner).catch((error) => logger.warn("could not release the CT follower's lease", { error }));
  }

  async #endSession(): Promise<void> {
    const session = this.#session;
    if (!session) return;
    session.abort.abort();
    await session.done;
    this.#session = null;
  }

  /** While the lease holds: the list, and a follower per listed log (restarted when the list changes). */
  async #follow(signal: AbortSignal): Promise<void> {
    const { store, clock, logger, owner } = this.options;
    let current = "";
    let logs: { abort: AbortController; done: Promise<unknown> } | null = null;
    const lost = () => {
      logger.warn("the CT follower's lease was taken over by another process");
      this.#session?.abort.abort();
    };
    while (!signal.aborted) {
      let wait = this.options.listIntervalMs ?? 6 * HOUR;
      try {
        const pruned = await store.ctLogs.pruneIssuances(clock.now() - (this.options.issuanceRetentionMs ?? 90 * DAY));
        if (pruned > 0) logger.debug("forgot recorded CT issuances of expired certificates and deleted watches", { pruned });
      } catch (error) {
        logger.warn("could not forget old CT issuances", { error });
      }
      try {
        // Stopping does not wait for a list that is slow to come.
        const reading = this.readList();
        reading.catch(() => {});
        const list = await Promise.race([reading, aborted(signal)]);
        if (!list) break;
        for (const skipped of list.skipped) logger.warn("a log of the CT log list cannot be followed", skipped);
        const signature = JSON.stringify(list.logs.map((log) => [log.url, log.kind, log.keyBase64, log.origin]));
        if (signature !== current) {
          if (logs) {
            logs.abort.abort();
            await logs.done;
          }
          if (!(await store.ctLogs.setListed(owner, list.logs, clock.now()))) {
            lost();
            return;
          }
          current = signature;
          if (list.logs.length > 0) this.options.entryReader?.prepare?.();
          const abort = new AbortController();
          signal.addEventListener("abort", () => abort.abort(), { once: true });
          logs = { abort, done: Promise.all(list.logs.map((spec) => this.#followOne(spec, abort.signal, lost))) };
        }
      } catch (error) {
        // The list's URL may carry a token or a password (the settings line masks them as well).
        logger.warn("could not read the CT log list", { list: maskUrl(this.options.logList), error: maskUrlsIn((error as Error).message) });
        if (!logs) wait = LIST_RETRY_MS;
      }
      await clock.sleep(wait, signal);
    }
    if (logs) {
      logs.abort.abort();
      await logs.done;
    }
  }

  #followOne(spec: LogSpec, signal: AbortSignal, lost: () => void): Promise<void> {
    const { store, clock, logger, owner, fetcher, requestTimeoutMs } = this.options;
    const http: LogHttp = { fetcher, timeoutMs: requestTimeoutMs };
    const entries = this.options.entryReader ?? new LocalEntryReader(http);
    const reader = spec.kind === "rfc6962" ? new Rfc6962Reader(spec, http, entries) : new TileReader(spec, http, entries);
    return followLog(
      spec,
      reader,
      {
        store,
        clock,
        logger,
        owner,
        watches: this.#watches,
        runEntries: this.options.runEntries ?? 4096,
        fetchesPerLog: this.options.fetchesPerLog ?? 4,
        headIntervalMs: this.options.headIntervalMs ?? 30 * SECOND,
        firstBackoffMs: this.options.firstBackoffMs ?? 5 * SECOND,
        onEntries: this.options.onEntries,
        onEvents: this.options.onEvents,
        onRecorded: this.options.onRecorded,
        onLeaseLost: lost,
      },
      signal,
    ).catch((error) => logger.error("CT log follower stopped", { log: spec.url, error }));
  }
}

/** Resolves with null once `signal` aborts. */
function aborted(signal: AbortSignal): Promise<null> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(null);
    else signal.addEventListener("abort", () => resolve(null), { once: true });
  });
}
