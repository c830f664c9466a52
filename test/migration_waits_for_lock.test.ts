/**
 * A process that starts while another holds the database's write lock for longer than a write waits
 * (another process upgrading a large database: migration 8 recomputes every certificate's timeline,
 * 7 s at 40,000 certificates, where a write waits 10 s) waits the lock out and opens the database,
 * instead of failing to start with "database is locked". A database that stays locked past the wait
 * still fails, naming the lock.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { migrate } from "../adapters/sql/migrations.ts";
import { LocalExecutor } from "../adapters/libsql/local_executor.ts";
import { temporaryDirectory } from "./support/temp.ts";

const dir = temporaryDirectory("certkeeper-migration-lock-");

/** Another connection to `path` holding the write lock (as a long upgrade does) until release(). */
async function holdWriteLock(path: string) {
  const other = createClient({ url: `file:${path}` });
  const tx = await other.transaction("write");
  await tx.execute("CREATE TABLE IF NOT EXISTS held (x INTEGER)");
  const held = {
    released: false,
    release: async () => {
      held.released = true;
      await tx.commit();
      other.close();
    },
  };
  return held;
}

test("opening waits for another process's write lock held longer than a write waits, then opens", async () => {
  const path = join(dir, "locked.db");
  const first = await openLibsqlStore({ url: `file:${path}` });
  await first.close();
  const lock = await holdWriteLock(path);
  // A write waits 100 ms here; the lock is held 1.5 s.
  setTimeout(() => void lock.release(), 1500);
  const store = await openLibsqlStore({ url: `file:${path}`, busyTimeoutMs: 100 });
  // Opened once the other process let go, not before (it could not have) and not failing meanwhile.
  expect(lock.released).toBe(true);
  expect(await store.organizations.list()).toEqual([]);
  await store.close();
});

test("a lock held past the wait still fails, naming the lock", async () => {
  const path = join(dir, "stuck.db");
  const first = await openLibsqlStore({ url: `file:${path}` });
  await first.close();
  const lock = await holdWriteLock(path);
  const executor = new LocalExecutor(path, { busyTimeoutMs: 100 });
  try {
    await expect(migrate(executor, { waitMs: 500 })).rejects.toThrow(/locked|BUSY/i);
  } finally {
    await executor.close();
    await lock.release();
  }
});
