/**
 * A database file certkeeper creates is readable by its user alone (0600, and its -wal and -shm files
 * with it; a folder made for it 0700), and so is a backup's copy: it holds channels' signing secrets,
 * chat URLs and tokens. An existing file keeps its own permissions (an operator may have chosen them).
 */
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { backupLibsqlFile } from "../adapters/libsql/backup.ts";

const dir = mkdtempSync(join(tmpdir(), "certkeeper-private-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const mode = (path: string) => statSync(path).mode & 0o777;

test("a new database file and its folder: 0600 and 0700, the -wal and -shm files 0600", async () => {
  const path = join(dir, "made", "deeper", "certkeeper.db");
  const store = await openLibsqlStore({ url: `file:${path}` });
  try {
    await store.ping();
    expect([mode(path), mode(`${path}-wal`), mode(`${path}-shm`)]).toEqual([0o600, 0o600, 0o600]);
    expect([mode(join(dir, "made")), mode(join(dir, "made", "deeper"))]).toEqual([0o700, 0o700]);
  } finally {
    await store.close();
  }
});

test("an existing database file keeps the permissions it has", async () => {
  const path = join(dir, "existing.db");
  writeFileSync(path, "");
  chmodSync(path, 0o640);
  const store = await openLibsqlStore({ url: `file:${path}` });
  try {
    await store.ping();
    expect(mode(path)).toBe(0o640);
  } finally {
    await store.close();
  }
});

test("a backup's copy is readable by its user alone too", async () => {
  const path = join(dir, "source.db");
  const store = await openLibsqlStore({ url: `file:${path}` });
  await store.ping();
  await store.close();
  const to = join(dir, "copy.db");
  await backupLibsqlFile(`file:${path}`, to);
  expect(mode(to)).toBe(0o600);
});
