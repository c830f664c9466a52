/**
 * A read cache in front of a store, for the API's hottest reads: the key grant of every request, the
 * certificate of a GET and the pages of a list (unfiltered by status, whose answer moves with time
 * alone). An entry is served only while the store's change token stands still, and the whole cache is
 * dropped the moment it moves: any write by another process (the CLI, another server on the same file),
 * and any of this process's but the two below, empties it before the next read. So a revoked key is
 * refused on the very next request, and a renewed certificate is shown at once.
 *
 * Readers that miss the same entry while it is being read share that one read: after a write empties
 * the cache, 64 requests for one list page make one query, not 64 queued on the connection's thread
 * (measured: 51 such reads took up to 264 ms, and list p99 went from 44–54 ms to 155–178 ms).
 *
 * A running server saves a check many times a second. Those writes (a check's save and lease) are the
 * ones a store may leave out of its token and tell instead (Store.onCertificatesWritten): each empties
 * only the certificates it names, and a read of those under way is not kept. Key grants and every
 * other certificate stay cached (bench:load's load, six runs side by side with every write emptying
 * it: the probe's p99 20–45 ms, median 27, against 28–57, median 47). A list page holding a told
 * certificate keeps its place: the next read of the page reads that certificate alone (through the
 * cache) and puts it where it was, as long as its expiry, which orders the list, has not moved. A page
 * a told certificate may have moved into (its expiry falls inside the page's span, or is not told) is
 * dropped. A check leaves the expiry as it was unless the leaf changed, so at 50 checks a second the
 * pages stay cached instead of being read anew after every save.
 *
 * Stores that cannot produce a change token (a shared libSQL server) are returned as they are.
 */
import type { CertificateRecord, KeyGrant, Scope } from "../base/records.ts";
import type { CertificateKey, CertificateListQuery, Store } from "./ports.ts";

export interface ReadCacheOptions {
  /** Entries kept at most, per kind; a full cache is emptied, not scanned (the token usually empties it first). */
  maxEntries?: number;
}

/** How each cache is stopped and started again: see {@link stopReadCache}. */
const switches = new WeakMap<Store, { stop(): void; resume(): void }>();

/**
 * Stops the read cache of `store` (as returned by {@link withReadCache}): it empties, stops listening
 * to the store beneath, and every read goes to that store until {@link resumeReadCache}. For a core
 * that stops over a store that lives on (an embedding host's): the listening would otherwise keep the
 * cache, and all it holds, as long as the store. Nothing for a store without a cache.
 */
export function stopReadCache(store: Store): void {
  switches.get(store)?.stop();
}

/** Caches again, from empty, after {@link stopReadCache}; nothing when it caches already. */
export function resumeReadCache(store: Store): void {
  switches.get(store)?.resume();
}

export function withReadCache(store: Store, options: ReadCacheOptions = {}): Store {
  const changeToken = store.changeToken?.bind(store);
  if (!changeToken) return store;
  let stopped = false;
  /** Moves at each stop: a read begun before one keeps nothing (writes went untold meanwhile). */
  let generation = 0;
  const max = options.maxEntries ?? 5000;
  let token: string | undefined;
  const grants = new Map<string, KeyGrant | null>();
  const certificates = new Map<string, CertificateRecord | null>();
  /** List pages, by scope ("organization mode") then query. */
  const pages = new Map<string, Map<string, Page>>();
  let pageCount = 0;
  /** Reads under way, by cache and key; emptied with the caches, so a read begins after every write it must see. */
  const reading = new Map<Map<string, unknown>, Map<string, Flight<unknown>>>();
  const certificateKey = (organizationId: string, mode: string, id: string) => `${organizationId} ${mode} ${id}`;

  // A write the token leaves out: what it changed is emptied, and a read of it under way is not kept
  // (it may have read the row before the write).
  const told = (list: readonly CertificateKey[]) => {
    const flights = reading.get(certificates);
    for (const { organizationId, mode, id } of list) {
      const key = certificateKey(organizationId, mode, id);
      certificates.delete(key);
      const flight = flights?.get(key);
      if (flight) {
        flight.stale = true;
        flights!.delete(key);
      }
    }
    for (const written of list) {
      const scoped = pages.get(`${written.organizationId} ${written.mode}`);
      if (!scoped) continue;
      for (const [key, page] of scoped) {
        if (page.index.has(written.id)) {
          page.dirty.add(written.id);
          page.touched++;
        } else if (written.notAfter === undefined || page.spans(written.notAfter, written.id)) {
          scoped.delete(key);
          pageCount--;
        }
      }
      // A page read under way may hold the certificate as it was, or miss it where it now belongs.
      for (const flight of reading.get(scoped)?.values() ?? []) flight.stale = true;
      reading.delete(scoped);
    }
  };
  let stopListening = store.onCertificatesWritten?.(told);

  /** The current token; the caches are emptied first when it moved. */
  function current(): string {
    const now = changeToken!();
    if (now !== token) {
      grants.clear();
      certificates.clear();
      pages.clear();
      pageCount = 0;
      reading.clear();
      token = now;
    }
    return now;
  }

  /** Reads through the cache; keeps an answer only if nothing was written while it was read. */
  async function cached<T>(cache: Map<string, T>, key: string, read: () => Promise<T>, keep?: () => boolean): Promise<T> {
    if (stopped) return read();
    const before = current();
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    let flights = reading.get(cache) as Map<string, Flight<T>> | undefined;
    if (!flights) reading.set(cache, (flights = new Map()));
    const shared = flights.get(key);
    if (shared) return shared.value;
    const flight: Flight<T> = { value: undefined!, stale: false };
    flight.value = readInto(cache, key, before, read, flight, keep);
    flights.set(key, flight);
    try {
      return await flight.value;
    } finally {
      // Only its own entry: the caches (and this map with them) may have been emptied and refilled meanwhile.
      if (flights.get(key) === flight) flights.delete(key);
    }
  }

  /** `keep` (default: an entry kept, the cache emptied first when full) says whether to keep it. */
  async function readInto<T>(cache: Map<string, T>, key: string, before: string, read: () => Promise<T>, flight: Flight<T>, keep?: () => boolean): Promise<T> {
    // Each read freezes what it answers (even when not kept): every reader that joined it holds the same value.
    const begun = generation;
    const value = await read();
    if (changeToken!() === before && !flight.stale && !stopped && generation === begun) {
      if (!keep && cache.size >= max) cache.clear();
      if (!keep || keep()) cache.set(key, value);
    }
    return value;
  }

  const cachedStore: Store = {
    ...store,
    apiKeys: {
      ...store.apiKeys,
      findByHash: (hash) => cached(grants, hash, async () => freeze(await store.apiKeys.findByHash(hash))),
    },
    certificates: {
      ...store.certificates,
      // The scope is part of the key: another organization never gets a record it may not see.
      get: (scope: Scope, id: string) => get(scope, id),
      // Which certificates a page holds, and in which order, depends on stored values only, unless it
      // is filtered by status or renewal state: those change as time passes, with nothing written.
      list: (scope: Scope, query: CertificateListQuery) => {
        if (query.statuses || query.renewalStates) return store.certificates.list(scope, query);
        return listed(scope, query);
      },
    },
  };
  switches.set(cachedStore, {
    stop() {
      if (stopped) return;
      stopped = true;
      generation++;
      stopListening?.();
      stopListening = undefined;
      grants.clear();
      certificates.clear();
      pages.clear();
      pageCount = 0;
      reading.clear();
    },
    resume() {
      if (!stopped) return;
      // Listening first: a read kept from now on has been told every write it must see.
      stopListening = store.onCertificatesWritten?.(told);
      token = undefined;
      stopped = false;
    },
  });
  return cachedStore;

  async function listed(scope: Scope, query: CertificateListQuery): Promise<CertificateRecord[]> {
    // Every field of the query but the time is part of the key, filters added later included.
    const { now: _, ...filters } = query;
    if (stopped) return store.certificates.list(scope, query);
    const key = JSON.stringify(filters);
    // A page asked for with long filters (a query may be 8 KiB) is read, not kept: the caller chooses
    // that length, and 5,000 pages kept under ever-new ones would pin 75 MB.
    if (key.length > MAX_PAGE_KEY) return store.certificates.list(scope, query);
    current();
    const scopeKey = `${scope.organizationId} ${scope.mode}`;
    let scoped = pages.get(scopeKey);
    if (!scoped) pages.set(scopeKey, (scoped = new Map()));
    // Kept only in the scope's pages as they stand (an emptied cache detaches them: a read that began
    // before keeps nothing), and all pages are emptied when there are `max` of them.
    const attached = () => pages.get(scopeKey) === scoped;
    const page = await cached(scoped, key, async () => new Page(query, freeze(await store.certificates.list(scope, query))), () => {
      if (!attached()) return false;
      if (scoped!.has(key)) return true;
      if (pageCount >= max) {
        // The reads under way of the pages emptied go too: nothing may hold on to those.
        for (const emptied of pages.values()) reading.delete(emptied);
        pages.clear();
        pageCount = 0;
        return false;
      }
      pageCount++;
      return true;
    });
    if (page.dirty.size === 0) return page.records;
    const drop = () => {
      if (attached() && scoped!.get(key) === page) {
        scoped!.delete(key);
        pageCount--;
      }
    };
    // Most of the page written since: read whole again, in one read rather than one a certificate.
    if (page.dirty.size > MAX_PATCHED) {
      drop();
      return listed(scope, query);
    }
    // Certificates saved or leased since the page was read: each read alone, put back in its place.
    const before = current();
    const touched = page.touched;
    const dirty = [...page.dirty];
    const fresh = await Promise.all(dirty.map((id) => get(scope, id)));
    const records = page.records.slice();
    for (const [i, id] of dirty.entries()) {
      const at = page.index.get(id)!;
      const record = fresh[i];
      // Gone, or moved in the order: the page is read whole again.
      if (!record || record.details.notAfter !== records[at]!.details.notAfter) {
        drop();
        return listed(scope, query);
      }
      records[at] = record;
    }
    if (attached() && scoped.get(key) === page && page.touched === touched && changeToken!() === before) scoped.set(key, new Page(query, records));
    return records;
  }

  function get(scope: Scope, id: string): Promise<CertificateRecord | null> {
    return cached(certificates, certificateKey(scope.organizationId, scope.mode, id), async () => freeze(await store.certificates.get(scope, id)));
  }
}

/** Longest query (as its cache key) whose page is kept: room for every filter with a domain name of 253 characters. */
const MAX_PAGE_KEY = 1024;

/** Certificates of a page written since it was read that are each read again; more: the page is read again. */
const MAX_PATCHED = 8;

/**
 * A cached list page: its records in order, where each is, and which were told written since (read
 * again on the next read of the page). `touched` counts those tellings.
 */
class Page {
  readonly index = new Map<string, number>();
  readonly dirty = new Set<string>();
  touched = 0;

  constructor(
    private readonly query: CertificateListQuery,
    readonly records: CertificateRecord[],
  ) {
    for (const [i, record] of records.entries()) this.index.set(record.id, i);
  }

  /** Whether a certificate at (notAfter, id) in the list's order falls inside the page's span. */
  spans(notAfter: number, id: string): boolean {
    const { after, limit } = this.query;
    if (after && !precedes(after, { notAfter, id })) return false;
    // A page shorter than its limit is the last one: it spans everything after its start.
    const last = this.records.at(-1);
    return this.records.length < limit || !last || !precedes({ notAfter: last.details.notAfter, id: last.id }, { notAfter, id });
  }
}

/** (notAfter, id) order, as the store lists certificates. */
function precedes(a: { notAfter: number; id: string }, b: { notAfter: number; id: string }): boolean {
  return a.notAfter < b.notAfter || (a.notAfter === b.notAfter && a.id < b.id);
}

/** A read under way, which readers of the same key join; stale once a write told to the cache may have changed what it reads. */
interface Flight<T> {
  value: Promise<T>;
  stale: boolean;
}

/**
 * Cached values are shared by every reader: their objects are frozen, so a mutation would fail loudly
 * instead of spreading. Arrays, and what they hold, are left as they are: JSON.stringify takes a slow
 * path through frozen arrays and the objects in them, and responses show them (a page of 100
 * certificates took 381–491 µs to serialise instead of 87–104 µs). A list page's records are frozen.
 * Stores that share the records they read between callers freeze them the same way.
 */
export function freeze<T>(value: T): T {
  if (Array.isArray(value)) for (const item of value) freezeObject(item);
  else freezeObject(value);
  return value;
}

function freezeObject(value: unknown): void {
  if (typeof value !== "object" || value === null || Array.isArray(value) || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) freezeObject(inner);
}
