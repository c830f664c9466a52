/**
 * The CT reading thread: fetches the logs' entries (its own HTTP client, configured as the event
 * loop's CT fetcher: the extra CA file, CERTKEEPER_RESOLVE, no private-address rule) and decodes them
 * (core's LocalEntryReader: gunzip, JSON, base64, DER, leaf hashes, subtree roots), away from the event
 * loop, at a lower priority than the event loop. It keeps the watched domains of the latest version
 * it was sent.
 */
import { parentPort, workerData } from "node:worker_threads";
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { EntryError, LocalEntryReader, LogFailure, type WatchDomains } from "../../core/ctlogs/mod.ts";
import { TrustStore } from "../../core/tls/mod.ts";
import { createHttpFetcher } from "../notify/mod.ts";
import type { ReadAnswer, ReadFailure, ReadMessage, ReadThreadData } from "./protocol.ts";

const port = parentPort!;

// Catching up a backlog keeps this thread busy for as long as there are entries: on Linux it yields
// the CPU to the event loop (the API) first, at nice 10. Elsewhere, or if refused, it runs as it is.
try {
  setPriority(Number(readlinkSync("/proc/thread-self").split("/").pop()), 10);
} catch {
  // Not Linux, or not allowed.
}
const data = workerData as ReadThreadData;
const fetcher = createHttpFetcher({ trust: TrustStore.system(data.extraCaFile), resolve: data.resolve, allowPrivateTargets: true });
const reader = new LocalEntryReader({ fetcher });
let watches: WatchDomains = { version: "", domains: new Set() };

/**
 * Entries read between two full collections of this thread's heap. Decoding leaves megabytes of
 * garbage a second, which the collector's own pace lets pile up: in bench:ct (100,000 entries a log,
 * the other core busy) the process peaked about 65 MB above idle with a young collection after each
 * read alone, 40–60 MB with a full one every 4,096 entries too (a few µs of this thread's CPU an
 * entry; every 1,024 entries saved little more for several times the CPU).
 */
const ENTRIES_PER_FULL_COLLECTION = 4096;
let entriesSinceFull = 0;
function collect(entries: number): void {
  entriesSinceFull += entries;
  const full = entriesSinceFull >= ENTRIES_PER_FULL_COLLECTION;
  if (full) entriesSinceFull = 0;
  Bun.gc(full);
}

port.on("message", async (message: ReadMessage) => {
  if (message.domains) watches = { version: message.version, domains: new Set(message.domains) };
  let chunk;
  try {
    if (message.version !== watches.version) throw new Error(`the thread holds the watches of version ${watches.version}, not ${message.version}`);
    chunk = await reader.read(message.fetch, watches);
  } catch (error) {
    port.postMessage({ id: message.id, failure: failureOf(error) } satisfies ReadAnswer);
    return;
  }
  // Posted (copied to the event loop) first, then collected: the answer does not wait for the
  // collection, and the chunk itself is garbage by then.
  port.postMessage({ id: message.id, chunk } satisfies ReadAnswer);
  collect(chunk.to - chunk.from);
});

function failureOf(error: unknown): ReadFailure {
  if (error instanceof LogFailure) return { kind: "log", message: error.message, retryAfterMs: error.retryAfterMs, notFound: error.notFound };
  if (error instanceof EntryError) return { kind: "entry", message: error.message };
  return { kind: "other", message: error instanceof Error ? error.message : String(error) };
}
