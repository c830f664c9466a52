/**
 * CONTRACT §16 and §9: an import is worked by one process at a time and survives its process; no item
 * is judged twice while its process lives. An import that takes longer than its lease (5 s here: 8
 * items that each wait out a 1 s TLS time limit, one at a time) keeps its lease renewed: a second
 * process polling beside it never takes it over, so each target is connected to exactly once.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { startSilentServer, type TestServer } from "./support/servers.ts";
import { createHarness, expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { ImportWorker, importLeaseMs, importTurnMs } from "../core/imports/import_worker.ts";
import { createLogger } from "../core/base/log.ts";
import { systemClock } from "../core/base/time.ts";

let silent: TestServer;
beforeAll(async () => {
  silent = await startSilentServer();
});
afterAll(async () => {
  await silent.close();
});

let h: Harness;
const workers: ImportWorker[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop();
  await h?.close();
});

test("two processes beside a long import: the one working it keeps it to the end, each item judged once", async () => {
  h = await createHarness({ store: "libsql", config: { tlsTimeoutMs: 1000, checkConcurrency: 1 } });
  const items = Array.from({ length: 8 }, (_, i) => ({ domain: `slow-${i}.lease.${TEST_DOMAIN}`, port: silent.port }));
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
  const worker = (owner: string) =>
    new ImportWorker({
      store: h.store,
      clock: systemClock,
      logger: createLogger("error"),
      monitor: h.core.services.monitor,
      owner,
      concurrency: 1,
      leaseMs: importLeaseMs(1000),
      turnMs: importTurnMs(1000),
      pollMs: 100,
    });
  const a = worker("proc_a");
  workers.push(a);
  a.start();
  // The first process has it; the second starts beside it.
  for (const until = performance.now() + 5_000; silent.connections() === 0 && performance.now() < until; ) await Bun.sleep(20);
  const b = worker("proc_b");
  workers.push(b);
  b.start();
  let state: any;
  for (const until = performance.now() + 30_000; performance.now() < until; await Bun.sleep(100)) {
    state = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
    if (state.status === "finished") break;
  }
  expect({ status: state.status, processed: state.processed, failed: state.failed }).toEqual({ status: "finished", processed: 8, failed: 8 });
  // Each target connected to once: no item was judged again by the second process.
  expect(silent.connections()).toBe(8);
}, 40_000);

test("a process whose import was taken over stops working it: it connects to no further item", async () => {
  h = await createHarness({ store: "libsql", config: { tlsTimeoutMs: 500, checkConcurrency: 1 } });
  const items = Array.from({ length: 8 }, (_, i) => ({ domain: `taken-${i}.lease.${TEST_DOMAIN}`, port: silent.port }));
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
  const lines: string[] = [];
  const a = new ImportWorker({
    store: h.store,
    clock: systemClock,
    logger: createLogger("warn", (line) => lines.push(line)),
    monitor: h.core.services.monitor,
    owner: "proc_a",
    concurrency: 1,
    leaseMs: 60_000,
    turnMs: 60_000,
    pollMs: 100,
  });
  workers.push(a);
  const before = silent.connections();
  a.start();
  for (const until = performance.now() + 5_000; silent.connections() === before && performance.now() < until; ) await Bun.sleep(10);
  // Another process takes the import over (as after a pause longer than the lease: claimed at a later time).
  const later = Date.now() + 3_600_000;
  expect((await h.store.imports.claim({ owner: "proc_b", now: later, leaseUntil: later + 60_000, limit: 10 })).map((r) => r.id)).toEqual([id]);
  const atTakeover = silent.connections() - before;
  // The first process notices at its next write (the item in flight) and gives the import up.
  const noticed = () => lines.some((line) => line.includes("taken over by another process"));
  for (const until = performance.now() + 8_000; !noticed() && performance.now() < until; ) await Bun.sleep(20);
  expect(silent.connections() - before).toBeLessThanOrEqual(atTakeover + 1);
  expect(noticed()).toBe(true);
  // Nothing it judged after losing the lease was written.
  const state = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
  expect({ status: state.status, processed: state.processed }).toEqual({ status: "running", processed: 0 });
}, 30_000);
