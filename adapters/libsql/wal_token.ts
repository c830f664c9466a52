/**
 * A change token for a local SQLite database in WAL mode, read from the WAL index (`-shm`) header.
 *
 * Every commit, by any process, rewrites that 48-byte header (its change counter, frame count and
 * checksums move). Where the runtime can map a file (Bun), the header is read from the same shared
 * memory SQLite itself reads it from: a comparison of twelve words, no system call. Elsewhere it is
 * one pread. Either way it costs microseconds at most, where even the cheapest query costs tens of
 * them: this is what lets the API cache key grants and rows while still seeing a key revoked by the CLI
 * on the very next request.
 *
 * The mapping is safe while this process keeps a connection open: SQLite truncates the index only when
 * the first connection of all opens it, and unlinks it only when the last one closes.
 */
import { closeSync, fstatSync, openSync, readSync, realpathSync } from "node:fs";

const HEADER_BYTES = 48;
const HEADER_WORDS = HEADER_BYTES / 4;

type Mmap = (path: string, options: { shared: boolean }) => Uint8Array;

export interface WalChangeToken {
  /** A string that stays the same while the header does, and is new when it moved. */
  read(): string;
  /** The connection closed: from now on every read is a token never seen before (nothing is cached). */
  close(): void;
}

/** The change token of the database at `databasePath`, for as long as this process's connection to it is open. */
export function walChangeToken(databasePath: string): WalChangeToken {
  // SQLite keeps the index beside the file a symbolic link points to, not beside the link.
  let shmPath: string | undefined;
  let closed = false;
  let mmap = (globalThis as { Bun?: { mmap?: Mmap } }).Bun?.mmap;
  const seen = new Uint32Array(HEADER_WORDS);
  let generation = 0;
  let token = "";
  let mapped: Uint32Array | undefined;
  let fd: number | undefined;
  const buffer = Buffer.alloc(HEADER_BYTES);
  const bufferWords = new Uint32Array(buffer.buffer, buffer.byteOffset, HEADER_WORDS);
  let unreadable = 0;

  /** Takes `words` as the header now; a new token only if it differs from the last one seen. */
  const settle = (words: Uint32Array): string => {
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

  const read = (): string => {
    if (closed) return `unreadable-${++unreadable}`;
    if (mapped) return settle(mapped);
    try {
      shmPath ??= `${realpathSync(databasePath)}-shm`;
      fd ??= openSync(shmPath, "r");
      // Mapped only once SQLite has sized the index (a mapping past the end of a file faults on access).
      if (mmap && fstatSync(fd).size >= 4096) {
        try {
          const bytes = mmap(shmPath!, { shared: true });
          mapped = new Uint32Array(bytes.buffer, bytes.byteOffset, HEADER_WORDS);
        } catch {
          mmap = undefined; // not mappable here (a read-only file): pread from now on
        }
        if (mapped) {
          closeSync(fd);
          fd = undefined;
          return settle(mapped);
        }
      }
      if (readSync(fd, buffer, 0, HEADER_BYTES, 0) === HEADER_BYTES) return settle(bufferWords);
    } catch {
      // The index is recreated when the last connection closes; reopen on the next read.
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    }
    // Unknown state: a token never seen before, so every cache treats it as a change.
    token = "";
    return `unreadable-${++unreadable}`;
  };
  return {
    read,
    close: () => {
      // A mapping of a file that SQLite may now truncate or remove is not read again.
      closed = true;
      mapped = undefined;
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
