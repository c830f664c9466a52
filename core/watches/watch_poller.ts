/**
 * Polls Certificate Transparency for every watch (CONTRACT §15), each at most once per
 * CERTKEEPER_CT_INTERVAL, under a lease like the scheduler's. Each page's cursor and the events it
 * raised are saved together and only while the lease holds, so each issuance is recorded once across
 * restarts and processes. A failing CT service becomes `lastError` and is asked again at the next
 * interval (or after its Retry-After): never more than one request per watch at a time, never an alert.
 */
import { CLOCK_STEP_SLACK_MS, clockStepWatch, type Clock } from "../base/time.ts";
import type { Logger } from "../base/log.ts";
import { newId } from "../base/ids.ts";
import type { EventRecord, WatchRecord } from "../base/records.ts";
import type { CtIssuanceRecord, Store } from "../store/ports.ts";
import { WorkLoop } from "../base/work_loop.ts";
import { CtFailure } from "./ct_client.ts";
import { issuedEventData, nameAttributes, namesToMonitor, recordedIssuance, type Issuance } from "./issuance.ts";
import { noteIssuances } from "../deployment/mod.ts";
import { logEventsRaised } from "../base/journal.ts";

/** Pages read in one poll; a longer history continues at once in the next poll. */
const MAX_PAGES_PER_POLL = 200;
/** Names autoMonitor keeps waiting to add, at most. */
const MAX_PENDING_NAMES = 1000;

export type PollResult = "ok" | "failed" | "rate_limited";

/** Where a watch's issuances come from, a page at a time: the CT search service (CtClient), or those the log follower recorded. */
export interface IssuanceSource {
  /** One page after `after` (null: from the start), oldest first; throws CtFailure when it cannot answer. */
  page(query: { watchId: string; domain: string; includeSubdomains: boolean; after: string | null }): Promise<Issuance[]>;
}

export interface WatchPollerOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  client: IssuanceSource;
  /**
   * False when the source already recorded the issuances, counted them and raised their events (the
   * log follower, CONTRACT §21): polls then only add autoMonitor's names. Default true.
   */
  recordsIssuances?: boolean;
  intervalMs: number;
  owner: string;
  leaseMs: number;
  pollMs: number;
  /**
   * Adds `name` on port 443 to the watch's scope as POST /v1/certificates would; resolves false when
   * it is already monitored, throws an Error whose message says why it could not be added.
   */
  addCertificate: (watch: WatchRecord, name: string) => Promise<boolean>;
  onPoll?: (result: PollResult) => void;
  /** Called after a page raised events (their deliveries are due now). */
  onEvents?: () => void;
}

export class WatchPoller {
  readonly loop: WorkLoop<WatchRecord>;

  constructor(private readonly options: WatchPollerOptions) {
    const { store, clock, logger, owner, leaseMs, pollMs, intervalMs } = options;
    // A next poll further ahead than this process plans any, after a last poll in the future, was planned
    // on a wall clock since set back (a day back would hold every watch's poll back a day). A Retry-After
    // longer than the interval, given on a clock since set back, is not waited out then: the service
    // answers 429 again if it still wants to.
    const latestPlanned = Math.max(intervalMs, leaseMs) + CLOCK_STEP_SLACK_MS;
    const pullForward = clockStepWatch(clock, async (now) => {
      // Not this process's polls under way: each saves its own next poll, planned on the new clock.
      const moved = await store.watches.pullForwardPolls({ now, latest: now + latestPlanned, polledAfter: now + CLOCK_STEP_SLACK_MS, owner });
      if (moved > 0) logger.warn("watch polls planned on a clock since set back are due now", { watches: moved });
    });
    this.loop = new WorkLoop<WatchRecord>(
      {
        claim: async (limit, now) => {
          await pullForward();
          return store.watches.claimDue({ owner, now, leaseUntil: now + leaseMs, limit });
        },
        nextDueAt: async () => {
          await pullForward();
          return store.watches.nextPollAt();
        },
        run: async (watch) => {
          await this.poll(watch);
        },
        describe: (watch) => ({ watchId: watch.id }),
      },
      { name: "watches", clock, logger, concurrency: 2, pollMs },
    );
  }

  /** Polls one leased watch to the end of its new issuances. */
  async poll(watch: WatchRecord): Promise<PollResult> {
    const { store, clock, client, intervalMs, owner, leaseMs } = this.options;
    const records = this.options.recordsIssuances ?? true;
    const source: CursorSource = records ? "search" : "logs";
    // A cursor kept under the other source counts differently: start over in this one. Back on the
    // search service, that first pass is silent (no events, no names to monitor), as a new watch's
    // baseline is, so its past issuances are not announced again.
    const kept = readCursor(watch.cursor, source);
    let cursor = kept.cursor;
    const silent = kept.switched && records;
    // Such a pass is a baseline: one that needs more than a poll goes on silently in the next.
    const baselineDone = watch.baselineDone && !silent;
    let pending = watch.autoMonitor ? [...watch.pendingNames] : [];
    // autoMonitor turned on after issuances were read without it: their names are read again, up to
    // where the cursor was then (a names pass: no events, nothing counted), besides the new ones.
    let names: NamesState = !watch.autoMonitor ? "missing" : kept.names === "missing" && cursor !== null && !silent ? { until: cursor, at: null } : kept.names === "missing" ? "collected" : kept.names;
    let pages = 0;
    /** Issuance ids returned in this poll. */
    const seen = new Set<string>();
    /** When the lease was last extended (the claim, or a progress save). */
    let renewedAt = clock.now();
    /** The watch's issuancesSeen as this poll left it: more at the end means the follower recorded some meanwhile. */
    let counted = watch.issuancesSeen;
    const save = async (
      progress: { newIssuances: number; events: EventRecord[]; done: false } | { done: true; lastError: string | null; nextPollAt: number; baselineDone: boolean; rateLimited?: boolean },
    ) => {
      const now = clock.now();
      const saved = await store.watches.savePoll(
        progress.done
          ? {
              id: watch.id,
              owner,
              cursor: writeCursor(cursor, source, names),
              newIssuances: 0,
              baselineDone: progress.baselineDone,
              pendingNames: pending,
              lastPolledAt: now,
              lastError: progress.lastError,
              nextPollAt: progress.nextPollAt,
              release: true,
              updatedAt: now,
              // Under the logs, issuances the follower recorded while this poll held the lease (its
              // commit could not bring the poll forward then) make the next poll due at once: this one
              // may have read its pages before them. Not an interval later, nor the deployment's seenAt.
              ...(records ? {} : { issuancesSeen: counted }),
              ...(progress.rateLimited ? { rateLimited: true } : {}),
            }
          : {
              id: watch.id,
              owner,
              cursor: writeCursor(cursor, source, names),
              newIssuances: progress.newIssuances,
              baselineDone,
              pendingNames: pending,
              lastPolledAt: watch.lastPolledAt,
              lastError: watch.lastError,
              nextPollAt: now + leaseMs,
              release: false,
              updatedAt: watch.updatedAt,
            },
        progress.done ? [] : progress.events,
      );
      if (saved && !progress.done) logEventsRaised(this.options.logger, progress.events);
      if (saved && !progress.done) renewedAt = now;
      if (saved && !progress.done) counted += progress.newIssuances;
      if (saved && !progress.done && progress.events.length > 0) this.options.onEvents?.();
      return saved;
    };

    for (;;) {
      if (pages === MAX_PAGES_PER_POLL) {
        // A long history: keep the baseline open and continue right away in a fresh poll.
        await save({ done: true, lastError: null, nextPollAt: clock.now(), baselineDone });
        return this.#report("ok");
      }
      let issuances;
      try {
        issuances = await client.page({ watchId: watch.id, domain: watch.domain, includeSubdomains: watch.includeSubdomains, after: cursor });
      } catch (error) {
        if (!(error instanceof CtFailure)) throw error;
        const wait = Math.max(error.retryAfterMs ?? intervalMs, 1000);
        await save({ done: true, lastError: error.message, nextPollAt: clock.now() + wait, baselineDone, rateLimited: error.retryAfterMs !== null });
        this.options.logger.warn("Certificate Transparency poll failed", { watchId: watch.id, error: error.message });
        return this.#report(error.retryAfterMs !== null ? "rate_limited" : "failed");
      }
      pages++;
      if (issuances.length === 0) break;
      const back = wentBack(issuances, cursor, seen);
      if (back) {
        // A service that ignores `after` would page forever and announce old issuances again; one whose
        // ids go back within a page would leave the cursor behind an issuance announced, which the
        // next poll would bring (and announce) again. Nothing of such a page is taken.
        const message = back;
        await save({ done: true, lastError: message, nextPollAt: clock.now() + intervalMs, baselineDone });
        this.options.logger.warn("Certificate Transparency poll failed", { watchId: watch.id, error: message });
        return this.#report("failed");
      }
      const now = clock.now();
      // Issuances of a monitored certificate's names wait to be served by every endpoint (CONTRACT §20),
      // whichever source recorded them. Noted before the page is saved: a page read again after a
      // crash notes nothing twice.
      await noteIssuances(store, watch, issuances.map(recordedIssuance), now);
      // What the search service brought is recorded as the follower records what it reads: a later
      // switch back to the logs, resuming where they were left, announces none of it again.
      if (records) await store.ctLogs.recordSearched(searchedRecords(issuances, watch.id, now), now);
      const events: EventRecord[] = baselineDone && records
        ? issuances.map((issuance) => ({
            id: newId("evt"),
            organizationId: watch.organizationId,
            mode: watch.mode,
            type: "certificate.issued" as const,
            certificateId: null,
            data: issuedEventData(issuance, watch),
            createdAt: now,
          }))
        : [];
      if (watch.autoMonitor && !silent) {
        pending = [...new Set([...pending, ...issuances.flatMap((issuance) => namesToMonitor(issuance, watch, now))])].slice(0, MAX_PENDING_NAMES);
      }
      cursor = issuances.at(-1)!.id;
      if (!(await save({ newIssuances: records && !silent ? issuances.length : 0, events, done: false }))) return this.#report("failed"); // the lease was lost
    }

    // The names pass, where one is owed: pages from its place up to where the cursor was when autoMonitor came on.
    // The new issuances are all read by now: a pass cut short keeps the baseline done.
    while (typeof names === "object") {
      if (pages === MAX_PAGES_PER_POLL) {
        await save({ done: true, lastError: null, nextPollAt: clock.now(), baselineDone: true });
        return this.#report("ok");
      }
      const pass: { until: string; at: string | null } = names;
      let issuances;
      try {
        issuances = await client.page({ watchId: watch.id, domain: watch.domain, includeSubdomains: watch.includeSubdomains, after: pass.at });
      } catch (error) {
        if (!(error instanceof CtFailure)) throw error;
        const wait = Math.max(error.retryAfterMs ?? intervalMs, 1000);
        await save({ done: true, lastError: error.message, nextPollAt: clock.now() + wait, baselineDone: true, rateLimited: error.retryAfterMs !== null });
        this.options.logger.warn("Certificate Transparency poll failed", { watchId: watch.id, error: error.message });
        return this.#report(error.retryAfterMs !== null ? "rate_limited" : "failed");
      }
      pages++;
      const now = clock.now();
      const upTo = issuances.findIndex((issuance) => !idBefore(issuance.id, pass.until));
      const read = upTo < 0 ? issuances : issuances.slice(0, upTo + 1);
      pending = [...new Set([...pending, ...read.flatMap((issuance) => namesToMonitor(issuance, watch, now))])].slice(0, MAX_PENDING_NAMES);
      const last = read.at(-1)?.id;
      // Done at the cursor of then, at the end, or at a page that does not move on (a service ignoring `after`).
      names = upTo >= 0 || last === undefined || (pass.at !== null && !idBefore(pass.at, last)) ? "collected" : { until: pass.until, at: last };
      if (!(await save({ newIssuances: 0, events: [], done: false }))) return this.#report("failed"); // the lease was lost
    }

    let lastError: string | null = null;
    const stillPending: string[] = [];
    // Each add may take a whole TLS time limit: renew the lease as it runs out, as the pages do.
    for (const name of pending) {
      if (clock.now() - renewedAt > leaseMs / 3 && !(await save({ newIssuances: 0, events: [], done: false }))) {
        return this.#report("failed"); // the lease was lost
      }
      try {
        await this.options.addCertificate(watch, name);
      } catch (error) {
        stillPending.push(name);
        lastError ??= `Could not monitor "${name}": ${(error as Error).message}`;
      }
    }
    // Names tried (an add takes up to a TLS time limit, whether it succeeds or not). A re-poll comes
    // only for issuances recorded meanwhile (adding names takes seconds; the CT follower writes as it
    // reads), which the save below sees.
    pending = stillPending;
    await save({ done: true, lastError, nextPollAt: clock.now() + intervalMs, baselineDone: true });
    return this.#report("ok");
  }

  #report(result: PollResult): PollResult {
    this.options.onPoll?.(result);
    return result;
  }
}

type CursorSource = "search" | "logs";

/**
 * Whether the names of the issuances read up to the cursor were gathered for autoMonitor: "collected",
 * "missing" (read while it was off), or a names pass under way (from `at` up to `until`, the cursor
 * when it came on).
 */
type NamesState = "collected" | "missing" | { until: string; at: string | null };

/**
 * A watch's stored cursor, `search:<id>` or `logs:<position>`, read for `source`: switched when it was
 * kept under the other one (then null: start over). An untagged cursor was kept before cursors named
 * their source, when the search service was the only one: it is a `search:` cursor (read under `logs`,
 * it named no position of the follower's and skipped every record). Between the source and the colon, what autoMonitor's
 * names are owed: `~` (read without it) or `@until@at` (a names pass; each part %-encoded, `at` empty
 * at its start); nothing when collected.
 */
function readCursor(stored: string | null, source: CursorSource): { cursor: string | null; switched: boolean; names: NamesState } {
  if (stored === null) return { cursor: null, switched: false, names: "collected" };
  const tagged = /^(search|logs)(~|@[^@:]*@[^@:]*)?:([\s\S]*)$/.exec(stored) ?? [stored, "search", undefined, stored];
  if (tagged[1] !== source) return { cursor: null, switched: true, names: "collected" };
  const flag = tagged[2];
  let names: NamesState = "collected";
  if (flag === "~") names = "missing";
  else if (flag) {
    const [, until, at] = flag.split("@");
    names = { until: decodeURIComponent(until!), at: at === "" ? null : decodeURIComponent(at!) };
  }
  return { cursor: tagged[3]!, switched: false, names };
}

function writeCursor(cursor: string | null, source: CursorSource, names: NamesState): string | null {
  if (cursor === null) return null;
  const flag = names === "collected" ? "" : names === "missing" ? "~" : `@${encodeURIComponent(names.until)}@${names.at === null ? "" : encodeURIComponent(names.at)}`;
  return `${source}${flag}:${cursor}`;
}

/** Whether issuance id `a` comes before `b`: as decimal numbers (Cert Spotter's ids, the follower's positions), else as unequal strings. */
function idBefore(a: string, b: string): boolean {
  const decimal = /^\d{1,30}$/;
  return decimal.test(a) && decimal.test(b) ? BigInt(a) < BigInt(b) : a !== b;
}

/**
 * Why a page cannot be taken, or null: it holds an issuance returned before (one this poll saw, the
 * cursor itself, or, ids being Cert Spotter's increasing decimal numbers, one not after the cursor),
 * or its ids do not increase. Records the page's ids.
 */
function wentBack(issuances: ReadonlyArray<{ id: string }>, cursor: string | null, seen: Set<string>): string | null {
  const decimal = /^\d{1,30}$/;
  const again = "The CT service returned issuances it had already returned (it ignored `after`)";
  let previous: string | null = null;
  for (const { id } of issuances) {
    if (seen.has(id) || id === cursor) return again;
    if (cursor && decimal.test(id) && decimal.test(cursor) && BigInt(id) <= BigInt(cursor)) return again;
    if (previous !== null && decimal.test(id) && decimal.test(previous) && BigInt(id) <= BigInt(previous)) {
      return "The CT service returned a page whose issuance ids do not increase";
    }
    seen.add(id);
    previous = id;
  }
  return null;
}

/** The issuances of a search page that carry the key the follower records under (`tbs_sha256`), as it records them. */
function searchedRecords(issuances: Issuance[], watchId: string, now: number): CtIssuanceRecord[] {
  const records: CtIssuanceRecord[] = [];
  for (const issuance of issuances) {
    if (issuance.tbsSha256 === null) continue;
    const { o, cn } = nameAttributes(issuance.issuerName ?? "");
    records.push({
      watchId,
      issuanceKey: issuance.tbsSha256,
      dnsNames: issuance.dnsNames,
      issuerOrganization: o[0] ?? null,
      issuerCommonName: cn[0] ?? null,
      notBefore: issuance.notBefore,
      notAfter: issuance.notAfter,
      fingerprint: issuance.certSha256,
      loggedAt: now,
    });
  }
  return records;
}
