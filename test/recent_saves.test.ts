/**
 * What the SQL store keeps of the certificates it saved, so that a lease need not read them back
 * (adapters/sql/recent_saves.ts): only saves whose next check is near, a bounded number of them, each
 * handed out once and only at the version it was saved as; and the store's leases over them, statement
 * by statement. That a claim then hands out exactly what a read gives is the store conformance suite's
 * ("claimDue() after this store saved a check …", "… whether this client saved them last …").
 */
import { describe, expect, test } from "bun:test";
import { RecentSaves } from "../adapters/sql/recent_saves.ts";
import { HOUR, MINUTE } from "../core/base/time.ts";
import { certificateRecord, NOW, organizationRecord } from "./support/store_conformance/factories.ts";
import { LocalExecutor } from "../adapters/libsql/local_executor.ts";
import { createSqlStore, type Executor } from "../adapters/sql/mod.ts";

const scope = { organizationId: "org_recent", mode: "live" as const };
const saved = (fields: Parameters<typeof certificateRecord>[1] = {}) => certificateRecord(scope, { lastCheckedAt: NOW, nextCheckAt: NOW + MINUTE, version: 3, ...fields });

describe("recent saves", () => {
  test("a save is handed out once, at the version after it, with the next check the lease read", () => {
    const recent = new RecentSaves();
    const record = saved();
    recent.keep(record);
    expect(recent.take(record.id, 4, NOW + 30_000)).toEqual({ ...record, version: 4, nextCheckAt: NOW + 30_000 });
    // Taken: the next lease reads the row, until the certificate's next save is kept.
    expect(recent.take(record.id, 4, NOW + 30_000)).toBeUndefined();
    expect(recent.size).toBe(0);
  });

  test("a row at another version (written since, by anyone) is not answered from memory, and the entry goes", () => {
    const recent = new RecentSaves();
    const record = saved();
    recent.keep(record);
    expect(recent.take(record.id, 5, NOW)).toBeUndefined();
    recent.keep(record);
    expect(recent.take(record.id, 3, NOW)).toBeUndefined();
    expect(recent.size).toBe(0);
    // drop(): the same answer without the record, for a claim that read the rows whole anyway.
    recent.keep(record);
    expect(recent.drop(record.id, 5)).toBe(false);
    recent.keep(record);
    expect(recent.drop(record.id, 4)).toBe(true);
    expect(recent.drop(record.id, 4)).toBe(false);
  });

  test("only saves whose next check is within five minutes of the check are kept", () => {
    const recent = new RecentSaves();
    const near = saved({ nextCheckAt: NOW + 5 * MINUTE });
    const far = saved({ nextCheckAt: NOW + 5 * MINUTE + 1 });
    const usual = saved({ nextCheckAt: NOW + 6 * HOUR });
    for (const record of [near, far, usual]) recent.keep(record);
    expect(recent.size).toBe(1);
    expect(recent.take(near.id, 4, NOW)).toBeDefined();
  });

  test("a later save of the same certificate replaces the earlier; forget() drops it", () => {
    const recent = new RecentSaves();
    const first = saved();
    recent.keep(first);
    const second = { ...first, version: 4, lastCheckedAt: NOW + 1000, nextCheckAt: NOW + 2000, failureCount: 1 };
    recent.keep(second);
    expect(recent.size).toBe(1);
    expect(recent.take(first.id, 5, NOW + 2000)).toMatchObject({ version: 5, failureCount: 1 });
    recent.keep(second);
    recent.forget(second.id);
    expect(recent.take(second.id, 5, NOW + 2000)).toBeUndefined();
  });

  test("at most 4,096 are kept, the oldest going first, and none checked more than ten minutes before the latest", () => {
    const recent = new RecentSaves();
    const records = Array.from({ length: 5000 }, (_, i) => saved({ lastCheckedAt: NOW + i, nextCheckAt: NOW + i + MINUTE }));
    for (const record of records) recent.keep(record);
    expect(recent.size).toBe(4096);
    expect(recent.take(records[903]!.id, 4, NOW)).toBeUndefined();
    expect(recent.take(records[904]!.id, 4, NOW)).toBeDefined();
    // Never leased again (deleted, or taken over by another process): gone once ten minutes passed.
    const later = saved({ lastCheckedAt: NOW + 5000 + 10 * MINUTE, nextCheckAt: NOW + 11 * MINUTE + 5000 });
    recent.keep(later);
    expect(recent.size).toBe(1);
    expect(recent.take(later.id, 4, NOW)).toBeDefined();
  });
});

/** The SQL store over an embedded database, every statement seen (and, when `fail` says so, refused). */
async function spiedStore(fail: (sql: string) => boolean = () => false) {
  const executor = new LocalExecutor(":memory:", { busyTimeoutMs: 1000 });
  const statements: string[] = [];
  const spy = (sql: string) => {
    statements.push(sql);
    if (fail(sql)) throw new Error("disk I/O error (injected)");
  };
  const spied: Executor = {
    execute: async (sql, args) => (spy(sql), executor.execute(sql, args)),
    batch: async (list) => (list.forEach(({ sql }) => spy(sql)), executor.batch(list)),
    transaction: (fn) => executor.transaction(fn),
    close: () => executor.close(),
  };
  const store = await createSqlStore(spied, { shared: false });
  const org = organizationRecord();
  await store.organizations.create(org);
  return { store, statements, live: { organizationId: org.id, mode: "live" as const } };
}

describe("the SQL store's leases with recent saves", () => {
  test("a claim after this process's saves reads no certificate whole; one after another writer's does", async () => {
    const { store, statements, live } = await spiedStore();
    const records = Array.from({ length: 3 }, (_, i) => certificateRecord(live, { nextCheckAt: NOW - i }));
    for (const record of records) await store.certificates.insert(record, { limit: 10, events: [] });
    const claim = (at: number) => store.certificates.claimDue({ owner: "one", now: at, leaseUntil: at + MINUTE, limit: 10 });
    const wholeReads = () => statements.filter((sql) => sql.includes("details")).length;

    let claimed = await claim(NOW);
    expect(wholeReads()).toBe(1);
    const saveAll = (at: number) =>
      Promise.all(claimed.map((r) => store.certificates.saveCheck({ ...r, lastCheckedAt: at, nextCheckAt: at + 1 }, [], { detailsChanged: false })));
    expect(await saveAll(NOW + 1)).toEqual([true, true, true]);
    // The first claim kept nothing, so this one reads whole rows (and finds it kept them all) …
    claimed = await claim(NOW + 2);
    expect(wholeReads()).toBe(2);
    await saveAll(NOW + 3);
    // … and the next reads none.
    const before = statements.length;
    claimed = await claim(NOW + 4);
    expect(statements.slice(before).some((sql) => sql.includes("details"))).toBe(false);
    expect(claimed.map((r) => r.version)).toEqual([2, 2, 2]);
    // A settings change since the save: that one is read whole, after the lease.
    await saveAll(NOW + 5);
    await store.certificates.updateSettings(live, records[1]!.id, { name: "Renamed", updatedAt: NOW + 5 });
    claimed = await claim(NOW + 6);
    expect(statements.at(-1)).toContain("WHERE id IN (?)");
    expect(claimed.find((r) => r.id === records[1]!.id)).toMatchObject({ name: "Renamed", version: 4, nextCheckAt: NOW + 6 });
    await store.close();
  });

  test("when the rows cannot be read after the lease, the lease is given back: due again at once", async () => {
    let failing = false;
    const { store, live } = await spiedStore((sql) => failing && sql.includes("WHERE id IN"));
    const records = Array.from({ length: 2 }, (_, i) => certificateRecord(live, { nextCheckAt: NOW - i }));
    for (const record of records) await store.certificates.insert(record, { limit: 10, events: [] });
    const claimed = await store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
    for (const _ of [1, 2]) {
      expect(await Promise.all(claimed.map((r) => store.certificates.saveCheck({ ...r, lastCheckedAt: NOW, nextCheckAt: NOW }, [], { detailsChanged: false })))).toEqual([true, true]);
      claimed.forEach((r, i) => (claimed[i] = { ...r, version: r.version + 1 }));
      // Claimed (reading whole rows, the first time, then from memory), leaving them due at once.
      const again = await store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
      expect(again).toHaveLength(2);
    }
    // One of them changed by a settings write: read after the lease, which fails.
    expect(await Promise.all(claimed.map((r) => store.certificates.saveCheck({ ...r, lastCheckedAt: NOW, nextCheckAt: NOW }, [], { detailsChanged: false })))).toEqual([true, true]);
    await store.certificates.updateSettings(live, records[0]!.id, { name: "Renamed", updatedAt: NOW });
    failing = true;
    await expect(store.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 })).rejects.toThrow("injected");
    failing = false;
    expect(await store.certificates.nextDueAt()).toBe(NOW);
    const retried = await store.certificates.claimDue({ owner: "two", now: NOW, leaseUntil: NOW + MINUTE, limit: 10 });
    expect(retried.map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
    expect(retried.find((r) => r.id === records[0]!.id)).toMatchObject({ name: "Renamed", nextCheckAt: NOW });
    await store.close();
  });
});
