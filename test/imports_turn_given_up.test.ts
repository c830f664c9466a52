/**
 * Imports take turns (CONTRACT §16: an import "finishes"; the worker gives its turn to another
 * organization's import that waits). An import that gave up its turn is claimable again at once, once
 * the other has gone: it does not stall until its lease (at least 5 s) runs out first.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { DAY } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startSilentServer, startTlsServer, type TestServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let server: TlsTestServer;
let silent: TestServer;
beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.turns.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 60 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  silent = await startSilentServer();
});
afterAll(async () => {
  await server.close();
  await silent.close();
});

let h: Harness;
afterEach(async () => {
  await h?.close();
});

test("a long import that gave its turn goes on as soon as the other organization's import is done, not a lease later", async () => {
  // 4 retrievals at once, 1 s each: the 8 silent items take ~2 s; the turn (0.5 s) ends after the first 4;
  // the import's lease is 5 s (the floor of 3 TLS time limits).
  h = await createHarness({ store: "libsql", config: { tlsTimeoutMs: 1000, checkConcurrency: 4 } });
  const slowItems = Array.from({ length: 8 }, (_, i) => ({ domain: `slow-${i}.turns.${TEST_DOMAIN}`, port: silent.port }));
  const long = expectData(await h.request("POST", "/v1/imports", { body: { certificates: slowItems } }), 202);
  const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
  const otherKey = await h.makeKey("owner", "live", other.id);
  const quick = expectData(
    await h.request("POST", "/v1/imports", { key: otherKey.key, body: { certificates: [{ domain: `fast.turns.${TEST_DOMAIN}`, port: server.port }] } }),
    202,
  );

  h.core.services.imports!.start();
  const started = performance.now();
  let state: any;
  for (const until = started + 10_000; performance.now() < until; await Bun.sleep(50)) {
    state = expectData(await h.request("GET", `/v1/imports/${long.id}`), 200);
    if (state.status === "finished") break;
  }
  const elapsed = performance.now() - started;
  expect(expectData(await h.request("GET", `/v1/imports/${quick.id}`, { key: otherKey.key }), 200).status).toBe("finished");
  expect({ status: state.status, processed: state.processed }).toEqual({ status: "finished", processed: 8 });
  // Two rounds of 1 s and the other import's handshake: about 2 s. Waiting out the lease first: 6 s.
  expect(elapsed).toBeLessThan(4_500);
}, 30_000);
