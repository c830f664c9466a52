/**
 * The embedded database's write path: a real libSQL file checkpointed by a background thread (the main
 * connection only as a backstop), and certificate rows that keep one copy of the certificate's details
 * where an endpoint serves those same details.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { LocalExecutor } from "../adapters/libsql/local_executor.ts";
import { BACKSTOP_BYTES } from "../adapters/libsql/checkpointer.ts";
import { backupLibsqlFile } from "../adapters/libsql/backup.ts";
import { certificateRecord, certificateDetails, NOW } from "./support/store_conformance/factories.ts";
import { addCertificate, newOrganization } from "./support/store_conformance/_helpers.ts";
import { DAY } from "../core/base/time.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-local-"));
  dirs.push(dir);
  return join(dir, "certkeeper.db");
}

/** What a reader sees in the database file alone, without its WAL: only what was checkpointed. */
function rowsInMainFile(path: string, table: string): number {
  try {
    return rowsInCopy(path, table);
  } catch {
    // Copied while the thread was writing it: not there yet, look again.
    return -1;
  }
}

function rowsInCopy(path: string, table: string): number {
  const copy = `${path}.copy`;
  rmSync(`${copy}-wal`, { force: true });
  copyFileSync(path, copy);
  const db = new Database(copy, { readonly: true });
  try {
    const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
    return exists ? (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n : 0;
  } finally {
    db.close();
  }
}

describe("background checkpoints", () => {
  test("committed pages reach the database file without the main connection checkpointing", async () => {
    const path = tempFile();
    const store = await openLibsqlStore({ url: `file:${path}` });
    const { live } = await newOrganization(store);
    for (let i = 0; i < 20; i++) await addCertificate(store, certificateRecord(live));
    // A few hundred WAL pages, far below any automatic threshold: only the background thread copies them.
    const deadline = Date.now() + 5_000;
    while (rowsInMainFile(path, "certificates") < 20 && Date.now() < deadline) await Bun.sleep(50);
    expect(rowsInMainFile(path, "certificates")).toBe(20);
    await store.close();
  });

  test("the main connection keeps a higher threshold as its backstop, and close() stops the thread", async () => {
    const path = tempFile();
    const executor = new LocalExecutor(path, { busyTimeoutMs: 1_000 });
    await executor.execute("PRAGMA journal_mode = WAL");
    await executor.checkpointInBackground(path);
    const { rows } = await executor.execute("PRAGMA wal_autocheckpoint");
    // SQLite's 4 KiB pages here (no page size was asked for): 40 MiB of them.
    expect(Number(Object.values(rows[0]!)[0])).toBe(BACKSTOP_BYTES / 4096);
    await executor.execute("CREATE TABLE t (v TEXT)");
    for (let i = 0; i < 50; i++) await executor.execute("INSERT INTO t VALUES (?)", ["x".repeat(2000)]);
    // A round that starts after the last insert (one seen during the inserts copied only part of them):
    // the round after the next one reported, as the thread runs its rounds one after another.
    const deadline = Date.now() + 5_000;
    for (let round = 0; round < 2; round++) {
      executor.lastCheckpoint = undefined;
      while (executor.lastCheckpoint === undefined && Date.now() < deadline) await Bun.sleep(20);
    }
    expect(executor.lastCheckpoint).toMatchObject({ busy: 0 });
    expect(executor.lastCheckpoint!.copied).toBe(executor.lastCheckpoint!.frames);
    await executor.close();
    // The background thread's round copied every committed page into the database file.
    expect(rowsInMainFile(path, "t")).toBe(50);
  });

  test("close() while the checkpointer is still starting stops it too", async () => {
    const path = tempFile();
    const executor = new LocalExecutor(path, { busyTimeoutMs: 1_000 });
    await executor.execute("PRAGMA journal_mode = WAL");
    const starting = executor.checkpointInBackground(path);
    await executor.close();
    await starting.catch(() => {});
    // A checkpointer left running would go on reporting a round every 100 ms.
    executor.lastCheckpoint = undefined;
    await Bun.sleep(400);
    expect(executor.lastCheckpoint).toBeUndefined();
  });

  test("a checkpointer that cannot work hands checkpoints back to the main connection, and close() does not wait for it", async () => {
    const path = tempFile();
    const executor = new LocalExecutor(path, { busyTimeoutMs: 1_000 });
    await executor.execute("PRAGMA journal_mode = WAL");
    // Its thread is given a folder to open as the database: it fails at once.
    executor.checkpointInBackground(join(path, ".."));
    const deadline = Date.now() + 5_000;
    while (!executor.checkpointFailure && Date.now() < deadline) await Bun.sleep(20);
    expect(executor.checkpointFailure).toBeString();
    const { rows } = await executor.execute("PRAGMA wal_autocheckpoint");
    expect(Number(Object.values(rows[0]!)[0])).toBe(1000);
    const started = performance.now();
    await executor.close();
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe("page size", () => {
  const pragma = (path: string, name: string) => {
    const db = new Database(path, { readonly: true });
    try {
      return Object.values(db.prepare(`PRAGMA ${name}`).get() as object)[0];
    } finally {
      db.close();
    }
  };

  test("a new database file has 4 KiB pages, and its backstop is still 40 MiB of WAL", async () => {
    const path = tempFile();
    const store = await openLibsqlStore({ url: `file:${path}` });
    const { live } = await newOrganization(store);
    await addCertificate(store, certificateRecord(live));
    await store.close();
    expect(pragma(path, "page_size")).toBe(4096);
    expect(pragma(path, "journal_mode")).toBe("wal");

    const executor = new LocalExecutor(path, { busyTimeoutMs: 1_000 });
    await executor.checkpointInBackground(path);
    const { rows } = await executor.execute("PRAGMA wal_autocheckpoint");
    expect(Number(Object.values(rows[0]!)[0])).toBe(BACKSTOP_BYTES / 4096);
    await executor.close();
  });

  test("a database made with 16 KiB pages keeps them, its data and a 40 MiB backstop; its backup has 4 KiB pages and the same data", async () => {
    const path = tempFile();
    // As the release before this one created it.
    const old = new Database(path);
    old.exec("PRAGMA page_size = 16384; PRAGMA journal_mode = WAL");
    old.close();
    expect(pragma(path, "page_size")).toBe(16_384);
    const store = await openLibsqlStore({ url: `file:${path}` });
    const { live } = await newOrganization(store);
    const records = [certificateRecord(live), certificateRecord(live)];
    for (const record of records) await addCertificate(store, record);
    await store.close();
    expect(pragma(path, "page_size")).toBe(16_384);
    // Its backstop is still 40 MiB of WAL, counted in its own pages.
    const executor = new LocalExecutor(path, { busyTimeoutMs: 1_000 });
    await executor.checkpointInBackground(path);
    const { rows } = await executor.execute("PRAGMA wal_autocheckpoint");
    expect(Number(Object.values(rows[0]!)[0])).toBe(BACKSTOP_BYTES / 16_384);
    await executor.close();

    const copy = `${path}.backup`;
    await backupLibsqlFile(`file:${path}`, copy);
    expect(pragma(copy, "page_size")).toBe(4096);
    const restored = await openLibsqlStore({ url: `file:${copy}` });
    for (const record of records) expect(await restored.certificates.get(live, record.id)).toEqual(record);
    await restored.close();
    expect(pragma(copy, "page_size")).toBe(4096);
  });
});

describe("certificate rows", () => {
  test("an endpoint serving the certificate's own details stores a mark, not a copy, and reads back as that same object", async () => {
    const path = tempFile();
    const store = await openLibsqlStore({ url: `file:${path}` });
    const { live } = await newOrganization(store);
    const base = certificateRecord(live);
    const other = certificateDetails(base.domain, { notAfter: NOW + 10 * DAY });
    const record = {
      ...base,
      endpoints: [
        { address: "192.0.2.1", fingerprint: "fp-a", details: base.details, problem: null, failure: null, tls: base.tls },
        { address: "192.0.2.2", fingerprint: "fp-b", details: other, problem: null, failure: null, tls: base.tls },
        { address: "192.0.2.3", fingerprint: null, details: null, problem: null, failure: "timeout" as const, tls: null },
      ],
    };
    await addCertificate(store, record);
    const read = (await store.certificates.get(live, record.id))!;
    expect(read).toEqual(record);
    expect(read.endpoints[0]!.details).toBe(read.details);
    expect(read.endpoints[1]!.details).not.toBe(read.details);

    const db = new Database(path);
    const stored = JSON.parse((db.prepare("SELECT endpoints FROM certificates WHERE id = ?").get(record.id) as { endpoints: string }).endpoints);
    expect(stored.map((endpoint: { details: unknown }) => (typeof endpoint.details === "string" ? endpoint.details : endpoint.details && "copy"))).toEqual(["=", "copy", null]);

    // A row written before the mark existed holds full copies, and reads the same.
    const fullCopies = JSON.stringify(record.endpoints);
    db.prepare("UPDATE certificates SET endpoints = ? WHERE id = ?").run(fullCopies, record.id);
    db.close();
    const old = (await store.certificates.get(live, record.id))!;
    expect(old.endpoints).toEqual(record.endpoints);
    await store.close();
  });
});
