/**
 * The CT decoding thread: gunzip, JSON, base64, DER, leaf hashes and subtree roots of the logs'
 * answers (core's decodeChunk), away from the event loop. It keeps the watched domains of the latest
 * version it was sent.
 */
import { parentPort } from "node:worker_threads";
import { decodeChunk, EntryError, type WatchDomains } from "../../core/ctlogs/mod.ts";
import type { DecodeAnswer, DecodeMessage } from "./protocol.ts";

const port = parentPort!;
let watches: WatchDomains = { version: "", domains: new Set() };

port.on("message", (message: DecodeMessage) => {
  if (message.domains) watches = { version: message.version, domains: new Set(message.domains) };
  let answer: DecodeAnswer;
  try {
    if (message.version !== watches.version) throw new Error(`the thread holds the watches of version ${watches.version}, not ${message.version}`);
    answer = { id: message.id, chunk: decodeChunk(message.request, watches) };
  } catch (error) {
    answer = { id: message.id, error: error instanceof Error ? error.message : String(error), entry: error instanceof EntryError };
  }
  port.postMessage(answer);
});
