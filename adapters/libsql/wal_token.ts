/**
 * A change token for a local SQLite database in WAL mode, read from the WAL index (`-shm`) header.
 *
 * Every commit, by any process, rewrites that 48-byte header (its change counter, frame count and
 * checksums move). Reading it is one pread, microseconds, where even the cheapest query costs tens of
 * them: this is what lets the API cache key grants and rows while still seeing a key revoked by the CLI
 * on the very next request. The header is compared word by word with the last one read, and a new token
 * string is made only when it moved.
 *
 * The descriptor stays open until the connection has closed. Closing any descriptor of a file releases
 * every POSIX lock this process holds on it, SQLite's included: with its lock on the index gone, another
 * process opening the database would take itself for the first and truncate the index under this one's
 * feet (a bus error). For the same reason the index is not mapped with `Bun.mmap`, which opens and
 * closes a descriptor of its own.
 */
import { closeSync, openSync, readSync, realpathSync } from "node:fs";

const HEADER_BYTES = 48;
const HEADER_WORDS = HEADER_BYTES / 4;

export interface WalChangeToken {
  /** A string that stays the same while the header does, and is new when it moved. */
  read(): string;
  /** The connection has closed: from now on every read is a token never seen before (nothing is cached). */
  close(): void;
}

/** The change token of the database at `databasePath`, for as long as this process's connection to it is open. */
export function walChangeToken(databasePath: string): WalChangeToken {
  let fd: number | undefined;
  let closed = false;
  const buffer = Buffer.alloc(HEADER_BYTES);
  const words = new Uint32Array(buffer.buffer, buffer.byteOffset, HEADER_WORDS);
  const seen = new Uint32Array(HEADER_WORDS);
  let generation = 0;
  let token = "";
  let unreadable = 0;

  /** The header just read as a token: the last one unless a word moved. */
  const settle = (): string => {
    let same = token !== "";
    for (let i = 0; i < HEADER_WORDS; i++) {
      if (words[i] !== seen[i]) {
        same = false;
        seen[i] = words[i]!;
      }
    }
    if (!same) token = `wal${++generation}`;
    return token;
  };

  return {
    read() {
      if (!closed) {
        try {
          // SQLite keeps the index beside the file a symbolic link points to, not beside the link.
          fd ??= openSync(`${realpathSync(databasePath)}-shm`, "r");
          if (readSync(fd, buffer, 0, HEADER_BYTES, 0) === HEADER_BYTES) return settle();
        } catch {
          // Not there yet (SQLite makes it with the first read): asked again next time.
        }
      }
      // Unknown state: a token never seen before, so every cache treats it as a change.
      token = "";
      return `unreadable-${++unreadable}`;
    },
    close() {
      closed = true;
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
