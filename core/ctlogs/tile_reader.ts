/**
 * Reads a static-ct-api log (c2sp.org/static-ct-api, c2sp.org/tlog-tiles): `checkpoint` for its head,
 * `tile/data/<N>` for its entries (256 a tile; a partial tile `.p/<W>` only at the tree's end, with the
 * full tile as a fallback once it exists), and the hash tiles `tile/<L>/<N>` for the roots of any
 * aligned subtree: those give the compact range at any size, and the rest of the tree right of what
 * was read, so the entries read are proven to begin the tree a checkpoint signs.
 */
import { getFromLog, LogFailure, type LogHttp } from "./_log_http.ts";
import { EntryError } from "./log_entry.ts";
import { LocalEntryReader, type DecodedChunk, type EntryFetch, type EntryReader, type WatchDomains } from "./entry_decode.ts";
import { CompactRange, HASH_BYTES, perfectRoot, sameHash, subtreesCovering } from "./merkle.ts";
import { HeadError, readCheckpoint, type TreeHead } from "./tree_head.ts";
import type { LogSpec } from "./log_list.ts";
import type { ChunkRead, LogReader } from "./log_reader.ts";

export const TILE_WIDTH = 256;
/** Hash tiles kept for reuse: the right edge of the tree is read for every run of entries. */
const HASH_TILE_CACHE = 64;
const CHECKPOINT_BYTES = 1024 * 1024;
/** A hash tile is at most 256 hashes: a larger one (sent, or once decompressed) is refused unread. */
const HASH_TILE_BYTES = TILE_WIDTH * HASH_BYTES;

/** tlog-tiles' index encoding: 3-digit path elements, all but the last prefixed with `x` (1234067 → x001/x234/067). */
export function tileIndexPath(index: number): string {
  let path = String(index % 1000).padStart(3, "0");
  for (let rest = Math.floor(index / 1000); rest > 0; rest = Math.floor(rest / 1000)) {
    path = `x${String(rest % 1000).padStart(3, "0")}/${path}`;
  }
  return path;
}

/** The path of a tile at `level` ("data" for entries), with `.p/<width>` when partial. */
export function tilePath(level: number | "data", index: number, width: number): string {
  return `tile/${level}/${tileIndexPath(index)}${width < TILE_WIDTH ? `.p/${width}` : ""}`;
}

export class TileReader implements LogReader {
  #hashTiles = new Map<string, Promise<Uint8Array>>();

  constructor(
    private readonly spec: LogSpec,
    private readonly http: LogHttp,
    private readonly reader: EntryReader = new LocalEntryReader(http),
  ) {}

  async head(): Promise<TreeHead> {
    const body = await getFromLog(this.http, `${this.spec.url}checkpoint`, { maxBytes: CHECKPOINT_BYTES, accept: "text/plain" });
    let text: string;
    try {
      // ignoreBOM: a leading byte-order mark stays, and the first line is then not the origin (its bytes are compared).
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
    } catch {
      throw new HeadError("its checkpoint is not UTF-8");
    }
    return readCheckpoint(text, this.spec.key, this.spec.origin!);
  }

  async compactRangeAt(head: TreeHead): Promise<CompactRange> {
    const range = await this.#extend(new CompactRange(), head);
    if (!sameHash(range.root(), head.root)) {
      this.#hashTiles.clear();
      throw new LogFailure(`${this.spec.url}: its hash tiles do not lead to the checkpoint's root at size ${head.size}`);
    }
    return range;
  }

  chunks(from: number, to: number): Array<[number, number]> {
    const chunks: Array<[number, number]> = [];
    for (let start = from; start < to; ) {
      const end = Math.min((Math.floor(start / TILE_WIDTH) + 1) * TILE_WIDTH, to);
      chunks.push([start, end]);
      start = end;
    }
    return chunks;
  }

  async entries(start: number, end: number, head: TreeHead, watches: WatchDomains): Promise<ChunkRead> {
    const index = Math.floor(start / TILE_WIDTH);
    const width = Math.min(TILE_WIDTH, head.size - index * TILE_WIDTH);
    const fetch = (w: number): EntryFetch => ({
      url: `${this.spec.url}${tilePath("data", index, w)}`,
      timeoutMs: this.http.timeoutMs,
      format: "tile",
      first: index * TILE_WIDTH,
      width: w,
      from: start,
      to: end,
    });
    // A partial tile that is gone (the tree grew) is read from the full tile that replaced it.
    let read = fetch(width);
    const decode = async (with_: WatchDomains): Promise<DecodedChunk> => {
      try {
        return await this.reader.read(read, with_);
      } catch (error) {
        if (error instanceof LogFailure && error.notFound && read.width !== TILE_WIDTH) {
          read = fetch(TILE_WIDTH);
          return decode(with_);
        }
        if (!(error instanceof EntryError)) throw error;
        throw new LogFailure(`${this.spec.url}: data tile ${index} is malformed (${error.message})`);
      }
    };
    return { decoded: await decode(watches), redo: decode };
  }

  async consistent(range: CompactRange, head: TreeHead): Promise<boolean> {
    if (range.size > head.size) return false;
    if (sameHash((await this.#extend(range.clone(), head)).root(), head.root)) return true;
    // A hash tile read wrong once (a proxy's bad copy, a log's passing fault) is not kept: the next
    // try reads them all again, and a log that answers honestly again is followed again.
    this.#hashTiles.clear();
    return false;
  }

  /** Appends to `range` the roots of the subtrees from its size to the head's, read from hash tiles. */
  async #extend(range: CompactRange, head: TreeHead): Promise<CompactRange> {
    const subtrees = subtreesCovering(range.size, head.size);
    const roots = await Promise.all(subtrees.map(([start, size]) => this.#subtreeRoot(start, size, head.size)));
    subtrees.forEach(([, size], i) => range.appendSubtree(roots[i]!, size));
    return range;
  }

  /**
   * The root of the aligned perfect subtree of `size` leaves at `start`, in a tree of `treeSize`: from
   * the hash tile of the level whose hashes are its leaves' 256^L-subtrees.
   */
  async #subtreeRoot(start: number, size: number, treeSize: number): Promise<Uint8Array> {
    const height = Math.round(Math.log2(size));
    const level = Math.floor(height / 8);
    const span = TILE_WIDTH ** level;
    const first = start / span;
    const count = size / span;
    const index = Math.floor(first / TILE_WIDTH);
    const available = Math.floor(treeSize / span);
    const width = Math.min(TILE_WIDTH, available - index * TILE_WIDTH);
    const tile = await this.#hashTile(level, index, width);
    const offset = first - index * TILE_WIDTH;
    const hashes: Uint8Array[] = [];
    for (let i = offset; i < offset + count; i++) hashes.push(tile.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES));
    return perfectRoot(hashes);
  }

  #hashTile(level: number, index: number, width: number): Promise<Uint8Array> {
    const key = `${level}/${index}/${width}`;
    let tile = this.#hashTiles.get(key);
    if (!tile) {
      tile = this.#tile(level, index, width).then(({ bytes, width: got }) => {
        if (bytes.length !== got * HASH_BYTES) throw new LogFailure(`${this.spec.url}: hash tile ${level}/${index} is ${bytes.length} bytes, not ${got * HASH_BYTES}`);
        return bytes.subarray(0, width * HASH_BYTES);
      });
      tile.catch(() => this.#hashTiles.delete(key));
      this.#hashTiles.set(key, tile);
      if (this.#hashTiles.size > HASH_TILE_CACHE) this.#hashTiles.delete(this.#hashTiles.keys().next().value!);
    }
    return tile;
  }

  /** A hash tile; a partial one that is gone (the tree grew) is read from the full tile that replaced it. */
  async #tile(level: number, index: number, width: number): Promise<{ bytes: Uint8Array; width: number }> {
    const url = (w: number) => `${this.spec.url}${tilePath(level, index, w)}`;
    try {
      return { bytes: await getFromLog(this.http, url(width), { maxBytes: HASH_TILE_BYTES }), width };
    } catch (error) {
      if (!(error instanceof LogFailure) || !error.notFound || width === TILE_WIDTH) throw error;
    }
    return { bytes: await getFromLog(this.http, url(TILE_WIDTH), { maxBytes: HASH_TILE_BYTES }), width: TILE_WIDTH };
  }
}
