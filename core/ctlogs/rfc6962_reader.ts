/**
 * Reads an RFC 6962 log (§4): get-sth for its head; get-entries, in the log's own batch size (a log
 * may answer fewer entries than asked: the rest is asked again from where it stopped); get-proof-by-hash
 * to start a log first seen at its size; get-sth-consistency to prove the entries read so far begin
 * the tree a head signs.
 */
import { describe, getJsonFromLog, LogFailure, type LogHttp } from "./_log_http.ts";
import { EntryError, readMerkleTreeLeaf } from "./log_entry.ts";
import { CompactRange, compactRangeFromLastLeaf, HASH_BYTES, sameHash, verifyConsistency, verifyInclusion } from "./merkle.ts";
import { readSignedTreeHead, type TreeHead } from "./tree_head.ts";
import type { LogSpec } from "./log_list.ts";
import type { ChunkRead, LogReader } from "./log_reader.ts";
import { LocalEntryReader, type DecodedChunk, type EntryFetch, type EntryReader, type WatchDomains } from "./entry_decode.ts";

/** What one get-entries asks for at first; the log's answer then tells its own batch size. */
const FIRST_REQUEST = 256;
/** Heads and proofs are small. */
const SMALL_ANSWER_BYTES = 1024 * 1024;

export class Rfc6962Reader implements LogReader {
  /**
   * What the log's answers taught of its batch size: the most entries it answered at once, and whether
   * it ever cut an answer short (a log answers at most its batch, and fewer to keep its pages aligned).
   * Until it cuts one short, requests stay at least FIRST_REQUEST: a full answer to a small ask (the
   * few entries a round finds new) says nothing of the batch.
   */
  #most = 0;
  #cutShort = false;

  constructor(
    private readonly spec: LogSpec,
    private readonly http: LogHttp,
    private readonly reader: EntryReader = new LocalEntryReader(http),
  ) {}

  async head(): Promise<TreeHead> {
    return readSignedTreeHead(await getJsonFromLog(this.http, `${this.spec.url}ct/v1/get-sth`, SMALL_ANSWER_BYTES), this.spec.key);
  }

  async compactRangeAt(head: TreeHead): Promise<CompactRange> {
    if (head.size === 0) return new CompactRange();
    const answer = await getJsonFromLog(this.http, this.#entriesUrl(head.size - 1, head.size), SMALL_ANSWER_BYTES);
    const text = ((answer as { entries?: Array<{ leaf_input?: unknown }> } | null)?.entries ?? [])[0]?.leaf_input;
    if (typeof text !== "string") throw new LogFailure(`${this.spec.url}: get-entries did not answer its last entry (${head.size - 1})`);
    let last;
    try {
      last = readMerkleTreeLeaf(Buffer.from(text, "base64")).leafHash;
    } catch (error) {
      if (!(error instanceof EntryError)) throw error;
      throw new LogFailure(`${this.spec.url}: its last entry (${head.size - 1}) is not a leaf`);
    }
    const hash = Buffer.from(last).toString("base64");
    const proof = await getJsonFromLog(
      this.http,
      `${this.spec.url}ct/v1/get-proof-by-hash?hash=${encodeURIComponent(hash)}&tree_size=${head.size}`,
      SMALL_ANSWER_BYTES,
    );
    const { leaf_index: index, audit_path: path } = (proof ?? {}) as { leaf_index?: unknown; audit_path?: unknown };
    const hashes = hashList(path);
    if (index !== head.size - 1 || !hashes) throw new LogFailure(`${this.spec.url}: get-proof-by-hash did not prove its last entry (${head.size - 1})`);
    if (!verifyInclusion(head.size - 1, head.size, last, hashes, head.root)) {
      throw new LogFailure(`${this.spec.url}: its last entry's inclusion proof does not lead to the signed root of size ${head.size}`);
    }
    const range = compactRangeFromLastLeaf(head.size, last, hashes);
    if (!range || !sameHash(range.root(), head.root)) throw new LogFailure(`${this.spec.url}: its tree at size ${head.size} could not be rebuilt`);
    return range;
  }

  chunks(from: number, to: number): Array<[number, number]> {
    const size = this.#cutShort ? this.#most : Math.max(FIRST_REQUEST, this.#most);
    const chunks: Array<[number, number]> = [];
    for (let start = from; start < to; start += size) chunks.push([start, Math.min(start + size, to)]);
    return chunks;
  }

  async entries(start: number, end: number, _head: TreeHead, watches: WatchDomains): Promise<ChunkRead> {
    const fetches: EntryFetch[] = [];
    const decoded: DecodedChunk[] = [];
    for (let at = start; at < end; ) {
      const fetch: EntryFetch = { url: this.#entriesUrl(at, end), timeoutMs: this.http.timeoutMs, format: "get-entries", first: at, asked: end - at };
      const chunk = await this.#read(fetch, watches);
      const count = chunk.to - chunk.from;
      if (count === 0) throw new LogFailure(`${this.spec.url}: get-entries answered no entries for ${at}–${end - 1}`);
      if (count > end - at) throw new LogFailure(`${this.spec.url}: get-entries answered ${count} entries for ${end - at} asked`);
      this.#most = Math.max(this.#most, count);
      if (count < end - at) this.#cutShort = true;
      fetches.push({ ...fetch, to: at + count });
      decoded.push(chunk);
      at += count;
    }
    return {
      decoded: merge(decoded),
      // Asked again: the log answers the same entries for the same range.
      redo: async (newer) => merge(await Promise.all(fetches.map((fetch) => this.#read(fetch, newer)))),
    };
  }

  #entriesUrl(start: number, end: number): string {
    return `${this.spec.url}ct/v1/get-entries?start=${start}&end=${end - 1}`;
  }

  async #read(fetch: EntryFetch, watches: WatchDomains): Promise<DecodedChunk> {
    try {
      return await this.reader.read(fetch, watches);
    } catch (error) {
      if (error instanceof EntryError) throw new LogFailure(`${describe(fetch.url)}: ${error.message}`);
      throw error;
    }
  }

  async consistent(range: CompactRange, head: TreeHead): Promise<boolean> {
    if (range.size === head.size) return sameHash(range.root(), head.root);
    if (range.size === 0 || range.size > head.size) return false;
    const answer = await getJsonFromLog(
      this.http,
      `${this.spec.url}ct/v1/get-sth-consistency?first=${range.size}&second=${head.size}`,
      SMALL_ANSWER_BYTES,
    );
    const proof = hashList((answer as { consistency?: unknown } | null)?.consistency);
    if (!proof) throw new LogFailure(`${this.spec.url}: get-sth-consistency answered without a consistency list`);
    return verifyConsistency(range.size, head.size, range.root(), head.root, proof);
  }
}

/** Consecutive decoded answers as one chunk. */
function merge(chunks: DecodedChunk[]): DecodedChunk {
  if (chunks.length === 1) return chunks[0]!;
  return {
    from: chunks[0]!.from,
    to: chunks.at(-1)!.to,
    roots: chunks.flatMap((chunk) => chunk.roots),
    latest: Math.max(...chunks.map((chunk) => chunk.latest)),
    candidates: chunks.flatMap((chunk) => chunk.candidates),
    version: chunks[0]!.version,
  };
}

/** A JSON list of base64 SHA-256 hashes, or null. */
function hashList(value: unknown): Uint8Array[] | null {
  if (!Array.isArray(value) || value.length > 64) return null;
  const hashes: Uint8Array[] = [];
  for (const item of value) {
    if (typeof item !== "string") return null;
    const hash = new Uint8Array(Buffer.from(item, "base64"));
    if (hash.length !== HASH_BYTES) return null;
    hashes.push(hash);
  }
  return hashes;
}
