/**
 * An RFC 6962 log asked for one entry answers get-entries with far more: millions of tiny entries in
 * a 64 MiB JSON (gzip: under 400 KB on the wire), or 20,000 in a body small enough for one entry. The
 * answer is refused by what was asked: its bytes are bounded by the entries asked (1 MiB at least, here
 * once decompressed), and a count beyond the asked one is refused before any entry is decoded. Read
 * through the production CT reading thread; the process's memory stays bounded (it grew by 4.2 GB, for
 * 32 s, when every entry was decoded before the count was looked at).
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

test.each([
  ["millions of entries in 64 MiB (gzip: 390 KB on the wire)", Math.floor((64 * 1024 * 1024 - 64) / 21), /get-entries: it sent more than 1048576 bytes once decompressed/],
  ["20,000 entries within the bytes one entry may take", 20_000, /get-entries: answered 20000 entries for 1 asked/],
] as const)("a get-entries answer of %s for one asked is refused before its entries are decoded", async (_what, count, refusal) => {
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
    refused = await w.until("the answer refused", async () => (await w.ctLogs()).find((l) => refusal.test(l.lastError ?? "")), 60_000); // (a busy machine may time a try out first)
  } finally {
    clearInterval(sampler);
  }
  console.log(`${count} entries in ${bomb.length} bytes on the wire; refused after ${Math.round(performance.now() - started)} ms: ${refused.lastError}; RSS peak +${Math.round((rssPeak - rssBefore) / 1e6)} MB`);
  expect(refused.lastError).toMatch(refusal);
  expect(rssPeak - rssBefore).toBeLessThan(256 * 1024 * 1024);
});
