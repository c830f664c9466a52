/** `backupLibsqlFile()`: the copy is its owner's alone, and a database that is no local file is refused. */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { backupLibsqlFile } from "../adapters/libsql/backup.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";

const dir = mkdtempSync(join(tmpdir(), "certkeeper-backup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a backup is readable and writable by its owner alone (mode 0600), whatever the umask lets through", async () => {
  const url = `file:${join(dir, "certkeeper.db")}`;
  const store = await openLibsqlStore({ url });
  const org = organizationRecord();
  await store.organizations.create(org);
  await store.close();
  const previous = process.umask(0o022);
  try {
    const to = join(dir, "copy.db");
    await backupLibsqlFile(url, to);
    expect(statSync(to).mode & 0o777).toBe(0o600);
    const copy = await openLibsqlStore({ url: `file:${to}` });
    try {
      expect((await copy.organizations.get(org.id))?.id).toBe(org.id);
    } finally {
      await copy.close();
    }
  } finally {
    process.umask(previous);
  }
});

test("a database that is no local file (a libSQL server) is refused with the reason, and nothing is written", async () => {
  const to = join(dir, "remote.db");
  await expect(backupLibsqlFile("libsql://127.0.0.1:1", to)).rejects.toThrow("not a local file");
  expect(existsSync(to)).toBe(false);
});
