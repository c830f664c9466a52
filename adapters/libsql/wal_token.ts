/**
 * A change token for a local SQLite database in WAL mode, read from the WAL index (`-shm`) header.
 *
 * Every commit, by any process, rewrites that 48-byte header (its change counter, frame count and
 * checksums move). Reading it is one pread from shared memory, microseconds, where even the
 * cheapest query costs tens of them: this is what lets the API cache key grants and rows while
 * still seeing a key revoked by the CLI on the very next request.
 */
import { closeSync, openSync, readSync } from "node:fs";

const HEADER_BYTES = 48;

export function walChangeToken(databasePath: string): () => string {
  const buffer = Buffer.alloc(HEADER_BYTES);
  let fd: number | undefined;
  let unreadable = 0;
  return () => {
    try {
      fd ??= openSync(`${databasePath}-shm`, "r");
      const read = readSync(fd, buffer, 0, HEADER_BYTES, 0);
      if (read === HEADER_BYTES) return buffer.toString("base64");
    } catch {
      // The index is recreated when the last connection closes; reopen on the next read.
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    }
    // Unknown state: a token never seen before, so every cache treats it as a change.
    return `unreadable-${++unreadable}`;
  };
}
