/**
 * CONTRACT §16: "an import survives a restart of the process and finishes". Resumed, it goes on with
 * the items still pending: those judged before the stop, created or failed, are not judged again (no
 * second connection to their targets), and every item is judged exactly once in all.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { DAY } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startPlainServer, startTlsServer, type TestServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let server: TlsTestServer;
let plain: TestServer;
beforeAll(async () => {
  plain = await startPlainServer();
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.resume.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 60 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await plain.close();
  await server.close();
});

let h: Harness;
afterEach(async () => {
  await h?.close();
});

test("stopped part-way and started again: the items judged before are not connected to again", async () => {
  h = await createHarness({ store: "libsql", config: { checkConcurrency: 1 } });
  const names = Array.from({ length: 60 }, (_, i) => `site-${i}.resume.${TEST_DOMAIN}`);
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: names.map((domain) => ({ domain, port: server.port })) } }), 202);
  const worker = h.core.services.imports!;
  worker.start();
  let state: any;
  for (const until = performance.now() + 10_000; performance.now() < until; await Bun.sleep(5)) {
    state = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
    if (state.processed >= 3) break;
  }
  await worker.stop();
  const before = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
  expect(before.status).toBe("running");
  expect(before.processed).toBeGreaterThanOrEqual(3);
  // Started again, as a restarted process: the import is claimable at once and goes on where it was.
  worker.start();
  let done: any;
  for (const until = performance.now() + 15_000; performance.now() < until; await Bun.sleep(20)) {
    done = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
    if (done.status === "finished") break;
  }
  await worker.stop();
  expect({ status: done.status, created: done.created }).toEqual({ status: "finished", created: 60 });
  const connected = server.servernames().filter((name) => name.endsWith(`.resume.${TEST_DOMAIN}`));
  expect(connected.sort()).toEqual([...names].sort());
}, 30_000);

test("items that failed before the stop (nothing answered TLS) are not retried after it: each target connected to once", async () => {
  h = await createHarness({ store: "libsql", config: { checkConcurrency: 1 } });
  const names = Array.from({ length: 60 }, (_, i) => `plain-${i}.resume.${TEST_DOMAIN}`);
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: names.map((domain) => ({ domain, port: plain.port })) } }), 202);
  const worker = h.core.services.imports!;
  const before = plain.connections();
  worker.start();
  for (const until = performance.now() + 10_000; performance.now() < until; await Bun.sleep(5)) {
    if (expectData(await h.request("GET", `/v1/imports/${id}`), 200).processed >= 3) break;
  }
  await worker.stop();
  expect(expectData(await h.request("GET", `/v1/imports/${id}`), 200).status).toBe("running");
  worker.start();
  let done: any;
  for (const until = performance.now() + 15_000; performance.now() < until; await Bun.sleep(20)) {
    done = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
    if (done.status === "finished") break;
  }
  await worker.stop();
  expect({ status: done.status, failed: done.failed }).toEqual({ status: "finished", failed: 60 });
  expect(plain.connections() - before).toBe(60);
}, 30_000);
