/**
 * A local database's connection lives on a thread of its own (adapters/libsql/local_executor.ts):
 * the event loop stays free while SQLite works or waits, and the thread never outlives its use.
 */
import { describe, expect, test } from "bun:test";
import Database from "libsql";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalExecutor } from "../adapters/libsql/local_executor.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";

const tempDir = () => mkdtempSync(join(tmpdir(), "certkeeper-connection-"));

describe("the local database's connection thread", () => {
  test("a write waiting for another process's lock leaves the event loop free, and goes through when the lock is released", async () => {
    const path = join(tempDir(), "db.sqlite");
    const executor = new LocalExecutor(path, { busyTimeoutMs: 5_000 });
    await executor.execute("PRAGMA journal_mode = WAL");
    await executor.execute("CREATE TABLE t (v TEXT)");
    // Another process (as the CLI would be) holds the write lock.
    const other = new Database(path, { timeout: 1_000 });
    other.exec("BEGIN IMMEDIATE");
    other.exec("INSERT INTO t VALUES ('other')");

    const write = executor.execute("INSERT INTO t VALUES (?)", ["ours"]);
    // Timers keep firing while the write waits (on the event loop, the wait would have frozen them)...
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(performance.now()), 10);
    await Bun.sleep(400);
    clearInterval(timer);
    const gaps = ticks.slice(1).map((at, i) => at - ticks[i]!);
    expect(ticks.length).toBeGreaterThan(10);
    expect(Math.max(...gaps)).toBeLessThan(250);
    // ...and the other connection, served by this event loop, can commit: the waiting write then succeeds.
    other.exec("COMMIT");
    expect((await write).rowsAffected).toBe(1);
    const { rows } = await executor.execute("SELECT v FROM t ORDER BY rowid");
    expect(rows.map((row) => row.v)).toEqual(["other", "ours"]);
    other.close();
    await executor.close();
  });

  test("after close() a statement fails at once with the reason, and close() may be called again", async () => {
    const executor = new LocalExecutor(":memory:", { busyTimeoutMs: 1_000 });
    expect((await executor.execute("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await executor.close();
    await executor.close();
    await expect(executor.execute("SELECT 1").catch((error: Error) => error.message)).resolves.toBe("The database connection is closed");
  });

  test("a statement's error crosses the thread with SQLite's message, and a failed transaction leaves nothing behind", async () => {
    const executor = new LocalExecutor(":memory:", { busyTimeoutMs: 1_000 });
    await executor.execute("CREATE TABLE t (v TEXT PRIMARY KEY)");
    const syntax = await executor.execute("SELEKT 1").catch((error: Error) => error);
    expect(syntax).toBeInstanceOf(Error);
    expect((syntax as Error).message).toContain("syntax error");
    const writesBefore = executor.writes;
    const failed = await executor
      .transaction(async (tx) => {
        await tx.execute("INSERT INTO t VALUES ('a')");
        await tx.execute("INSERT INTO t VALUES ('a')");
      })
      .catch((error: Error) => error);
    expect((failed as Error).name).toBe("ConstraintError");
    expect((await executor.execute("SELECT count(*) AS n FROM t")).rows).toEqual([{ n: 0 }]);
    // Nothing was committed, so the change token's counter did not move.
    expect(executor.writes).toBe(writesBefore);
    await executor.close();
  });

  test("a database file that cannot be opened fails the open with SQLite's reason", async () => {
    // A folder where the file should be.
    const folder = tempDir();
    const opened = await openLibsqlStore({ url: `file:${folder}` }).catch((error: Error) => error);
    expect(opened).toBeInstanceOf(Error);
    expect((opened as Error).message).toMatch(/unable to open|directory|not a database/i);
  });

  test("a process that opens a database and never closes it still exits when its work is done", async () => {
    // In memory: with a file, the background checkpointer's thread still holds such a process (see the
    // README); the connection's own thread must not.
    const script = `
      import { openLibsqlStore } from ${JSON.stringify(join(import.meta.dir, "../adapters/libsql/mod.ts"))};
      const store = await openLibsqlStore({ url: ":memory:" });
      console.log(await store.ping());
    `;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const exited = await Promise.race([child.exited, Bun.sleep(15_000).then(() => "still running")]);
    if (exited === "still running") child.kill();
    expect(exited).toBe(0);
  }, 20_000);
});
