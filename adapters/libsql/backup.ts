/** A consistent copy of a local libSQL (SQLite) database file, taken while others read and write it. */
import { existsSync, statSync } from "node:fs";
import { createClient } from "@libsql/client";
import { PAGE_SIZE } from "./mod.ts";

/**
 * Copies the database at `url` (a `file:` URL) to the new file `to` with `VACUUM INTO`: one snapshot,
 * compacted, in rollback-journal mode, openable on its own (no -wal file beside it), with the pages
 * of a database certkeeper creates (PAGE_SIZE), whatever the source's.
 */
export async function backupLibsqlFile(url: string, to: string): Promise<{ bytes: number }> {
  const source = url.slice("file:".length).split("?")[0]!;
  if (!existsSync(source)) throw new Error(`the database file "${source}" does not exist (CERTKEEPER_DATABASE_URL)`);
  const client = createClient({ url, timeout: 10_000 });
  try {
    // Read by VACUUM INTO alone: the source's own page size cannot change in WAL mode.
    await client.execute(`PRAGMA page_size = ${PAGE_SIZE}`);
    await client.execute({ sql: "VACUUM INTO ?", args: [to] });
  } finally {
    client.close();
  }
  return { bytes: statSync(to).size };
}
