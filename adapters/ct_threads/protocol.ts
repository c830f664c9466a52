/** Messages between the event loop and the CT reading thread (read_thread.ts). */
import type { DecodedChunk, EntryFetch } from "../../core/ctlogs/mod.ts";
import type { ResolveRule } from "../../core/config/mod.ts";

/** What the thread is started with: how to reach the logs, as the event loop's CT fetcher does. */
export interface ReadThreadData {
  extraCaFile: string | undefined;
  resolve: ResolveRule[];
}

/**
 * To the thread: fetch and decode `fetch` against the watched domains of `version`; `domains` comes
 * with the first request of each version (the thread keeps the latest).
 */
export interface ReadMessage {
  id: number;
  fetch: EntryFetch;
  version: string;
  domains?: string[];
}

/** Why a read failed: the log did not answer usably (`log`), its answer is unusable (`entry`), or a defect. */
export interface ReadFailure {
  kind: "log" | "entry" | "other";
  message: string;
  retryAfterMs?: number | null;
  notFound?: boolean;
}

export type ReadAnswer = { id: number; chunk: DecodedChunk } | { id: number; failure: ReadFailure };
