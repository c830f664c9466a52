/**
 * Every watch of every organization and mode, indexed by its domain, so that a name is matched by
 * looking up itself and each of its parent domains (a handful of lookups) rather than by a loop over
 * watches. `includeSubdomains` as CONTRACT §15: a watch matches its domain, and names under it only
 * when it includes subdomains (a wildcard `*.example.com` is a name under example.com).
 */
import type { WatchRecord } from "../base/records.ts";
import type { Clock } from "../base/time.ts";
import type { CtLogStore } from "../store/ports.ts";
import type { WatchDomains } from "./entry_decode.ts";

/**
 * What matching an entry needs of a watch: who it belongs to, what it watches, and what its
 * `certificate.issued` says. The rest of the record (polling state, pending names) is not kept.
 */
export type IndexedWatch = Pick<WatchRecord, "id" | "organizationId" | "mode" | "domain" | "includeSubdomains" | "allowedIssuers" | "createdAt">;

export class WatchIndex implements WatchDomains {
  readonly #byDomain = new Map<string, IndexedWatch[]>();
  readonly size: number;

  constructor(
    watches: Iterable<IndexedWatch>,
    /** Which version of the watches it holds (the store's watchesVersion()). */
    readonly version = "",
  ) {
    // Every watch of every organization stays in memory while the logs are followed: each keeps only
    // what matching needs, and the strings its organization's watches share (read anew for each
    // watch) are held once. About 330 bytes a watch instead of 600.
    const shared = new Map<string, string>();
    const once = <T extends string>(value: T): T => {
      const held = shared.get(value);
      if (held !== undefined) return held as T;
      shared.set(value, value);
      return value;
    };
    let size = 0;
    for (const { id, organizationId, mode, domain, includeSubdomains, allowedIssuers, createdAt } of watches) {
      const watch: IndexedWatch = {
        id,
        organizationId: once(organizationId),
        mode: once(mode),
        domain,
        includeSubdomains,
        allowedIssuers: allowedIssuers.length === 0 ? NO_ISSUERS : allowedIssuers,
        createdAt,
      };
      const list = this.#byDomain.get(domain);
      if (list) list.push(watch);
      else this.#byDomain.set(domain, [watch]);
      size++;
    }
    this.size = size;
    this.domains = new Set(this.#byDomain.keys());
  }

  /** The watched domains, for a decoder to pick candidates by. */
  readonly domains: ReadonlySet<string>;

  /** The watches any of `names` (lower-case, no trailing dot) matches, each once. */
  match(names: readonly string[]): IndexedWatch[] {
    let found: IndexedWatch[] | null = null;
    for (const name of names) {
      const exact = this.#byDomain.get(name);
      if (exact) for (const watch of exact) found = add(found, watch);
      for (let dot = name.indexOf("."); dot >= 0; dot = name.indexOf(".", dot + 1)) {
        const parent = this.#byDomain.get(name.slice(dot + 1));
        if (parent) for (const watch of parent) if (watch.includeSubdomains) found = add(found, watch);
      }
    }
    return found ?? NONE;
  }
}

const NONE: IndexedWatch[] = [];
/** The allowed issuers of every watch that allows any (most): one list, never changed. */
const NO_ISSUERS: string[] = [];

function add(found: IndexedWatch[] | null, watch: IndexedWatch): IndexedWatch[] {
  if (!found) return [watch];
  if (!found.includes(watch)) found.push(watch);
  return found;
}

/**
 * The index as the follower needs it: before entries logged at a time are matched, it holds every
 * watch created before that time. A watch's createdAt is taken by the process that adds it just before
 * it is stored, so an index read `settleMs` after an entry's timestamp has every watch that entry
 * must be matched against (settleMs bounds that gap and the clocks' skew). Reloaded only when the
 * watches changed.
 */
export class WatchIndexSource {
  #index = new WatchIndex([]);
  #version: string | null = null;
  /** When the last reload started: the index holds every watch stored before then. */
  #loadedAt = -Infinity;
  #reloading: Promise<void> | null = null;

  constructor(
    private readonly options: {
      store: Pick<CtLogStore, "watchesVersion" | "allWatches">;
      clock: Clock;
      settleMs: number;
      /** Reload (if the watches changed) at least this often, so backlogs see new watches too. */
      refreshMs: number;
    },
  ) {}

  /** The index as last read (for decoding ahead; at() says whether it is fresh enough for what was decoded). */
  current(): WatchIndex {
    return this.#index;
  }

  /** An index holding every watch created before `timestamp`: waits until one can be read, if need be. */
  async at(timestamp: number, signal: AbortSignal): Promise<WatchIndex> {
    const { clock, settleMs, refreshMs } = this.options;
    const needed = Math.min(timestamp, clock.now()) + settleMs;
    for (;;) {
      const now = clock.now();
      if (this.#loadedAt >= needed && now - this.#loadedAt < refreshMs) return this.#index;
      if (now < needed) {
        await clock.sleep(needed - now, signal);
        if (signal.aborted) throw new Error("stopped");
        continue;
      }
      await this.#reload();
    }
  }

  #reload(): Promise<void> {
    this.#reloading ??= (async () => {
      const { store, clock } = this.options;
      const startedAt = clock.now();
      try {
        const version = await store.watchesVersion();
        if (version !== this.#version) {
          this.#index = new WatchIndex(await store.allWatches(), version);
          this.#version = version;
        }
        this.#loadedAt = startedAt;
      } finally {
        this.#reloading = null;
      }
    })();
    return this.#reloading;
  }
}
