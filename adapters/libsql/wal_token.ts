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
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const HEADER_BYTES = 48;
const HEADER_WORDS = HEADER_BYTES / 4;

type Mmap = (path: string, options: { shared: boolean }) => Uint8Array;

/** The token: a string that stays the same object while the header does, and a new one when it moved. */
export function walChangeToken(databasePath: string): () => string {
  const shmPath = `${databasePath}-shm`;
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

  return () => {
    if (mapped) return settle(mapped);
    try {
      fd ??= openSync(shmPath, "r");
      // Mapped only once SQLite has sized the index (a mapping past the end of a file faults on access).
      if (mmap && fstatSync(fd).size >= 4096) {
        try {
          const bytes = mmap(shmPath, { shared: true });
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
}
