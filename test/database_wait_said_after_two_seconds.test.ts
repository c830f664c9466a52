/**
 * Opening the database says a wait for it only once it has lasted 2 s (docs/operations.md): a database
 * server started beside certkeeper (a compose file) refuses connections for a moment at every start,
 * and that is no wait to warn about. A longer one is said once, with its reason; this process's own
 * upgrade is said as an upgrade, not as a wait for another process.
 */
import { expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { migrate, SCHEMA_VERSION, type MigrationReport } from "../adapters/sql/migrations.ts";
import type { Executor } from "../adapters/sql/mod.ts";
import { StorageUnavailableError } from "../core/store/ports.ts";
import { executorOver } from "./support/executor_over.ts";

/** `executor`, as a server that refuses connections until `ms` have passed. */
function refusingFor(executor: Executor, ms: number): Executor {
  const until = Date.now() + ms;
  const gate = () => {
    if (Date.now() < until) throw new StorageUnavailableError("unreachable");
  };
  return {
    execute: async (sql, args) => (gate(), executor.execute(sql, args)),
    batch: async (statements) => (gate(), executor.batch(statements)),
    transaction: async (fn) => (gate(), executor.transaction(fn)),
    close: () => executor.close(),
  };
}

/** Everything `migrate` reported, in order. */
function recorder() {
  const said: Array<[string, unknown]> = [];
  const report: MigrationReport = {
    waiting: (wait) => said.push(["waiting", wait.reason]),
    upgrading: (upgrade) => said.push(["upgrading", [upgrade.from, upgrade.to]]),
    upgraded: (upgrade) => said.push(["upgraded", [upgrade.from, upgrade.to]]),
  };
  return { said, report };
}

test("a database server that answers 300 ms after the start is not a wait to warn about (only one longer than 2 s is)", async () => {
  const executor = executorOver(createClient({ url: ":memory:" }));
  const { said, report } = recorder();
  try {
    await migrate(refusingFor(executor, 300), { report });
  } finally {
    await executor.close();
  }
  expect(said).toEqual([]);
});

test("one that answers after 2.5 s is said once, as a server no connection can be made to yet", async () => {
  const executor = executorOver(createClient({ url: ":memory:" }));
  const { said, report } = recorder();
  try {
    await migrate(refusingFor(executor, 2500), { report });
  } finally {
    await executor.close();
  }
  expect(said).toEqual([["waiting", "unreachable"]]);
});

test("an upgrade is said as it begins and once done, and a long one of this process's own is no wait", async () => {
  const executor = executorOver(createClient({ url: ":memory:" }));
  const { said, report } = recorder();
  try {
    await migrate(executor, { until: 7 });
    // This process's own upgrade, slowed past 2 s (as a large database's is).
    const slow: Executor = { ...executor, transaction: (fn) => executor.transaction(async (tx) => { const result = await fn(tx); await Bun.sleep(2300); return result; }) };
    await migrate(slow, { report });
  } finally {
    await executor.close();
  }
  expect(said).toEqual([["upgrading", [7, SCHEMA_VERSION]], ["upgraded", [7, SCHEMA_VERSION]]]);
});

test("an upgrade of this process's own ended by another process's (after 2 s) is said once, and the wait that follows too", async () => {
  const executor = executorOver(createClient({ url: ":memory:" }));
  const { said, report } = recorder();
  try {
    await migrate(executor, { until: 7 });
    let attempts = 0;
    // The first attempt upgrades for 2.3 s, then loses its transaction to another process (rolled back).
    const contested: Executor = {
      ...executor,
      transaction: async (fn) => {
        if (++attempts > 1) return executor.transaction(fn);
        await executor
          .transaction(async (tx) => {
            await fn(tx);
            await Bun.sleep(2300);
            throw new Error("ended by the other process");
          })
          .catch(() => {});
        throw new StorageUnavailableError("busy");
      },
    };
    await migrate(contested, { report });
  } finally {
    await executor.close();
  }
  expect(said).toEqual([["upgrading", [7, SCHEMA_VERSION]], ["waiting", "busy"], ["upgraded", [7, SCHEMA_VERSION]]]);
});
