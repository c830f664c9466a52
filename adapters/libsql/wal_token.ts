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

/**
 * The WAL index header of the database at `databasePath`, read into `words` (one pread). The index is
 * opened at the first read that finds it (SQLite makes it with the first read of the database).
 *
 * SQLite keeps two copies of the header and writes the second first: a read is taken only when both
 * copies agree, as SQLite's own readers take it (walIndexTryHdr). One caught half written would look
 * like a change that never happened.
 */
export function walIndexHeader(databasePath: string): { words: Uint32Array; read(): boolean; close(): void } {
  let fd: number | undefined;
  const buffer = Buffer.alloc(2 * HEADER_BYTES);
  const copies = new Uint32Array(buffer.buffer, buffer.byteOffset, 2 * HEADER_WORDS);
  const agree = () => {
    for (let i = 0; i < HEADER_WORDS; i++) if (copies[i] !== copies[HEADER_WORDS + i]) return false;
    return true;
  };
  return {
    words: copies.subarray(0, HEADER_WORDS),
    read() {
      try {
        // SQLite keeps the index beside the file a symbolic link points to, not beside the link.
        fd ??= openSync(`${realpathSync(databasePath)}-shm`, "r");
        // A copy being written is rewritten within microseconds (SQLite's barrier between the two).
        for (let tries = 0; tries < 64; tries++) {
          if (readSync(fd, buffer, 0, buffer.length, 0) !== buffer.length) return false;
          if (agree()) return true;
        }
        return false;
      } catch {
        // Not there yet: asked again next time.
        return false;
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/**
 * The change token of the database at `databasePath`, for as long as this process's connection to it
 * is open. With `own`, a header this process's own commits explain (ownWritesReader) does not move it:
 * the store then tells the caches what those commits changed (Store.onCertificatesWritten).
 */
export function walChangeToken(databasePath: string, own?: OwnWrites): WalChangeToken {
  const header = walIndexHeader(databasePath);
  const { words } = header;
  let closed = false;
  const seen = new Uint32Array(HEADER_WORDS);
  let generation = 0;
  let token = "";
  let unreadable = 0;

  /** The header just read as a token: the last one unless a word moved that this process's own commits do not explain. */
  const settle = (waitMs: number): string | undefined => {
    let same = token !== "";
    for (let i = 0; i < HEADER_WORDS && same; i++) same = words[i] === seen[i];
    // Asked at every read, not only at a move: it keeps count of other connections' commits as it answers.
    const verdict = own?.(words, !same, waitMs) ?? "change";
    // It waited for a commit of this process's to be published: the header is read again.
    if (verdict === "wait") return undefined;
    seen.set(words);
    if (!same && (token === "" || verdict !== "own")) token = `wal${++generation}`;
    return token;
  };

  return {
    read() {
      // Waiting for this process's quiet commits to be published: PENDING_WAIT_MS at most in all.
      let waitMs = PENDING_WAIT_MS;
      while (!closed && header.read()) {
        const started = performance.now();
        const settled = settle(waitMs);
        if (settled !== undefined) return settled;
        waitMs -= performance.now() - started;
      }
      // Unknown state: a token never seen before, so every cache treats it as a change.
      token = "";
      return `unreadable-${++unreadable}`;
    },
    close() {
      closed = true;
      header.close();
    },
  };
}

/**
 * The shared state of ownWritesPublisher and ownWritesReader: a sequence number; how many times the
 * thread found commits its quiet ones do not explain (another connection's, or its own that were not
 * quiet); whether a quiet request holds the write lock, its header not published yet (1) or not (0);
 * the header's words.
 */
const OWN_SEQUENCE = 0;
const OWN_UNEXPLAINED = 1;
const OWN_PENDING = 2;
const OWN_HEADER = 3;
/**
 * How long a read of the token waits, at most in all, for the header of a quiet request that holds the
 * write lock: it publishes within microseconds of its commit. Only a header that moved meanwhile is
 * waited for. No other connection can commit while the lock is held, so that move is most likely the
 * request's (or another's commit from just before the lock was taken, not read yet: then the wait is
 * for nothing, and the header, once published, is still not this connection's alone).
 */
const PENDING_WAIT_MS = 2;

/**
 * The connection's thread is gone (it failed, or stopped answering, perhaps inside a quiet request):
 * no request holds the lock for it any more, so no read waits on one.
 */
export function ownWritesEnded(state: Int32Array): void {
  Atomics.store(state, OWN_PENDING, 0);
  Atomics.notify(state, OWN_PENDING);
}

/** The memory the connection's thread and the event loop share for ownWritesPublisher and ownWritesReader. */
export function ownWritesState(): Int32Array {
  return new Int32Array(new SharedArrayBuffer((OWN_HEADER + HEADER_WORDS) * 4));
}

/** What the connection's thread does around its requests (ownWritesPublisher). */
export interface OwnWritesPublisher {
  /** Runs a request that is not quiet: a commit it makes is counted as unexplained. */
  watch<T>(request: () => T): T;
  /**
   * Runs a quiet request, and publishes the header it leaves at once. The request calls `locked` once
   * its connection holds the write lock, before it commits (Connection.handle).
   */
  quiet<T>(request: (locked: () => void) => T): T;
  publish(): void;
  close(): void;
}

/**
 * The connection's thread, after each quiet request and each message it answered: the WAL index header as its quiet commits
 * left it, and how many times it found that another connection (another process, the CLI) had
 * committed (`PRAGMA data_version`, which this connection's own commits never move). The header is
 * read before and after data_version, and published only when both reads agree: then every commit
 * that data_version counted is in the header published, and every commit in that header before this
 * read was counted by now. A request that is not quiet runs inside watch(): if the header moved
 * meanwhile (it committed something), the next publication counts it as another connection's commit,
 * so the event loop takes that move for a change, as it takes any write it is not told of. Published
 * under a sequence number, odd while it is written.
 */
export function ownWritesPublisher(
  databasePath: string,
  state: Int32Array,
  dataVersion: () => number | null,
): OwnWritesPublisher {
  const header = walIndexHeader(databasePath);
  const before = new Uint32Array(HEADER_WORDS);
  let version: number | null | undefined;
  let closed = false;
  /** A commit that was not quiet since the last publication. */
  let counted = false;
  const same = () => header.words.every((word, i) => word === before[i]);
  const write = (words: Uint32Array | null, unexplained: boolean) => {
    Atomics.add(state, OWN_SEQUENCE, 1);
    if (unexplained) Atomics.add(state, OWN_UNEXPLAINED, 1);
    // None: a header no read ever matches (all ones), so nothing is taken for this connection's.
    for (let i = 0; i < HEADER_WORDS; i++) Atomics.store(state, OWN_HEADER + i, words ? words[i]! | 0 : -1);
    Atomics.add(state, OWN_SEQUENCE, 1);
  };
  const settled = () => {
    Atomics.store(state, OWN_PENDING, 0);
    Atomics.notify(state, OWN_PENDING);
  };
  const publisher: OwnWritesPublisher = {
    watch(request) {
      if (closed || !header.read()) {
        counted = true;
        return request();
      }
      before.set(header.words);
      const result = request();
      if (!header.read() || !same()) counted = true;
      return result;
    },
    quiet(request) {
      // Published at once, not at the end of the message: until then, a reader that finds the header
      // moved by this commit waits for it instead of taking it for another connection's. Only once the
      // lock is held: while the request waits for another process's lock, that process's commits are
      // changes, and no reader may wait on them.
      if (closed) return request(() => {});
      try {
        return request(() => Atomics.store(state, OWN_PENDING, 1));
      } finally {
        publisher.publish();
        settled();
      }
    },
    publish() {
      if (closed) return;
      // Counted as another connection's commit would be: the event loop takes no header for this
      // connection's alone until it has read one that holds this commit, and counted it as a change.
      let unexplained = counted;
      counted = false;
      for (let tries = 0; tries < 3; tries++) {
        if (!header.read()) break;
        before.set(header.words);
        const now = dataVersion();
        unexplained ||= version !== undefined && (now === null || now !== version);
        version = now;
        if (!header.read()) break;
        if (same()) return write(header.words, unexplained);
      }
      // Unreadable, or commits landing between the reads: nothing can be taken for this connection's.
      write(null, true);
    },
    close() {
      closed = true;
      header.close();
      settled();
    },
  };
  return publisher;
}

/**
 * The event loop, at each read of the header: whether the header read is explained by this
 * connection's quiet commits alone, since the last header taken. It is when the header published is
 * the one just read and no unexplained commit (another connection's, or one of this connection's that
 * was not quiet) was counted since the last header taken this way: each one counted is in the header
 * published with it, so none is missed. Anything else (a header not yet published, a read torn by a
 * publication) answers false: a change. A header that did not move is asked about too, to keep count.
 *
 * A header that moved while a quiet request holds the write lock is most likely that request's commit,
 * read in the microseconds before its publication: the reader waits for the publication
 * (PENDING_WAIT_MS at most in all) and compares again. Taken for a change, it would empty every cache
 * a few times a second under a steady stream of checks (measured: 4–5 times a second at 50 checks a
 * second, nearly every GET then read from the database).
 */
export function ownWritesReader(state: Int32Array): OwnWrites {
  let unexplainedSeen = 0;
  return (words, moved, waitMs) => {
    for (let tries = 0; tries < 64; tries++) {
      const sequence = Atomics.load(state, OWN_SEQUENCE);
      if ((sequence & 1) !== 0) continue;
      const unexplained = Atomics.load(state, OWN_UNEXPLAINED);
      let same = true;
      for (let i = 0; i < HEADER_WORDS && same; i++) same = Atomics.load(state, OWN_HEADER + i) >>> 0 === words[i];
      if (Atomics.load(state, OWN_SEQUENCE) !== sequence) continue;
      if (!same) {
        if (!moved || !(waitMs > 0) || Atomics.load(state, OWN_PENDING) !== 1) return "change";
        Atomics.wait(state, OWN_PENDING, 1, waitMs);
        return "wait";
      }
      const quiet = unexplained === unexplainedSeen;
      unexplainedSeen = unexplained;
      return quiet ? "own" : "change";
    }
    return "change";
  };
}

/**
 * Whether a header just read (`moved`: not the one read before) is explained by this process's quiet
 * commits alone ("own"), is a change ("change"), or may be a quiet commit about to be published:
 * "wait" (only with `waitMs` left), once it has waited for the publication; the header is then read again.
 */
export type OwnWrites = (words: Uint32Array, moved: boolean, waitMs: number) => "own" | "change" | "wait";
