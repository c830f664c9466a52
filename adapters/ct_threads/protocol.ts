/** Messages between the event loop and the CT decoding thread (decode_thread.ts). */
import type { DecodedChunk, DecodeRequest } from "../../core/ctlogs/mod.ts";

/**
 * To the thread: decode `request` against the watched domains of `version`; `domains` comes with the
 * first request of each version (the thread keeps the latest).
 */
export interface DecodeMessage {
  id: number;
  request: DecodeRequest;
  version: string;
  domains?: string[];
}

/** From the thread: the decoded chunk, or why not (`entry`: the answer is unusable, an EntryError). */
export type DecodeAnswer = { id: number; chunk: DecodedChunk } | { id: number; error: string; entry: boolean };
