/**
 * `backup --to FILE` killed part-way (a cron or container time limit, the OOM killer) leaves no FILE
 * that is not a backup. The copy (SQLite's `VACUUM INTO`, which an interruption can leave incomplete)
 * is written beside FILE under another name and takes FILE's name only once complete: FILE is absent
 * or a whole copy that CERTKEEPER_DATABASE_URL=file:FILE opens as it was, and the next `backup --to FILE`
 * makes it.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { CLI_MAIN, runCliJson, tempWorkspace } from "./support/cli.ts";
import { backupLibsqlFile } from "../adapters/libsql/backup.ts";

setDefaultTimeout(180_000);

const ws = tempWorkspace("certkeeper-backup-killed-");
afterAll(() => ws.cleanup());

test("backup killed part-way: the file at --to is absent or a whole, consistent copy, and the next backup makes it", async () => {
  const env = { ...ws.env };
  const org = await runCliJson(["org", "create", "--name", "Acme"], { env });
  // A database of some size (a long events history), so that the copy takes a while.
  const db = createClient({ url: ws.env.CERTKEEPER_DATABASE_URL! });
  const data = JSON.stringify({ note: "x".repeat(2000) });
  for (let batch = 0; batch < 20; batch++) {
    await db.batch(
      Array.from({ length: 1000 }, (_, i) => ({
        sql: "INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, 'live', 'test', NULL, ?, ?)",
        args: [`evt_backup${batch}x${i}xxxxxxxxxx`, org.id, data, Date.now()],
      })),
      "write",
    );
  }
  db.close();

  const to = join(ws.dir, "backup.db");
  const child = Bun.spawn([process.execPath, CLI_MAIN, "backup", "--to", to], {
    cwd: resolve(import.meta.dir, ".."),
    env: { ...process.env, ...env, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  // Killed once the copy has begun writing (under FILE's name or another beside it), well before it ends.
  const writing = () => readdirSync(ws.dir).some((name) => name.startsWith("backup.db") && !name.endsWith("-journal") && statSync(join(ws.dir, name)).size > 0);
  const deadline = Date.now() + 30_000;
  while (!writing() && child.exitCode === null && Date.now() < deadline) await Bun.sleep(2);
  child.kill("SIGKILL");
  await child.exited;
  expect(child.signalCode).toBe("SIGKILL"); // it was still copying

  if (existsSync(to)) {
    // Whatever is there must be the database as it was, as CERTKEEPER_DATABASE_URL=file:FILE would
    // open it (read-write: a hot journal beside it is rolled back first): the organization, its events.
    let seen: string;
    try {
      const copy = new Database(to);
      try {
        const integrity = String((copy.prepare("PRAGMA integrity_check").raw(true).all([]) as unknown[][])[0]?.[0]);
        const organizations = (copy.prepare("SELECT id FROM organizations").raw(true).all([]) as unknown[][]).map((row) => String(row[0]));
        const events = Number((copy.prepare("SELECT COUNT(*) FROM events").raw(true).all([]) as unknown[][])[0]?.[0]);
        seen = `integrity ${integrity}; organizations ${JSON.stringify(organizations)}; events ${events}`;
      } finally {
        copy.close();
      }
    } catch (error) {
      seen = `cannot be read: ${(error as Error).message}`;
    }
    expect(seen).toBe(`integrity ok; organizations ${JSON.stringify([org.id])}; events 20000`);
  }
  // The next backup to the same path is made.
  const again = Bun.spawnSync([process.execPath, CLI_MAIN, "backup", "--to", to], { cwd: resolve(import.meta.dir, ".."), env: { ...process.env, ...env, NO_COLOR: "1" } });
  expect(again.exitCode).toBe(0);
  const copy = new Database(to, { readonly: true });
  expect(Number((copy.prepare("SELECT COUNT(*) FROM events").raw(true).all([]) as unknown[][])[0]?.[0])).toBe(20_000);
  copy.close();
});

test("a partial copy left by a killed backup of a process with the same id (a container's pid 1) does not stop the next", async () => {
  const env = { ...ws.env };
  await runCliJson(["org", "create", "--name", "Again"], { env });
  const to = join(ws.dir, "again.db");
  writeFileSync(`${to}.${process.pid}.partial`, "x".repeat(8192));
  await backupLibsqlFile(ws.env.CERTKEEPER_DATABASE_URL!, to);
  const copy = new Database(to, { readonly: true });
  expect((copy.prepare("SELECT name FROM organizations").raw(true).all([]) as unknown[][]).map((row) => row[0])).toContain("Again");
  copy.close();
  expect(existsSync(`${to}.${process.pid}.partial`)).toBe(false);
});
