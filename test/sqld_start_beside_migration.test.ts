/**
 * A process starting while another holds sqld's write lock for longer than one request's time limit
 * (another process upgrading a large database) waits it out and opens the database, as a start beside
 * an upgrade does on a file, instead of failing as storage_unavailable (no answer).
 */
import { expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { startSqld } from "./support/sqld.ts";

test("opening waits out another process's write lock on sqld held longer than a request's time limit, then opens", async () => {
  const sqld = await startSqld();
  const first = await openLibsqlStore({ url: sqld.url });
  await first.close();
  const other = createClient({ url: sqld.url });
  try {
    // Another process, mid-migration: a write transaction kept busy (not idle) for 3 s.
    const tx = await other.transaction("write");
    await tx.execute("CREATE TABLE IF NOT EXISTS upgrade_probe (id INTEGER PRIMARY KEY)");
    const busyFor = (async () => {
      const until = performance.now() + 3000;
      while (performance.now() < until) {
        await tx.execute("INSERT INTO upgrade_probe DEFAULT VALUES");
        await Bun.sleep(200);
      }
      await tx.commit();
      tx.close();
    })();
    await Bun.sleep(100);
    const opened = await openLibsqlStore({ url: sqld.url, busyTimeoutMs: 500, requestTimeoutMs: 1000 }).then(
      (store) => store,
      (error) => error,
    );
    await busyFor;
    expect(opened).not.toBeInstanceOf(Error);
    await (opened as { close(): Promise<void> }).close?.();
  } finally {
    other.close();
    await sqld.close();
  }
}, 30_000);
