/**
 * One CT follower per installation, under a lease in the database (CONTRACT §21): while its holder is
 * alive it keeps renewing it, so another process never takes the following over from a live holder; once
 * the holder stops (giving the lease up), the other process takes over at its next try. Two CT followers of
 * one store on a fake clock.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "./support/fake_clock.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createLogger } from "../core/base/log.ts";
import { CtFollower } from "../core/ctlogs/follower.ts";
import type { Store } from "../core/store/ports.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const LEASE = 60_000;

function follower(store: Store, clock: FakeClock, owner: string, logList: string, lines: string[]) {
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  cleanups.push(() => fetcher.close());
  const logger = createLogger("info", (line) => lines.push(`${owner} ${JSON.parse(line).msg ?? JSON.parse(line).message}`));
  return new CtFollower({ store, clock, logger, fetcher, owner, logList, requestTimeoutMs: 3000, leaseMs: LEASE });
}

test("a live holder keeps the follower's lease from another process; once it stops, the other takes over", async () => {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-ct-lease-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const listFile = join(dir, "log_list.json");
  writeFileSync(listFile, JSON.stringify({ version: "1.0", operators: [] }));
  const clock = new FakeClock(Date.now());
  const store = createMemoryStore();
  cleanups.push(() => store.close());
  const lines: string[] = [];
  const first = follower(store, clock, "first", listFile, lines);
  const second = follower(store, clock, "second", listFile, lines);
  first.start();
  for (let i = 0; i < 50 && !lines.includes("first following the CT logs in this process"); i++) await Bun.sleep(10);
  // A little more than a lease later (the first renewing all along), the second process starts.
  for (let step = 0; step < 14; step++) {
    clock.advance(5_000);
    await Bun.sleep(5);
  }
  second.start();
  cleanups.push(async () => {
    const stopping = second.stop();
    clock.advance(1);
    await stopping;
  });
  // Three leases' time, a few seconds at a time: the first is alive and renews.
  for (let step = 0; step < 36; step++) {
    clock.advance(5_000);
    await Bun.sleep(5);
  }
  expect(lines.filter((line) => line.endsWith("following the CT logs in this process"))).toEqual(["first following the CT logs in this process"]);
  // The first stops (giving the lease up): the second takes the following over at its next try, within
  // a quarter of a lease, not once the lease would have run out.
  const stopping = first.stop();
  clock.advance(1);
  await stopping;
  for (let step = 0; step < 3 && !lines.includes("second following the CT logs in this process"); step++) {
    clock.advance(5_000);
    await Bun.sleep(5);
  }
  expect(lines).toContain("second following the CT logs in this process");
}, 20_000);
