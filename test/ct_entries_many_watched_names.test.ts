/**
 * A CT log whose entries all name a watched domain, each with the 1,000 names an entry may carry,
 * followed by a certkeeper on the in-memory store (the embedding API's ":memory:" database), does not
 * hold the event loop for seconds: matching goes a few milliseconds at a time, a run writes at most
 * 256 matches, and the store keeps each issuance as a JSON copy appended to its watch's list (a
 * structured clone of each, and the watch's whole list copied at each match, held it 1-3 s). The
 * entries are decoded on the CT reading thread, as in production; the fixture log runs in this process
 * and serves its megabytes of answers on the same event loop. Yardstick: the same number of entries
 * naming the watched domain with two names each.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { CtReadThread } from "../adapters/ct_threads/mod.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { meterEventLoop } from "./support/event_loop_meter.ts";
import { oid, seq, SHA256_RSA, tlv } from "./support/forged_certs.ts";

setDefaultTimeout(240_000);
let world: CtWorld | undefined;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await world?.close();
  world = undefined;
  for (const close of closers.splice(0).reverse()) await close();
});

const ENTRIES = 2048;
const int = (b: Buffer) => tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
const name = (cn: string) => seq(tlv(0x31, seq(oid("550403"), tlv(0x0c, Buffer.from(cn)))));
const time = (s: string) => tlv(0x18, Buffer.from(s));
const SPKI = seq(seq(oid("2a8648ce3d0201"), oid("2a8648ce3d030107")), tlv(0x03, Buffer.concat([Buffer.from([0, 4]), randomBytes(64)])));

/** A certificate (unsigned: nothing in CT following checks the signature) with these DNS names. */
function certificate(serial: number, names: Buffer): Buffer {
  const extensions = tlv(0xa3, seq(seq(oid("551d11"), tlv(0x04, names))));
  const s = Buffer.alloc(4);
  s.writeUInt32BE(serial | 0x10000000);
  const tbs = seq(tlv(0xa0, int(Buffer.from([2]))), int(s), SHA256_RSA, name("Hostile CA"), seq(time("20200101000000Z"), time("20991231000000Z")), name("victim.example"), SPKI, extensions);
  return seq(tbs, SHA256_RSA, tlv(0x03, Buffer.from([0]), randomBytes(64)));
}

async function followed(namesPerEntry: number): Promise<number> {
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  closers.push(() => fetcher.close());
  const thread = new CtReadThread({ extraCaFile: undefined, resolve: [], fetcher });
  closers.push(async () => (thread as unknown as { close?: () => Promise<void> }).close?.());
  world = await startCtWorld({ logs: [{ kind: "rfc6962" }], ctEntryReader: thread });
  const w = world;
  await w.caughtUp(0);
  await w.addWatch({ domain: "victim.example", includeSubdomains: true });
  await Bun.sleep(200); // the watch settles into the index
  const log = w.logs[0]!;
  for (let i = 0; i < ENTRIES; i++) {
    const names = seq(...Array.from({ length: namesPerEntry }, (_, j) => tlv(0x82, Buffer.from(`h${i}-${j}.victim.example`))));
    log.logCertificate(certificate(i, names), []);
  }
  // The store's commit, timed up to its first await (the memory store's is synchronous throughout).
  const store = (w.harness as any).store;
  const commit = store.ctLogs.commit.bind(store.ctLogs);
  let commitSyncMs = 0;
  store.ctLogs.commit = (batch: any) => {
    const started = performance.now();
    const result = commit(batch);
    commitSyncMs = Math.max(commitSyncMs, performance.now() - started);
    return result;
  };
  const meter = meterEventLoop(5);
  const started = performance.now();
  w.publishAll();
  await w.caughtUp(ENTRIES);
  const { longestMs } = meter.stop();
  const issued = await w.issued();
  // The entries were matched (the watch had settled into the index): the stall measured is theirs.
  expect(issued.length).toBeGreaterThan(0);
  console.log(`${ENTRIES} entries of ${namesPerEntry} names: followed in ${Math.round(performance.now() - started)} ms; longest event-loop stall ${Math.round(longestMs)} ms (of which one synchronous store commit ${Math.round(commitSyncMs)} ms); events listed ${issued.length}`);
  await world.close();
  world = undefined;
  for (const close of closers.splice(0).reverse()) await close();
  return longestMs;
}

test("a CT log's entries of 1,000 watched names each do not hold the event loop (matching, events, the run's write)", async () => {
  const honest = await followed(2);
  const hostile = await followed(1000);
  console.log(`stall: hostile ${Math.round(hostile)} ms vs honest ${Math.round(honest)} ms`);
  // Most of what is left is the fixture's own serving (megabytes of JSON on this event loop).
  expect(hostile).toBeLessThan(Math.max(800, 30 * honest));
});
