/**
 * docs/operations.md, "One process": on SIGTERM "an import's items in flight finish and the rest is
 * handed back" (CONTRACT §16: an import survives a restart and finishes). An item still waiting for a
 * connection when the import worker stops (the scheduler's checks hold every connection) is handed back
 * untouched: not started once a connection frees, never connected to, never judged as failed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSilentServer, type TestServer } from "./support/servers.ts";
import { createHarness, expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import type { ConnectionBudget } from "../core/net/connection_budget.ts";

let silent: TestServer;
let h: Harness;
beforeAll(async () => {
  silent = await startSilentServer();
});
afterAll(async () => {
  await h?.close();
  await silent.close();
});

test("an item waiting for a connection at stop is handed back: no connection, still pending, the stop prompt", async () => {
  h = await createHarness({ config: { tlsTimeoutMs: 1500, checkConcurrency: 1 } });
  // The background checks' connections, all taken (as by a scheduled check under way).
  const budget = (h.core.services.monitor as unknown as { options: { connections: ConnectionBudget } }).options.connections;
  const releaseHeld = budget.tryAcquire(1)!;
  expect(releaseHeld).not.toBeNull();
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: [{ domain: `wait.stop.${TEST_DOMAIN}`, port: silent.port }] } }), 202);
  h.core.services.imports!.start();
  // Until the item waits for the connection (someone queues: nothing may take one ahead of it).
  const waiting = () => {
    const probe = budget.tryAcquire(0);
    probe?.();
    return probe === null;
  };
  for (const until = performance.now() + 5_000; !waiting() && performance.now() < until; ) await Bun.sleep(10);
  expect(waiting()).toBe(true);

  const started = performance.now();
  const stopped = h.core.services.imports!.stop();
  // The scheduled check ends just after: its connection frees while the worker stops.
  releaseHeld();
  await stopped;
  expect(performance.now() - started).toBeLessThan(1_000);
  expect(silent.connections()).toBe(0);
  const state = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
  expect({ status: state.status, processed: state.processed, failed: state.failed }).toEqual({ status: "running", processed: 0, failed: 0 });
});
