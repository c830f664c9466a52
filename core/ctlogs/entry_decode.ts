/**
 * Decoding one answer of a log into what the follower keeps of it: the roots of the aligned subtrees
 * its leaves form (for the compact range), the latest entry timestamp (for the watch index's
 * freshness), and the entries that name a watched domain or a name under one, with everything a match
 * needs (names, issuer, validity, issuance key, fingerprint). Everything else is dropped here.
 *
 * It is a pure function of bytes; an {@link EntryReader} fetches an answer and decodes it where it likes:
 * on the event loop (LocalEntryReader) or on a thread of its own (adapters/ct_threads), which keeps the
 * CPU of receiving, gunzip, JSON, base64, DER and SHA-256 off the event loop that answers the API.
 */
import { gunzipSync } from "node:zlib";
import { getRawFromLog, LogFailure, onTheWire, type LogHttp } from "./_log_http.ts";
import { EntryError, entryIdentity, readDataTile, readMerkleTreeLeaf, type LogEntry } from "./log_entry.ts";
import { leafHash, perfectRoot, subtreesCovering } from "./merkle.ts";
import type { TbsFields } from "./certificate_fields.ts";
import { MAX_RESPONSE_BYTES } from "./_log_http.ts";

/** The watched domains as a decoder filters by them, and which version of the watches they are. */
export interface WatchDomains {
  version: string;
  domains: ReadonlySet<string>;
}

export interface DecodeRequest {
  /** A get-entries answer (JSON) or a data tile (TileLeaf entries). */
  format: "get-entries" | "tile";
  body: Uint8Array;
  /** The body is gzip-compressed (tile logs may send it so unasked). */
  gzip: boolean;
  /** The log index of the body's first entry. */
  first: number;
  /** Tiles: how many entries the tile holds (its width). */
  width?: number;
  /** get-entries: how many entries were asked for; an answer with more is refused before any is decoded. */
  asked?: number;
  /** The entries kept: [from, to) in log indexes (default: all the body holds). */
  from?: number;
  to?: number;
}

/** An entry that names a watched domain, or a name under one: a candidate for matching. */
export interface Candidate {
  index: number;
  timestamp: number;
  fields: TbsFields;
  issuanceKey: string;
  fingerprint: string | null;
}

export interface DecodedChunk {
  /** The log indexes kept: [from, to). */
  from: number;
  to: number;
  /** The roots of the aligned subtrees covering [from, to), left to right: appended to a compact range. */
  roots: Array<{ size: number; hash: Uint8Array }>;
  /** The latest timestamp among the kept entries (0 when none could be read). */
  latest: number;
  candidates: Candidate[];
  /** Which watches the candidates were picked by. */
  version: string;
}

/** One answer of a log to fetch and decode: a get-entries URL, or a data tile's. */
export type EntryFetch = Omit<DecodeRequest, "body" | "gzip"> & {
  url: string;
  /** The request's time limit (CERTKEEPER_TLS_TIMEOUT × 3). */
  timeoutMs: number;
};

export interface EntryReader {
  /**
   * Fetches and decodes; rejects with a LogFailure when the log did not answer usably (HTTP), an
   * EntryError when its answer is unusable.
   */
  read(fetch: EntryFetch, watches: WatchDomains): Promise<DecodedChunk>;
  /**
   * Logs are about to be followed: a reader that works elsewhere (a thread) gets ready now, so that a
   * following process holds it from the start rather than from its first entries.
   */
  prepare?(): void;
}

/** Fetches and decodes on the event loop. */
export class LocalEntryReader implements EntryReader {
  constructor(private readonly http: Pick<LogHttp, "fetcher">) {}

  async read(fetch: EntryFetch, watches: WatchDomains): Promise<DecodedChunk> {
    const { url, timeoutMs, ...request } = fetch;
    const { body, gzip } = await getRawFromLog({ fetcher: this.http.fetcher, timeoutMs }, url, { maxBytes: onTheWire(answerBytes(request)) });
    return decodeChunk({ ...request, body, gzip }, watches);
  }
}


/** Whether a name, or a domain above it, is watched. */
export function namesWatched(names: readonly string[], domains: ReadonlySet<string>): boolean {
  for (const name of names) {
    if (domains.has(name)) return true;
    for (let dot = name.indexOf("."); dot >= 0; dot = name.indexOf(".", dot + 1)) if (domains.has(name.slice(dot + 1))) return true;
  }
  return false;
}

/** What an answer may hold per entry: an entry and its chain (extra_data, or a tile's fingerprints) are a few KiB. */
const BYTES_PER_ENTRY_ASKED = 64 * 1024;
const MIN_ANSWER_BYTES = 1024 * 1024;

/**
 * The most bytes an answer may hold, sent or decompressed: in proportion to the entries it holds (a
 * get-entries answer's asked, a data tile's width), at least 1 MiB, so a log cannot make a few entries
 * cost megabytes of work; never more than the bound of every log answer.
 */
export function answerBytes(request: Pick<DecodeRequest, "asked" | "width" | "format">): number {
  const entries = request.format === "tile" ? request.width : request.asked;
  if (entries === undefined) return MAX_RESPONSE_BYTES;
  return Math.min(MAX_RESPONSE_BYTES, Math.max(MIN_ANSWER_BYTES, entries * BYTES_PER_ENTRY_ASKED));
}

export function decodeChunk(request: DecodeRequest, watches: WatchDomains): DecodedChunk {
  let body = request.body;
  const maxBytes = answerBytes(request);
  if (body.byteLength > (request.gzip ? onTheWire(maxBytes) : maxBytes)) throw new EntryError(`it sent more than ${maxBytes} bytes`);
  if (request.gzip) {
    try {
      body = gunzipSync(body, { maxOutputLength: maxBytes });
    } catch (error) {
      const tooLarge = (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE";
      throw new EntryError(tooLarge ? `it sent more than ${maxBytes} bytes once decompressed` : "it sent a body that is not gzip");
    }
  }
  const entries = request.format === "tile" ? readDataTile(body, request.width!) : readEntriesJson(body, request.asked);
  const from = request.from ?? request.first;
  const to = request.to ?? request.first + entries.length;
  if (from < request.first || to > request.first + entries.length || from > to) throw new EntryError("the entries asked for are not in the answer");
  const kept = entries.slice(from - request.first, to - request.first);
  const roots = subtreesCovering(from, to).map(([start, size]) => ({
    size,
    hash: perfectRoot(kept.slice(start - from, start - from + size).map((entry) => entry.leafHash)),
  }));
  let latest = 0;
  const candidates: Candidate[] = [];
  kept.forEach((entry, i) => {
    if (entry.timestamp > latest) latest = entry.timestamp;
    if (entry.fields && namesWatched(entry.fields.dnsNames, watches.domains)) {
      candidates.push({ index: from + i, timestamp: entry.timestamp, fields: entry.fields, ...entryIdentity(entry) });
    }
  });
  return { from, to, roots, latest, candidates, version: watches.version };
}

/** A get-entries answer's entries (RFC 6962 §4.6): a leaf that cannot be read matches nothing but keeps its hash. */
function readEntriesJson(body: Uint8Array, asked = Infinity): LogEntry[] {
  const leaves = scanLeafInputs(body, asked) ?? parseLeafInputs(body);
  // Refused before any entry is decoded: the work follows what was asked, not what the log sends.
  if (leaves.length > asked) throw new EntryError(`answered ${leaves.length} entries for ${asked} asked`);
  return (leaves as Buffer[]).map((leaf) => {
    try {
      return readMerkleTreeLeaf(leaf);
    } catch (error) {
      if (!(error instanceof EntryError)) throw error;
      return { leafHash: leafHash(leaf), timestamp: 0, precertificate: false, fields: null, bytes: leaf, tbs: null, certificate: null };
    }
  });
}

const LEAF_INPUT = Buffer.from('"leaf_input"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/**
 * The leaf_input values of an answer laid out as logs write it, read straight from the bytes: each
 * `"leaf_input"`, a colon, a base64 string without escapes. Materializing the whole answer (and every
 * `extra_data`, half its bytes, never used) as JavaScript values is most of what parsing costs. Null
 * when the answer is not so simple (an escape, another shape): then it is parsed as JSON. What is read
 * either way is only believed once its leaf hashes lead to the signed tree head.
 */
function scanLeafInputs(body: Uint8Array, asked: number): Array<Buffer | null> | null {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  let start = 0;
  while (isSpace(bytes[start])) start++;
  if (bytes[start] !== 0x7b || bytes.indexOf('"entries"') < 0) return null; // {
  // Past the count asked, leaves are only counted (null), not decoded: the answer is then refused.
  const leaves: Array<Buffer | null> = [];
  for (let at = bytes.indexOf(LEAF_INPUT); at >= 0; at = bytes.indexOf(LEAF_INPUT, at)) {
    if (bytes[at - 1] === BACKSLASH) return null;
    let cursor = at + LEAF_INPUT.length;
    while (isSpace(bytes[cursor])) cursor++;
    if (bytes[cursor++] !== 0x3a) return null; // :
    while (isSpace(bytes[cursor])) cursor++;
    if (bytes[cursor++] !== QUOTE) return null;
    const end = bytes.indexOf(QUOTE, cursor);
    if (end < 0) return null;
    const value = bytes.subarray(cursor, end);
    if (value.includes(BACKSLASH)) return null;
    leaves.push(leaves.length < asked ? Buffer.from(value.toString("latin1"), "base64") : null);
    at = end + 1;
  }
  return leaves.length > 0 ? leaves : null;
}

/** The leaf_input values of an answer, through a JSON parser. */
function parseLeafInputs(body: Uint8Array): Buffer[] {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch {
    throw new EntryError("it answered get-entries with something that is not JSON");
  }
  const raw = (json as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(raw)) throw new EntryError("it answered get-entries without an entries list");
  return raw.map((item, i) => {
    const text = (item as { leaf_input?: unknown } | null)?.leaf_input;
    if (typeof text !== "string") throw new EntryError(`its entry ${i} of the answer has no leaf_input`);
    return Buffer.from(text, "base64");
  });
}
