/**
 * The SQL store's certificate lists read each row's id, version and next check, and whole only the
 * rows not already kept at them (adapters/sql/parsed_rows.ts): the same page after a write elsewhere
 * costs no whole rows, and a row changed by this process or another is never shown stale. A list
 * filtered by a part of the domain tests each domain in the listing index, not in the table rows.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { LocalExecutor } from "../adapters/libsql/local_executor.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createSqlStore, type Executor } from "../adapters/sql/mod.ts";
import { MINUTE } from "../core/base/time.ts";
import { certificateRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { temporaryDirectory } from "./support/temp.ts";

/** The SQL store over a database file, every statement outside transactions seen. */
async function spiedStore(path: string) {
  const executor = new LocalExecutor(path, { busyTimeoutMs: 1000 });
  const statements: string[] = [];
  const spied: Executor = {
    execute: async (sql, args) => (statements.push(sql), executor.execute(sql, args)),
    batch: async (list) => (list.forEach(({ sql }) => statements.push(sql)), executor.batch(list)),
    transaction: (fn) => executor.transaction(fn),
    close: () => executor.close(),
  };
  return { store: await createSqlStore(spied, { shared: false }), statements };
}

const wholeReads = (statements: string[]) => statements.filter((sql) => sql.includes("details") && sql.startsWith("SELECT")).length;

describe("the SQL store's certificate lists", () => {
  test("read whole only the rows that changed since they were last read, by this process or another", async () => {
    const path = join(temporaryDirectory("certkeeper-list-"), "db.sqlite");
    const { store, statements } = await spiedStore(path);
    const org = organizationRecord();
    await store.organizations.create(org);
    const live = { organizationId: org.id, mode: "live" as const };
    const records = Array.from({ length: 5 }, (_, i) => certificateRecord(live, { domain: `site-${i}.example.com`, nextCheckAt: NOW + MINUTE }));
    for (const record of records) await store.certificates.insert(record, { limit: 10, events: [] });
    const list = () => store.certificates.list(live, { limit: 10, now: NOW });
    const names = async () => (await list()).map((record) => record.name);

    expect((await list()).map((record) => record.id).sort()).toEqual(records.map((record) => record.id).sort());
    expect(wholeReads(statements)).toBe(1);
    // Unchanged: nothing is read whole again, and the very same (frozen) records come back.
    const first = await list();
    expect(wholeReads(statements)).toBe(1);
    expect((await list())[0]).toBe(first[0]!);
    expect(Object.isFrozen(first[0])).toBe(true);

    // A settings change by this process: that one row is read again, and shown as it is now.
    const renamed = first[2]!;
    await store.certificates.updateSettings(live, renamed.id, { name: "Renamed here", updatedAt: NOW + 1 });
    const before = statements.length;
    expect(await names()).toContain("Renamed here");
    expect(statements.slice(before).filter((sql) => sql.startsWith("SELECT id, organization_id"))).toEqual([expect.stringContaining("WHERE id IN (?)")]);

    // Another process on the same file (as the CLI would be) changes a row: seen at the next list.
    const other = await openLibsqlStore({ url: `file:${path}` });
    await other.certificates.updateSettings(live, first[4]!.id, { name: "Renamed elsewhere", updatedAt: NOW + 2 });
    // …and another moves only a row's next check (a lease): its record shows the new one.
    const [leased] = await other.certificates.claimDue({ owner: "elsewhere", now: NOW + MINUTE, leaseUntil: NOW + 2 * MINUTE, limit: 1 });
    await other.close();
    const now = await list();
    expect(now.map((record) => record.name)).toContain("Renamed elsewhere");
    expect(now.find((record) => record.id === leased!.id)!.nextCheckAt).toBe(NOW + 2 * MINUTE);

    // A deleted one is gone from the page.
    await store.certificates.remove(live, first[0]!.id, NOW + 3);
    expect((await list()).map((record) => record.id)).not.toContain(first[0]!.id);
    await store.close();
  });
  test("a page is the one its first read saw: a check saved between its two reads that moves a row reads the page again", async () => {
    const path = join(temporaryDirectory("certkeeper-list-"), "db.sqlite");
    const executor = new LocalExecutor(path, { busyTimeoutMs: 1000 });
    // Just before the rows are read whole, a save goes out (it reaches the database first).
    const hook: { beforeRows?: () => void } = {};
    const spied: Executor = {
      execute: (sql, args) => {
        if (sql.includes("WHERE id IN") && hook.beforeRows) {
          hook.beforeRows();
          hook.beforeRows = undefined;
        }
        return executor.execute(sql, args);
      },
      batch: (list) => executor.batch(list),
      transaction: (fn) => executor.transaction(fn),
      close: () => executor.close(),
    };
    const store = await createSqlStore(spied, { shared: false });
    const org = organizationRecord();
    await store.organizations.create(org);
    const live = { organizationId: org.id, mode: "live" as const };
    const [a, b, c] = [10, 20, 30].map((days) => certificateRecord(live, { notAfter: NOW + days * 86_400_000 }));
    for (const record of [a!, b!, c!]) await store.certificates.insert(record, { limit: 10, events: [] });
    // c renewed to expire first, saved while the page (ordered a, b, c) reads its rows.
    const stored = (await store.certificates.get(live, c!.id))!;
    const renewed = { ...stored, details: { ...stored.details, notAfter: NOW + 5 * 86_400_000, serialNumber: "0badc0de" }, lastCheckedAt: NOW + 5, updatedAt: NOW + 5 };
    let saved!: Promise<boolean>;
    hook.beforeRows = () => (saved = store.certificates.saveCheck(renewed, []));
    const page = await store.certificates.list(live, { limit: 10, now: NOW });
    expect(await saved).toBe(true);
    expect(page.map((record) => [record.id, record.details.notAfter])).toEqual([
      [c!.id, NOW + 5 * 86_400_000],
      [a!.id, a!.details.notAfter],
      [b!.id, b!.details.notAfter],
    ]);
    await executor.close();
  });
  test("a page whose rows keep changing between its two reads is read whole in one statement, without a write lock", async () => {
    const path = join(temporaryDirectory("certkeeper-list-"), "db.sqlite");
    const executor = new LocalExecutor(path, { busyTimeoutMs: 1000 });
    const statements: string[] = [];
    let transactions = 0;
    // Every read of whole rows answers as if a save had landed just before it (the row one version on),
    // as a busy server's saves may, try after try.
    const spied: Executor = {
      execute: async (sql, args) => {
        statements.push(sql);
        const result = await executor.execute(sql, args);
        if (!sql.includes("WHERE id IN")) return result;
        return { ...result, rows: result.rows.map((row) => ({ ...row, version: Number(row.version) + 1 })) };
      },
      batch: (list) => executor.batch(list),
      transaction: (fn) => (transactions++, executor.transaction(fn)),
      close: () => executor.close(),
    };
    const store = await createSqlStore(spied, { shared: false });
    const org = organizationRecord();
    await store.organizations.create(org);
    const live = { organizationId: org.id, mode: "live" as const };
    const [a, b] = [10, 20].map((days) => certificateRecord(live, { notAfter: NOW + days * 86_400_000 }));
    for (const record of [a!, b!]) await store.certificates.insert(record, { limit: 10, events: [] });
    const before = transactions;
    const page = await store.certificates.list(live, { limit: 10, now: NOW });
    expect(page.map((record) => [record.id, record.version])).toEqual([
      [a!.id, a!.version],
      [b!.id, b!.version],
    ]);
    expect(transactions).toBe(before);
    // Three tries of two reads, then the page whole in one statement.
    expect(statements.filter((sql) => sql.startsWith("SELECT id, version, next_check_at")).length).toBe(3);
    expect(statements.filter((sql) => sql.includes("ORDER BY not_after") && !sql.startsWith("SELECT id, version"))).toHaveLength(1);
    await executor.close();
  });
});

test("a list filtered by a part of the domain is answered from the listing index, which holds the domain: no table row is read to test it", async () => {
  const path = join(temporaryDirectory("certkeeper-list-index-"), "t.db");
  const store = await openLibsqlStore({ url: `file:${path}` });
  await store.close();
  const { default: Database } = await import("libsql");
  const db = new Database(path, { readonly: true });
  try {
    const plan = (sql: string, args: unknown[]) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(args) as Array<{ detail: string }>).map((row) => row.detail);
    // The statement of the SQL store's list (adapters/sql/certificates.ts), with a domain filter and a cursor.
    const filtered = plan(
      "SELECT id, version, next_check_at FROM certificates WHERE organization_id = ? AND mode = ? AND (not_after > ? OR (not_after = ? AND id > ?)) AND instr(domain, ?) > 0 ORDER BY not_after, id LIMIT ?",
      ["org", "live", 1, 1, "cert", "shop", 100],
    );
    expect(filtered).toEqual([expect.stringMatching(/^SEARCH certificates USING COVERING INDEX certificates_listing|^SEARCH certificates USING INDEX certificates_listing/)]);
    const columns = (db.prepare("PRAGMA index_info(certificates_listing)").all() as Array<{ name: string }>).map((row) => row.name);
    expect(columns).toEqual(["organization_id", "mode", "not_after", "id", "domain"]);
  } finally {
    db.close();
  }
});
