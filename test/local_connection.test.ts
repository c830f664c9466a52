/**
 * A local database's connection lives on a thread of its own (adapters/libsql/local_executor.ts):
 * the event loop stays free while SQLite works or waits, and the thread never outlives its use.
 */
import { describe, expect, test } from "bun:test";
import Database from "libsql";
import { join } from "node:path";
import { LocalExecutor } from "../adapters/libsql/local_executor.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { certificateRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { threadsNamed } from "./support/threads.ts";
import { temporaryDirectory } from "./support/temp.ts";

const tempDir = () => temporaryDirectory("certkeeper-connection-");

/**
 * `work` on a table `t` while another process (as the CLI would be) holds the write lock: timers keep
 * firing while it waits (a wait on the event loop would freeze them), and once the other connection,
 * served by this event loop, commits, `work` goes through. What it gave, and the table's values.
 */
async function waitingForAnotherProcess<T>(work: (executor: LocalExecutor) => Promise<T>): Promise<{ result: T; values: unknown[] }> {
  const path = join(tempDir(), "db.sqlite");
  const executor = new LocalExecutor(path, { busyTimeoutMs: 5_000 });
  await executor.execute("PRAGMA journal_mode = WAL");
  await executor.execute("CREATE TABLE t (v TEXT)");
  const other = new Database(path, { timeout: 1_000 });
  other.exec("BEGIN IMMEDIATE");
  other.exec("INSERT INTO t VALUES ('other')");
  const working = work(executor);
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(performance.now()), 10);
  await Bun.sleep(400);
  clearInterval(timer);
  const gaps = ticks.slice(1).map((at, i) => at - ticks[i]!);
  expect(ticks.length).toBeGreaterThan(10);
  expect(Math.max(...gaps)).toBeLessThan(1_000);
  other.exec("COMMIT");
  const result = await working;
  const { rows } = await executor.execute("SELECT v FROM t ORDER BY rowid");
  other.close();
  await executor.close();
  return { result, values: rows.map((row) => row.v) };
}

describe("the local database's connection thread", () => {
  test("a write waiting for another process's lock leaves the event loop free, and goes through when the lock is released", async () => {
    const { result, values } = await waitingForAnotherProcess((executor) => executor.execute("INSERT INTO t VALUES (?)", ["ours"]));
    expect(result.rowsAffected).toBe(1);
    expect(values).toEqual(["other", "ours"]);
  });

  test("a transaction whose BEGIN waits for another process's lock leaves the event loop free, and commits once the lock is released", async () => {
    const { result, values } = await waitingForAnotherProcess((executor) =>
      executor.transaction(async (tx) => {
        await tx.execute("INSERT INTO t VALUES (?)", ["ours"]);
        return (await tx.execute("SELECT COUNT(*) AS n FROM t")).rows[0]!.n;
      }),
    );
    expect(Number(result)).toBe(2);
    expect(values).toEqual(["other", "ours"]);
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

  test("a batch is one transaction: each statement's answer in order, or nothing at all when one fails", async () => {
    const executor = new LocalExecutor(":memory:", { busyTimeoutMs: 1_000 });
    await executor.execute("CREATE TABLE t (v TEXT PRIMARY KEY, n INTEGER)");
    const writes = executor.writes;
    const [inserted, read] = await executor.batch([
      { sql: "INSERT INTO t VALUES (?, ?), (?, ?)", args: ["a", 1, "b", 2] },
      { sql: "SELECT v FROM t ORDER BY v" },
    ]);
    expect(inserted!.rowsAffected).toBe(2);
    expect(read!.rows).toEqual([{ v: "a" }, { v: "b" }]);
    expect(executor.writes).toBe(writes + 1);

    const failed = await executor
      .batch([{ sql: "UPDATE t SET n = n + 10" }, { sql: "INSERT INTO t VALUES ('a', 3)" }])
      .catch((error: Error) => error);
    expect((failed as Error).name).toBe("ConstraintError");
    expect((await executor.execute("SELECT v, n FROM t ORDER BY v")).rows).toEqual([
      { v: "a", n: 1 },
      { v: "b", n: 2 },
    ]);
    expect(executor.writes).toBe(writes + 1);

    // A batch sent while a transaction is open waits for it, instead of running inside it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const open = executor.transaction(async (tx) => {
      await tx.execute("INSERT INTO t VALUES ('c', 3)");
      entered();
      await held;
      await tx.execute("INSERT INTO t VALUES ('d', 4)");
    });
    await inside;
    const counted = executor.batch([{ sql: "SELECT count(*) AS n FROM t" }]);
    await Bun.sleep(20);
    release();
    await open;
    expect((await counted)[0]!.rows).toEqual([{ n: 4 }]);
    await executor.close();
  });

  test("a statement waits for the transaction under way only, not for those queued behind it; an urgent transaction goes before them", async () => {
    const executor = new LocalExecutor(":memory:", { busyTimeoutMs: 1_000 });
    await executor.execute("CREATE TABLE log (v TEXT)");
    // A transaction that stays open until released, then fails: whatever ran inside it is undone.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const first = executor
      .transaction(async (tx) => {
        await tx.execute("INSERT INTO log VALUES ('first')");
        opened();
        await held;
        throw new Error("undone");
      })
      .catch((error: Error) => error.message);
    await open;
    const queued = [executor.transaction((tx) => tx.execute("INSERT INTO log VALUES ('queued 1')")), executor.transaction((tx) => tx.execute("INSERT INTO log VALUES ('queued 2')"))];
    const statement = executor.execute("INSERT INTO log VALUES ('statement')");
    const urgent = executor.urgent().transaction((tx) => tx.execute("INSERT INTO log VALUES ('urgent')"));
    await Bun.sleep(20);
    release();
    expect(await first).toBe("undone");
    await Promise.all([...queued, statement, urgent]);
    // The statement ran after the failed transaction (not inside it, or it would be undone too) and
    // before the transactions queued ahead of it; the urgent one before those.
    const { rows } = await executor.execute("SELECT v FROM log ORDER BY rowid");
    expect(rows.map((row) => row.v)).toEqual(["statement", "urgent", "queued 1", "queued 2"]);
    await executor.close();
  });

  test("a transaction's statements run without waiting a turn of the event loop each", async () => {
    const executor = new LocalExecutor(":memory:", { busyTimeoutMs: 1_000 });
    await executor.execute("CREATE TABLE t (n INTEGER)");
    // Counts turns of the event loop (one immediate per turn) while the transaction runs.
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    // On a machine busy with other processes the connection's thread may not run for a while, and a
    // statement slower than a millisecond is waited for over a few turns: the best of up to twelve
    // counts (six were not always enough beside the rest of the suite on a slow day).
    const runs: Array<{ turns: number; rows: unknown[] }> = [];
    for (let run = 0; run < 12 && !runs.some((r) => r.turns < 51); run++) {
      runs.push(
        await executor.transaction(async (tx) => {
          const before = turns;
          for (let i = 0; i < 50; i++) await tx.execute("INSERT INTO t VALUES (?)", [i]);
          const { rows } = await tx.execute("SELECT count(*) AS n FROM t");
          return { turns: turns - before, rows };
        }),
      );
    }
    ticking = false;
    // 51 statements, nearly all answered within the turn that began them: 2,311 turns when each was a
    // message there and back.
    expect(runs[0]!.rows).toEqual([{ n: 50 }]);
    expect(Math.min(...runs.map((r) => r.turns))).toBeLessThan(51);
    expect((await executor.execute("SELECT count(*) AS n FROM t")).rows).toEqual([{ n: 50 * runs.length }]);
    await executor.close();
  });

  test("two connections to one file (as two processes have) leasing at once lease disjoint sets", async () => {
    const url = `file:${join(tempDir(), "certkeeper.db")}`;
    const [one, two] = [await openLibsqlStore({ url }), await openLibsqlStore({ url })];
    const org = organizationRecord();
    await one.organizations.create(org);
    const scope = { organizationId: org.id, mode: "live" as const };
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      // Many share a due time: the two statements of a lease must pick the same rows among equals.
      const record = certificateRecord(scope, { nextCheckAt: NOW - (i % 4) });
      await one.certificates.insert(record, { limit: 100, events: [] });
      ids.push(record.id);
    }
    const leased: string[] = [];
    for (let round = 0; round < 5; round++) {
      const lease = { now: NOW, leaseUntil: NOW + 60_000, limit: 3 };
      const [a, b] = await Promise.all([
        one.certificates.claimDue({ ...lease, owner: "one" }),
        two.certificates.claimDue({ ...lease, owner: "two" }),
      ]);
      expect(a).toHaveLength(3);
      expect(b).toHaveLength(3);
      leased.push(...a.map((r) => r.id), ...b.map((r) => r.id));
    }
    expect(new Set(leased).size).toBe(30);
    // The ten left are exactly those not leased, and still due.
    const rest = await one.certificates.claimDue({ owner: "one", now: NOW, leaseUntil: NOW + 60_000, limit: 100 });
    expect(rest.map((r) => r.id).sort()).toEqual(ids.filter((id) => !leased.includes(id)).sort());
    await one.close();
    await two.close();
  });

  test("a database file that cannot be opened fails the open with SQLite's reason", async () => {
    // A folder where the file should be.
    const folder = tempDir();
    const opened = await openLibsqlStore({ url: `file:${folder}` }).catch((error: Error) => error);
    expect(opened).toBeInstanceOf(Error);
    expect((opened as Error).message).toMatch(/unable to open|directory|not a database/i);
  });

  test("a process whose only work is a transaction waiting for another process's lock stays until it commits", async () => {
    const path = join(tempDir(), "db.sqlite");
    const setup = new Database(path);
    setup.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT)");
    setup.close();
    // This test's connection holds the write lock; the child's transaction (nothing else of its own
    // under way, no timer) waits for it.
    const other = new Database(path, { timeout: 1_000 });
    other.exec("BEGIN IMMEDIATE");
    const script = `
      import { LocalExecutor } from ${JSON.stringify(join(import.meta.dir, "../adapters/libsql/local_executor.ts"))};
      const executor = new LocalExecutor(${JSON.stringify(path)}, { busyTimeoutMs: 10_000 });
      await executor.transaction((tx) => tx.execute("INSERT INTO t VALUES ('child')"));
      console.log("committed");
    `;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const early = await Promise.race([child.exited.then((code) => `exited ${code}`), Bun.sleep(1_500).then(() => "waiting")]);
    other.exec("COMMIT");
    other.close();
    const exited = await Promise.race([child.exited, Bun.sleep(15_000).then(() => "still running")]);
    if (exited === "still running") child.kill();
    expect(early).toBe("waiting");
    expect([exited, (await new Response(child.stdout).text()).trim()]).toEqual([0, "committed"]);
  }, 25_000);

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

describe("a command's connection, on the event loop (thread: false)", () => {
  test("a store opened for a command starts no database thread; one opened for a server does", async () => {
    const url = `file:${join(tempDir(), "certkeeper.db")}`;
    const before = threadsNamed("ck-database");
    if (before === null) return console.log("skipped: no /proc/self/task to count threads in");
    const brief = await openLibsqlStore({ url, thread: false, backgroundCheckpoints: false });
    await brief.organizations.create(organizationRecord());
    expect(threadsNamed("ck-database")).toBe(before);
    await brief.close();
    const server = await openLibsqlStore({ url });
    expect(await server.organizations.list()).toHaveLength(1);
    expect(threadsNamed("ck-database")).toBe(before + 1);
    await server.close();
  });

  test("the same rules as on a thread: rows, SQLite's errors, a failed transaction or batch leaves nothing, and a statement sent during a transaction runs after it", async () => {
    const executor = new LocalExecutor(":memory:", { busyTimeoutMs: 1_000, thread: false });
    await executor.execute("CREATE TABLE t (v TEXT PRIMARY KEY)");
    expect((await executor.execute("INSERT INTO t VALUES (?) RETURNING v", ["a"])).rows).toEqual([{ v: "a" }]);
    expect(((await executor.execute("SELEKT 1").catch((error: Error) => error)) as Error).message).toContain("syntax error");
    const writes = executor.writes;
    const failed = await executor
      .transaction(async (tx) => {
        await tx.execute("INSERT INTO t VALUES ('b')");
        await tx.execute("INSERT INTO t VALUES ('a')");
      })
      .catch((error: Error) => error);
    expect((failed as Error).name).toBe("ConstraintError");
    expect(((await executor.batch([{ sql: "INSERT INTO t VALUES ('c')" }, { sql: "INSERT INTO t VALUES ('a')" }]).catch((error: Error) => error)) as Error).name).toBe("ConstraintError");
    expect((await executor.execute("SELECT v FROM t ORDER BY v")).rows).toEqual([{ v: "a" }]);
    expect(executor.writes).toBe(writes);

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const open = executor
      .transaction(async (tx) => {
        await tx.execute("INSERT INTO t VALUES ('d')");
        entered();
        await held;
        throw new Error("undone");
      })
      .catch((error: Error) => error.message);
    await inside;
    const statement = executor.execute("INSERT INTO t VALUES ('e')");
    await Bun.sleep(20);
    release();
    expect(await open).toBe("undone");
    await statement;
    // Run after the transaction, not inside it (or it would have been undone with it).
    expect((await executor.execute("SELECT v FROM t ORDER BY v")).rows).toEqual([{ v: "a" }, { v: "e" }]);
    await executor.close();
    await expect(executor.execute("SELECT 1").catch((error: Error) => error.message)).resolves.toBe("The database connection is closed");
  });
});
