/**
 * The background checkpointer's backstop (adapters/libsql/checkpointer.ts, docs/operations.md: the WAL
 * "may reach about 40 MB ... before SQLite's own checkpoint steps in"): the main connection's own
 * automatic checkpoint moves to 40 MiB of WAL, in pages, while the thread runs.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalExecutor } from "../adapters/libsql/local_executor.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test("with the checkpointer running, the main connection checkpoints by itself only past 40 MiB of WAL (10,240 pages of 4 KiB)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-backstop-"));
  dirs.push(dir);
  const path = join(dir, "certkeeper.db");
  const executor = new LocalExecutor(path, { busyTimeoutMs: 1_000 });
  try {
    await executor.execute("PRAGMA journal_mode = WAL");
    const before = await executor.execute("PRAGMA wal_autocheckpoint");
    expect(Number(Object.values(before.rows[0]!)[0])).toBe(1000);
    await executor.checkpointInBackground(path);
    const { rows } = await executor.execute("PRAGMA wal_autocheckpoint");
    expect(Number(Object.values(rows[0]!)[0])).toBe(10_240);
  } finally {
    await executor.close();
  }
});
