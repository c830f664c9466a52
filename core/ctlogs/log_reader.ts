/**
 * What the follower asks of a log, whatever its kind: its verified head, the compact range at a head
 * (where a log first seen is followed from), its entries a chunk at a time, and whether the entries
 * read so far are the beginning of the tree a head signs.
 */
import type { DecodedChunk, WatchDomains } from "./entry_decode.ts";
import type { CompactRange } from "./merkle.ts";
import type { TreeHead } from "./tree_head.ts";

/** A chunk of entries, decoded against some watches, that can be decoded again against newer ones. */
export interface ChunkRead {
  decoded: DecodedChunk;
  /** The same entries decoded against `watches` (without asking the log again). */
  redo(watches: WatchDomains): Promise<DecodedChunk>;
}

export interface LogReader {
  /** The newest head, its signature verified (throws HeadError or LogFailure). */
  head(): Promise<TreeHead>;
  /** The compact range of the first head.size leaves, checked against head.root (throws when it does not match). */
  compactRangeAt(head: TreeHead): Promise<CompactRange>;
  /** How [from, to) divides into the requests it takes (tiles, or the log's batches). */
  chunks(from: number, to: number): Array<[number, number]>;
  /** The entries [start, end) of one chunk, `head` being the head they are read under. */
  entries(start: number, end: number, head: TreeHead, watches: WatchDomains): Promise<ChunkRead>;
  /** Whether `range` (the leaves read so far) is the beginning of the tree `head` signs. */
  consistent(range: CompactRange, head: TreeHead): Promise<boolean>;
}
