/**
 * The API's read cache (core/store/read_cache.ts) over a libSQL file that a second client (another
 * process, such as the CLI) writes to: what it answers from memory, it answers only while nobody
 * wrote; a revocation and a new certificate are seen on the very next read; lists filtered by status,
 * which change with time alone, are always read.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resumeReadCache, stopReadCache, withReadCache } from "../core/store/mod.ts";
import type { Store } from "../core/store/mod.ts";
import type { Scope } from "../core/base/mod.ts";
import { DAY } from "../core/base/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { apiKeyRecord, certificateRecord, NOW, organizationRecord, userRecord } from "./support/store_conformance/mod.ts";

const opened: Array<{ close(): Promise<void> }> = [];
const dirs: string[] = [];
afterEach(async () => {
  while (opened.length) await opened.pop()!.close();
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

interface Held {
  gate?: Promise<void>;
  onRead?: () => void;
}

/** `read`'s answer, once `held`'s gate (if set when the read began) opens; `onRead` told when it has read. */
async function gated<T>(held: Held, read: Promise<T>): Promise<T> {
  const { gate, onRead } = held;
  const value = await read;
  onRead?.();
  await gate;
  return value;
}

/** The server's cached store and a second client of the same database file, with reads of the first counted. */
async function twoClients(options: { maxEntries?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-cache-"));
  dirs.push(dir);
  const url = `file:${join(dir, "certkeeper.db")}`;
  const server = await openLibsqlStore({ url });
  const other = await openLibsqlStore({ url });
  opened.push(server, other);
  const reads = { list: 0, findByHash: 0, get: 0 };
  /** While `gate` is set, a list read (or, with `heldGet`, a get) tells `onRead` it has read, then answers only once the gate opens. */
  const held: Held = {};
  const heldGet: Held = {};
  const counted: Store = {
    ...server,
    apiKeys: { ...server.apiKeys, findByHash: (hash) => (reads.findByHash++, server.apiKeys.findByHash(hash)) },
    certificates: {
      ...server.certificates,
      get: (scope, id) => (reads.get++, gated(heldGet, server.certificates.get(scope, id))),
      list: (scope, query) => (reads.list++, gated(held, server.certificates.list(scope, query))),
    },
  };
  const org = organizationRecord();
  await server.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  return { cached: withReadCache(counted, options), server, other, reads, held, heldGet, org, scope };
}

const ids = (records: Array<{ id: string }>) => records.map((r) => r.id);

/** Holds the next read through `held`: `read` resolves once it has read (the hold then ends for later reads), and it answers once `open()` is called. */
function holdNext(held: Held): { read: Promise<void>; open: () => void } {
  let open!: () => void;
  held.gate = new Promise((resolve) => (open = resolve));
  const read = new Promise<void>((resolve) => (held.onRead = resolve)).then(() => {
    held.gate = held.onRead = undefined;
  });
  return { read, open };
}

describe("the read cache over a database another process writes to", () => {
  test("a list page is read once while nobody writes, and read again after another client adds a certificate", async () => {
    const { cached, other, reads, scope } = await twoClients();
    const first = certificateRecord(scope, { notAfter: NOW + 10 * DAY });
    await other.certificates.insert(first, { limit: 100, events: [] });
    const query = { limit: 10, now: NOW };

    expect(ids(await cached.certificates.list(scope, query))).toEqual([first.id]);
    expect(ids(await cached.certificates.list(scope, query))).toEqual([first.id]);
    expect(reads.list).toBe(1);

    const second = certificateRecord(scope, { notAfter: NOW + 20 * DAY });
    await other.certificates.insert(second, { limit: 100, events: [] });
    expect(ids(await cached.certificates.list(scope, query))).toEqual([first.id, second.id]);
    expect(reads.list).toBe(2);
    // Another page, another organization: other entries, never this one's.
    expect(ids(await cached.certificates.list(scope, { ...query, after: { notAfter: first.details.notAfter, id: first.id } }))).toEqual([second.id]);
    expect(await cached.certificates.list({ organizationId: "org_someoneelse000000", mode: "live" }, query)).toEqual([]);
    // Any other filter is another entry too.
    expect(ids(await cached.certificates.list(scope, { ...query, domainContains: second.domain.slice(0, 8) }))).toEqual([second.id]);
    expect(await cached.certificates.list(scope, { ...query, tags: ["nothing-has-this-tag"] })).toEqual([]);
    expect(await cached.certificates.list(scope, { ...query, limit: 1 })).toHaveLength(1);
  });

  test("readers that miss one entry together share one read; a reader after a write starts a read of its own", async () => {
    const { cached, other, reads, held, scope } = await twoClients();
    const first = certificateRecord(scope, { notAfter: NOW + 10 * DAY });
    await other.certificates.insert(first, { limit: 100, events: [] });
    const query = { limit: 10, now: NOW };

    // As after a write empties the cache under load: many requests for one page at once.
    const pages = await Promise.all(Array.from({ length: 20 }, () => cached.certificates.list(scope, query)));
    expect(pages.map(ids)).toEqual(Array.from({ length: 20 }, () => [first.id]));
    expect(reads.list).toBe(1);

    // A read made before a write, still under way, is not joined by a reader that comes after the write.
    const second = certificateRecord(scope, { notAfter: NOW + 20 * DAY });
    await other.certificates.insert(second, { limit: 100, events: [] });
    const { read, open } = holdNext(held);
    const before = cached.certificates.list(scope, query);
    await read;
    const third = certificateRecord(scope, { notAfter: NOW + 30 * DAY });
    await other.certificates.insert(third, { limit: 100, events: [] });
    const after = cached.certificates.list(scope, query);
    expect(ids(await after)).toEqual([first.id, second.id, third.id]);
    open();
    expect(ids(await before)).toEqual([first.id, second.id]);
    expect(reads.list).toBe(3);
    // Shared values are frozen: one reader cannot change what the others hold.
    expect(Object.isFrozen((await cached.certificates.list(scope, query))[0])).toBe(true);
  });

  test("a list filtered by status is read every time: a certificate turns expiring with nothing written", async () => {
    const { cached, other, reads, scope } = await twoClients();
    // Thresholds up to 30 days: expiring once 30 whole days or fewer are left.
    const record = certificateRecord(scope, { notAfter: NOW + 31 * DAY + 1000 });
    await other.certificates.insert(record, { limit: 100, events: [] });
    const valid = { limit: 10, statuses: ["valid" as const] };

    expect(ids(await cached.certificates.list(scope, { ...valid, now: NOW }))).toEqual([record.id]);
    expect(ids(await cached.certificates.list(scope, { ...valid, now: NOW + 2 * DAY }))).toEqual([]);
    expect(ids(await cached.certificates.list(scope, { limit: 10, statuses: ["expiring"], now: NOW + 2 * DAY }))).toEqual([record.id]);
    expect(reads.list).toBe(3);
  });

  test("a key revoked by another client is refused on the very next read of its grant", async () => {
    const { cached, other, reads, org } = await twoClients();
    const user = userRecord(org.id);
    const key = apiKeyRecord(user);
    await other.users.create(user);
    await other.apiKeys.create(key);

    expect((await cached.apiKeys.findByHash(key.hash))?.key.revokedAt).toBeNull();
    expect((await cached.apiKeys.findByHash(key.hash))?.key.revokedAt).toBeNull();
    expect(reads.findByHash).toBe(1);

    await other.apiKeys.revoke(key.id, NOW);
    expect((await cached.apiKeys.findByHash(key.hash))?.key.revokedAt).toBe(NOW);
    expect(reads.findByHash).toBe(2);
  });
});

describe("the read cache and this process's check saves and leases (told, not counted in the token)", () => {
  /** A key and two certificates, written by the other client; the key's grant and both certificates read once through the cache. */
  async function warm() {
    const clients = await twoClients();
    const { cached, other, reads, org, scope } = clients;
    const user = userRecord(org.id);
    const key = apiKeyRecord(user);
    await other.users.create(user);
    await other.apiKeys.create(key);
    const a = certificateRecord(scope, { notAfter: NOW + 10 * DAY, nextCheckAt: NOW - 1 });
    const b = certificateRecord(scope, { notAfter: NOW + 20 * DAY, nextCheckAt: NOW + DAY });
    await other.certificates.insert(a, { limit: 100, events: [] });
    await other.certificates.insert(b, { limit: 100, events: [] });
    const query = { limit: 10, now: NOW };
    const readAll = async () => ({
      grant: (await cached.apiKeys.findByHash(key.hash))?.key.revokedAt,
      a: await cached.certificates.get(scope, a.id),
      b: await cached.certificates.get(scope, b.id),
      page: ids(await cached.certificates.list(scope, query)),
    });
    await readAll();
    await readAll();
    expect(reads).toEqual({ findByHash: 1, get: 2, list: 1 });
    return { ...clients, key, a, b, readAll };
  }

  test("stopped (its core stopped), it reads every time and still sees this process's saves; started again, it caches from empty and is told again", async () => {
    const { cached, scope, reads, a, readAll } = await warm();
    stopReadCache(cached);
    await readAll();
    await readAll();
    expect(reads).toEqual({ findByHash: 3, get: 6, list: 3 });
    // A save while stopped (an embedding host's check, say) is seen at once, and after the restart.
    const stored = (await cached.certificates.get(scope, a.id))!;
    expect(await cached.certificates.saveCheck({ ...stored, lastCheckedAt: NOW + 5, updatedAt: NOW + 5 }, [])).toBe(true);
    expect((await readAll()).a?.lastCheckedAt).toBe(NOW + 5);

    resumeReadCache(cached);
    const counted = { ...reads };
    expect((await readAll()).a?.lastCheckedAt).toBe(NOW + 5);
    await readAll();
    expect(reads).toEqual({ findByHash: counted.findByHash + 1, get: counted.get + 2, list: counted.list + 1 });
    // Listening again: a save empties its certificate.
    const again = (await cached.certificates.get(scope, a.id))!;
    expect(await cached.certificates.saveCheck({ ...again, lastCheckedAt: NOW + 6, updatedAt: NOW + 6 }, [])).toBe(true);
    expect((await readAll()).a?.lastCheckedAt).toBe(NOW + 6);
  });

  test("a save empties only its certificate: the key's grant and other certificates stay cached, the page reads it alone", async () => {
    const { cached, scope, reads, a, b, readAll } = await warm();
    const stored = (await cached.certificates.get(scope, a.id))!;
    expect(await cached.certificates.saveCheck({ ...stored, lastCheckedAt: NOW + 5, updatedAt: NOW + 5 }, [])).toBe(true);
    const after = await readAll();
    expect(after.a?.lastCheckedAt).toBe(NOW + 5);
    expect(after.b?.id).toBe(b.id);
    expect(after.page).toEqual([a.id, b.id]);
    // The page shows the save: its certificate was read again, in its place.
    const page = await cached.certificates.list(scope, { limit: 10, now: NOW });
    expect(page[0]?.lastCheckedAt).toBe(NOW + 5);
    expect(Object.isFrozen(page[0])).toBe(true);
    expect(reads).toEqual({ findByHash: 1, get: 3, list: 1 });
    // Patched once, the page is served whole again.
    await cached.certificates.list(scope, { limit: 10, now: NOW });
    expect(reads).toEqual({ findByHash: 1, get: 3, list: 1 });
  });

  test("a lease empties the certificates it leased: a read shows the lease, the others stay cached", async () => {
    const { cached, scope, reads, a, readAll } = await warm();
    const leased = await cached.certificates.claimDue({ owner: "checker", now: NOW, leaseUntil: NOW + 60_000, limit: 10 });
    expect(ids(leased)).toEqual([a.id]);
    const after = await readAll();
    expect(after.a?.nextCheckAt).toBe(NOW + 60_000);
    expect((await cached.certificates.list(scope, { limit: 10, now: NOW }))[0]?.nextCheckAt).toBe(NOW + 60_000);
    expect(reads).toEqual({ findByHash: 1, get: 3, list: 1 });
  });

  test("a save that moves a certificate in the list's order reads the pages it leaves and the pages it enters anew", async () => {
    const { cached, other, scope, reads, a, b } = await warm();
    const c = certificateRecord(scope, { notAfter: NOW + 30 * DAY, nextCheckAt: NOW + DAY });
    const d = certificateRecord(scope, { notAfter: NOW + 50 * DAY, nextCheckAt: NOW + DAY });
    await other.certificates.insert(c, { limit: 100, events: [] });
    await other.certificates.insert(d, { limit: 100, events: [] });
    const first = { limit: 1, now: NOW };
    const second = { limit: 1, now: NOW, after: { notAfter: a.details.notAfter, id: a.id } };
    const last = { limit: 10, now: NOW, after: { notAfter: b.details.notAfter, id: b.id } };
    const pages = async () => [ids(await cached.certificates.list(scope, first)), ids(await cached.certificates.list(scope, second)), ids(await cached.certificates.list(scope, last))];
    expect(await pages()).toEqual([[a.id], [b.id], [c.id, d.id]]);
    const listed = reads.list;
    expect(await pages()).toEqual([[a.id], [b.id], [c.id, d.id]]);
    expect(reads.list).toBe(listed);

    // c renewed to expire first: it leaves the last page and enters the first; the second page is
    // neither (its span ends at b), and keeps its place.
    const stored = (await cached.certificates.get(scope, c.id))!;
    const renewed = { ...stored, details: { ...stored.details, notAfter: NOW + 5 * DAY, serialNumber: "0badc0de" }, lastCheckedAt: NOW + 5, updatedAt: NOW + 5 };
    expect(await cached.certificates.saveCheck(renewed, [])).toBe(true);
    expect(await pages()).toEqual([[c.id], [b.id], [d.id]]);
    expect(reads.list).toBe(listed + 2);

    // A save that leaves the expiry where it was, of a certificate outside a page's span, leaves the page alone.
    const stillA = (await cached.certificates.get(scope, a.id))!;
    expect(await cached.certificates.saveCheck({ ...stillA, lastCheckedAt: NOW + 6, updatedAt: NOW + 6 }, [])).toBe(true);
    expect(await pages()).toEqual([[c.id], [b.id], [d.id]]);
    expect(reads.list).toBe(listed + 2);
    // The second page, whose start is a's place, is still right: a moved nowhere.
    expect(ids(await cached.certificates.list(scope, { limit: 10, now: NOW }))).toEqual([c.id, a.id, b.id, d.id]);

    // a renewed to expire last: it enters the end of the last page, which is shorter than its limit.
    const lastA = (await cached.certificates.get(scope, a.id))!;
    expect(await cached.certificates.saveCheck({ ...lastA, details: { ...lastA.details, notAfter: NOW + 60 * DAY }, lastCheckedAt: NOW + 7, updatedAt: NOW + 7 }, [])).toBe(true);
    expect(ids(await cached.certificates.list(scope, last))).toEqual([d.id, a.id]);
  });

  test("a page read again while one of its certificates is saved is not kept: the reads after the save show it", async () => {
    const { cached, other, scope, reads, heldGet, a } = await warm();
    const query = { limit: 10, now: NOW };
    const saveAt = async (at: number) => {
      const stored = (await other.certificates.get(scope, a.id))!;
      expect(await cached.certificates.saveCheck({ ...stored, lastCheckedAt: at, updatedAt: at }, [])).toBe(true);
    };
    await saveAt(NOW + 5);
    // The page's read of a, which has read the row and not answered yet, when the next save lands.
    const { read, open } = holdNext(heldGet);
    const during = cached.certificates.list(scope, query);
    await read;
    await saveAt(NOW + 9);
    open();
    expect((await during)[0]?.lastCheckedAt).toBe(NOW + 5);
    // What that read found is not kept as the page: the next read reads a again.
    expect((await cached.certificates.list(scope, query))[0]?.lastCheckedAt).toBe(NOW + 9);
    expect(reads.list).toBe(1);
  });

  test("another process's write still empties everything, even with a save of this process's right behind it", async () => {
    const { cached, other, scope, reads, key, a, readAll } = await warm();
    const stored = (await cached.certificates.get(scope, a.id))!;
    await other.apiKeys.revoke(key.id, NOW);
    expect(await cached.certificates.saveCheck({ ...stored, lastCheckedAt: NOW + 5, updatedAt: NOW + 5 }, [])).toBe(true);
    const after = await readAll();
    expect(after.grant).toBe(NOW);
    expect(reads).toEqual({ findByHash: 2, get: 4, list: 2 });
  });

  test("a read of a certificate under way while it is saved is not kept: the reads after the save show it", async () => {
    const { cached, other, scope, reads, heldGet, a } = await warm();
    const saveAt = async (at: number) => {
      const stored = (await other.certificates.get(scope, a.id))!;
      expect(await cached.certificates.saveCheck({ ...stored, lastCheckedAt: at, updatedAt: at }, [])).toBe(true);
    };
    await saveAt(NOW + 5);
    // A read that has read the row, and has not answered yet, when the next save lands.
    const { read, open } = holdNext(heldGet);
    const during = cached.certificates.get(scope, a.id);
    await read;
    await saveAt(NOW + 9);
    // A reader after the save does not join the read under way: it reads anew.
    expect((await cached.certificates.get(scope, a.id))?.lastCheckedAt).toBe(NOW + 9);
    open();
    expect((await during)?.lastCheckedAt).toBe(NOW + 5);
    // The read under way was not kept over the newer one.
    expect((await cached.certificates.get(scope, a.id))?.lastCheckedAt).toBe(NOW + 9);
    expect(reads.get).toBe(4);
  });
  test("a page read under way when one of its certificates is saved is not kept", async () => {
    const { cached, scope, held, a } = await warm();
    const query = { limit: 10, now: NOW };
    const stored = (await cached.certificates.get(scope, a.id))!;
    // Emptied by another page's read being the only one: a new query, read while the save lands.
    const other = { limit: 9, now: NOW };
    const { read, open } = holdNext(held);
    const during = cached.certificates.list(scope, other);
    await read;
    expect(await cached.certificates.saveCheck({ ...stored, lastCheckedAt: NOW + 9, updatedAt: NOW + 9 }, [])).toBe(true);
    open();
    expect((await during)[0]?.lastCheckedAt).toBe(stored.lastCheckedAt);
    expect((await cached.certificates.list(scope, other))[0]?.lastCheckedAt).toBe(NOW + 9);
    expect((await cached.certificates.list(scope, query))[0]?.lastCheckedAt).toBe(NOW + 9);
  });

  test("the pages kept are bounded, across organizations too, and a page read before they were emptied keeps nothing", async () => {
    const { cached, other, server, reads, held, scope } = await twoClients({ maxEntries: 2 });
    const a = certificateRecord(scope, { notAfter: NOW + 10 * DAY });
    await other.certificates.insert(a, { limit: 100, events: [] });
    for (let limit = 1; limit <= 20; limit++) await cached.certificates.list(scope, { limit, now: NOW });
    const listed = reads.list;
    for (let limit = 1; limit <= 20; limit++) await cached.certificates.list(scope, { limit, now: NOW });
    expect(reads.list - listed).toBeGreaterThanOrEqual(18);

    // Another organization's pages fill the cache while a page of this one is read; a save of this
    // one's certificate is told meanwhile: the page read before it is not kept.
    const second = organizationRecord();
    await server.organizations.create(second);
    const theirs = { organizationId: second.id, mode: "live" as const };
    await other.certificates.insert(certificateRecord(theirs, { notAfter: NOW + 10 * DAY }), { limit: 100, events: [] });
    const { read, open } = holdNext(held);
    const during = cached.certificates.list(scope, { limit: 30, now: NOW });
    await read;
    for (let limit = 1; limit <= 3; limit++) await cached.certificates.list(theirs, { limit, now: NOW });
    const stored = (await cached.certificates.get(scope, a.id))!;
    expect(await cached.certificates.saveCheck({ ...stored, lastCheckedAt: NOW + 9, updatedAt: NOW + 9 }, [])).toBe(true);
    for (let limit = 4; limit <= 5; limit++) await cached.certificates.list(theirs, { limit, now: NOW });
    open();
    await during;
    expect((await cached.certificates.list(scope, { limit: 30, now: NOW }))[0]?.lastCheckedAt).toBe(NOW + 9);
  });

  test("certificates expiring at the same moment keep their order by id when one of them is saved", async () => {
    const { cached, other, scope } = await twoClients();
    const same = NOW + 10 * DAY;
    const records = Array.from({ length: 4 }, () => certificateRecord(scope, { notAfter: same }));
    for (const record of records) await other.certificates.insert(record, { limit: 100, events: [] });
    const byId = records.map((r) => r.id).sort();
    const first = { limit: 2, now: NOW };
    const next = { limit: 2, now: NOW, after: { notAfter: same, id: byId[1]! } };
    expect(ids(await cached.certificates.list(scope, first))).toEqual(byId.slice(0, 2));
    expect(ids(await cached.certificates.list(scope, next))).toEqual(byId.slice(2));
    // The third (on the second page) saved, its expiry unchanged: both pages as they were, the save shown.
    const third = (await cached.certificates.get(scope, byId[2]!))!;
    expect(await cached.certificates.saveCheck({ ...third, lastCheckedAt: NOW + 9, updatedAt: NOW + 9 }, [])).toBe(true);
    expect(ids(await cached.certificates.list(scope, first))).toEqual(byId.slice(0, 2));
    const after = await cached.certificates.list(scope, next);
    expect(ids(after)).toEqual(byId.slice(2));
    expect(after[0]?.lastCheckedAt).toBe(NOW + 9);
  });
});
