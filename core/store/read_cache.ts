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
 * only the certificates it names and the list pages, and a read of those under way is not kept. Key
 * grants and every other certificate stay cached (bench:load's load, six runs side by side with every
 * write emptying it: the probe's p99 20–45 ms, median 27, against 28–57, median 47).
 *
 * Stores that cannot produce a change token (a shared libSQL server) are returned as they are.
 */
import type { CertificateRecord, KeyGrant, Scope } from "../base/records.ts";
import type { CertificateKey, CertificateListQuery, Store } from "./ports.ts";

export interface ReadCacheOptions {
  /** Entries kept at most, per kind; a full cache is emptied, not scanned (the token usually empties it first). */
  maxEntries?: number;
}

export function withReadCache(store: Store, options: ReadCacheOptions = {}): Store {
  const changeToken = store.changeToken?.bind(store);
  if (!changeToken) return store;
  const max = options.maxEntries ?? 5000;
  let token: string | undefined;
  const grants = new Map<string, KeyGrant | null>();
  const certificates = new Map<string, CertificateRecord | null>();
  const pages = new Map<string, CertificateRecord[]>();
  /** Reads under way, by cache and key; emptied with the caches, so a read begins after every write it must see. */
  const reading = new Map<Map<string, unknown>, Map<string, Flight<unknown>>>();
  const certificateKey = (organizationId: string, mode: string, id: string) => `${organizationId} ${mode} ${id}`;

  // A write the token leaves out: what it changed is emptied, and a read of it under way is not kept
  // (it may have read the row before the write).
  store.onCertificatesWritten?.((written: readonly CertificateKey[]) => {
    const flights = reading.get(certificates);
    for (const { organizationId, mode, id } of written) {
      const key = certificateKey(organizationId, mode, id);
      certificates.delete(key);
      const flight = flights?.get(key);
      if (flight) {
        flight.stale = true;
        flights!.delete(key);
      }
    }
    pages.clear();
    for (const flight of reading.get(pages)?.values() ?? []) flight.stale = true;
    reading.delete(pages);
  });

  /** The current token; the caches are emptied first when it moved. */
  function current(): string {
    const now = changeToken!();
    if (now !== token) {
      grants.clear();
      certificates.clear();
      pages.clear();
      reading.clear();
      token = now;
    }
    return now;
  }

  /** Reads through the cache; keeps an answer only if nothing was written while it was read. */
  async function cached<T>(cache: Map<string, T>, key: string, read: () => Promise<T>): Promise<T> {
    const before = current();
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    let flights = reading.get(cache) as Map<string, Flight<T>> | undefined;
    if (!flights) reading.set(cache, (flights = new Map()));
    const shared = flights.get(key);
    if (shared) return shared.value;
    const flight: Flight<T> = { value: undefined!, stale: false };
    flight.value = readInto(cache, key, before, read, flight);
    flights.set(key, flight);
    try {
      return await flight.value;
    } finally {
      // Only its own entry: the caches (and this map with them) may have been emptied and refilled meanwhile.
      if (flights.get(key) === flight) flights.delete(key);
    }
  }

  async function readInto<T>(cache: Map<string, T>, key: string, before: string, read: () => Promise<T>, flight: Flight<T>): Promise<T> {
    // Frozen even when not kept: every reader that joined the read holds the same value.
    const value = freeze(await read());
    if (changeToken!() === before && !flight.stale) {
      if (cache.size >= max) cache.clear();
      cache.set(key, value);
    }
    return value;
  }

  return {
    ...store,
    apiKeys: {
      ...store.apiKeys,
      findByHash: (hash) => cached(grants, hash, () => store.apiKeys.findByHash(hash)),
    },
    certificates: {
      ...store.certificates,
      // The scope is part of the key: another organization never gets a record it may not see.
      get: (scope: Scope, id: string) => cached(certificates, certificateKey(scope.organizationId, scope.mode, id), () => store.certificates.get(scope, id)),
      // Which certificates a page holds, and in which order, depends on stored values only, unless it
      // is filtered by status or renewal state: those change as time passes, with nothing written.
      list: (scope: Scope, query: CertificateListQuery) => {
        if (query.statuses || query.renewalStates) return store.certificates.list(scope, query);
        // Every field of the query but the time is part of the key, filters added later included.
        const { now: _, ...filters } = query;
        return cached(pages, JSON.stringify([scope.organizationId, scope.mode, filters]), () => store.certificates.list(scope, query));
      },
    },
  };
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
