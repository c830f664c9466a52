/**
 * The change token of a local database (adapters/libsql/wal_token.ts): read from the WAL index header
 * SQLite keeps beside the database file, it moves with every commit by any connection and only then,
 * follows a database reached through a symbolic link, and once the store is closed never repeats.
 */
import { afterEach, describe, expect, test } from "bun:test";
import Database from "libsql";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { walChangeToken } from "../adapters/libsql/wal_token.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";

const dirs: string[] = [];
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-wal-token-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A database in WAL mode held open by `owner` (as the server's connection is), and another connection (as the CLI's). */
function database(path: string) {
  const owner = new Database(path);
  owner.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x)");
  const other = new Database(path);
  return { owner, other };
}

describe("walChangeToken", () => {
  test("moves with every commit of another connection, and stays put while nothing is written", () => {
    const path = join(folder(), "a.db");
    const { owner, other } = database(path);
    const token = walChangeToken(path);
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const before = token.read();
      expect(token.read()).toBe(before);
      seen.add(before);
      other.exec(`INSERT INTO t VALUES (${i})`);
      expect(token.read()).not.toBe(before);
    }
    expect(seen.size).toBe(20);
    token.close();
    other.close();
    owner.close();
  });

  test("follows a database reached through a symbolic link, not a stale index beside the link", () => {
    const dir = folder();
    const { owner, other } = database(join(dir, "real.db"));
    symlinkSync(join(dir, "real.db"), join(dir, "link.db"));
    // A leftover index at the link's path (from before the file moved) must not be what is watched.
    copyFileSync(join(dir, "real.db-shm"), join(dir, "link.db-shm"));
    const token = walChangeToken(join(dir, "link.db"));
    const before = token.read();
    other.exec("INSERT INTO t VALUES (1)");
    expect(token.read()).not.toBe(before);
    token.close();
    other.close();
    owner.close();
  });

  test("once closed, every read is a token never seen before, so nothing stays cached", () => {
    const path = join(folder(), "c.db");
    const { owner, other } = database(path);
    const token = walChangeToken(path);
    token.read();
    token.close();
    const after = [token.read(), token.read(), token.read()];
    expect(new Set(after).size).toBe(3);
    other.close();
    owner.close();
  });

  test("a store's token stops when the store closes", async () => {
    const path = join(folder(), "s.db");
    const store = await openLibsqlStore({ url: `file:${path}` });
    const first = store.changeToken!();
    expect(store.changeToken!()).toBe(first);
    await store.close();
    expect(store.changeToken!()).not.toBe(store.changeToken!());
  });
});
