/**
 * Review (hostile servers, CONTRACT §21): an RFC 6962 log asked for one entry answers get-entries with
 * millions of tiny entries. The answer stays under the 64 MiB bound (a 64 MiB JSON, gzip: well under
 * 1 MB on the wire), but every entry is decoded (a Buffer, a SHA-256 leaf hash, an entry object, the
 * subtree roots over all of them) before rfc6962_reader.ts notices it got more entries than it asked
 * for ("answered N entries for 1 asked"): the decoder's work and memory grow with what the log sends,
 * not with what was asked. Measured with the production CT reading thread.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { CtReadThread } from "../adapters/ct_threads/mod.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

setDefaultTimeout(120_000);
let world: CtWorld | undefined;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await world?.close();
  world = undefined;
  for (const close of closers.splice(0).reverse()) await close();
});

test("a get-entries answer of millions of entries for one asked is refused before it is decoded (memory bounded by what was asked)", async () => {
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  closers.push(() => fetcher.close());
  const thread = new CtReadThread({ extraCaFile: undefined, resolve: [], fetcher });
  closers.push(async () => (thread as unknown as { close?: () => Promise<void> }).close?.());
  world = await startCtWorld({ logs: [{ kind: "rfc6962" }], ctEntryReader: thread });
  const w = world;
  await w.caughtUp(0);
  await w.addWatch({ domain: "many.example" });
  const log = w.logs[0]!;
  const one = '{"leaf_input":"AAAA"},';
  const count = Math.floor((64 * 1024 * 1024 - 64) / one.length);
  const json = Buffer.from(`{"entries":[${one.repeat(count - 1)}${one.slice(0, -1)}]}`);
  const bomb = gzipSync(json);
  log.intercept({ status: 200, headers: { "content-encoding": "gzip", "content-type": "application/json" }, body: bomb }, { match: /get-entries/, times: Infinity });

  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 5);
  const started = performance.now();
  let refused: any;
  try {
    await w.issue({ dnsNames: ["a.many.example"] });
    w.publishAll();
    refused = await w.until("the answer refused", async () => (await w.ctLogs()).find((l) => l.lastError), 60_000);
  } finally {
    clearInterval(sampler);
  }
  console.log(`${count} entries in ${bomb.length} bytes on the wire; refused after ${Math.round(performance.now() - started)} ms: ${refused.lastError}; RSS peak +${Math.round((rssPeak - rssBefore) / 1e6)} MB`);
  expect(refused.lastError).toMatch(/answered \d+ entries for 1 asked/);
  expect(rssPeak - rssBefore).toBeLessThan(256 * 1024 * 1024);
});
