/** A consistent copy of a local libSQL (SQLite) database file, taken while others read and write it. */
import { closeSync, existsSync, linkSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import Database from "libsql";
import { localPath, PAGE_SIZE } from "./mod.ts";

/**
 * Copies the database at `url` (a `file:` URL) to the new file `to` with `VACUUM INTO`: one snapshot,
 * compacted, in rollback-journal mode, openable on its own (no -wal file beside it), with the pages
 * of a database certkeeper creates (PAGE_SIZE), whatever the source's.
 *
 * The copy is written beside `to` under another name and given its name only once complete (a hard
 * link, which never replaces a file that appeared meanwhile): a backup killed midway leaves no `to`
 * that would open as an empty database, only a `.partial` file to remove.
 */
export async function backupLibsqlFile(url: string, to: string): Promise<{ bytes: number }> {
  // Read as the server reads it: %-escapes decoded, a `//localhost` authority dropped.
  const source = localPath(url);
  if (source === null) throw new Error("the database is not a local file (CERTKEEPER_DATABASE_URL)");
  if (!existsSync(source)) throw new Error(`the database file "${source}" does not exist (CERTKEEPER_DATABASE_URL)`);
  // One connection of libSQL's own driver: the page size asked for is that connection's, and VACUUM
  // INTO reads it (the source keeps its own: it is not empty, and VACUUM INTO never writes it).
  // Named by this process, so another backup running at once never shares it; one left by a killed
  // backup of an earlier process of the same id (a container's pid 1) is no one's: removed first.
  const partial = `${to}.${process.pid}.partial`;
  rmSync(partial, { force: true });
  rmSync(`${partial}-journal`, { force: true });
  // Readable by this user alone, as the database it copies (VACUUM INTO fills an empty file).
  closeSync(openSync(partial, "wx", 0o600));
  const db = new Database(source, { timeout: 10_000 });
  try {
    db.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
    db.prepare("VACUUM INTO ?").run([partial]);
    db.close();
    try {
      linkSync(partial, to);
    } catch (error) {
      // A file system without hard links: renamed, unless FILE appeared meanwhile.
      if ((error as NodeJS.ErrnoException).code === "EEXIST" || existsSync(to)) throw error;
      renameSync(partial, to);
    }
  } finally {
    if (db.open) db.close();
    rmSync(partial, { force: true });
    rmSync(`${partial}-journal`, { force: true });
  }
  return { bytes: statSync(to).size };
}
