/**
 * Imports take turns. A process works one import at a time (its items use every retrieval slot); one
 * organization's long import (items whose targets accept the connection and never answer: each takes a
 * whole TLS time limit, 10,000 of them 104 minutes at the defaults) gives its turn, between items, to
 * another organization's import that waits, and goes on after it. Organizations take turns, not
 * imports: one organization's three long imports hold another's back by one turn, not three. Given up
 * and taken again, an import loses and repeats no item.
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
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.queue.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 60 * DAY) });
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

// On the libSQL store, and on the in-memory one (createCertkeeper({ database: ":memory:" })).
test.each(["libsql", "memory"] as const)("%s store: another organization's 1-item import is not held behind one organization's long imports, which then finish every item once", async (store) => {
  // 4 retrievals at once, 1 s each against the silent server: each long import of 8 items takes ~2 s.
  h = await createHarness({ store, config: { tlsTimeoutMs: 1000, checkConcurrency: 4 } });
  const hostileItems = Array.from({ length: 8 }, (_, i) => ({ domain: `slow-${i}.queue.${TEST_DOMAIN}`, port: silent.port }));
  const longs: string[] = [];
  for (let i = 0; i < 3; i++) longs.push(expectData(await h.request("POST", "/v1/imports", { body: { certificates: hostileItems } }), 202).id);
  const hostile = { id: longs[0]! };

  const other = await h.core.services.admin.createOrganization({ name: "Victim", plan: "pro" });
  const victimKey = await h.makeKey("owner", "live", other.id);
  await Bun.sleep(5); // created after the hostile one
  const victim = expectData(
    await h.request("POST", "/v1/imports", { key: victimKey.key, body: { certificates: [{ domain: `fast.queue.${TEST_DOMAIN}`, port: server.port }] } }),
    202,
  );

  h.core.services.imports!.start();
  const started = performance.now();
  let state: any;
  // Alone, the victim's import takes one loopback handshake (milliseconds); one turn of the first long
  // import and its items in flight take 1.5 s; give it 2.5 s (behind each of the three: 3 s and more).
  while (performance.now() - started < 2500) {
    state = expectData(await h.request("GET", `/v1/imports/${victim.id}`, { key: victimKey.key }), 200);
    if (state.status === "finished") break;
    await Bun.sleep(50);
  }
  const hostileState = expectData(await h.request("GET", `/v1/imports/${hostile.id}`), 200);
  console.log(
    `victim import after ${(performance.now() - started).toFixed(0)} ms: ${state.status}, processed ${state.processed}; ` +
      `hostile import: ${hostileState.status}, processed ${hostileState.processed}/${hostileState.total}`,
  );
  expect({ status: state.status, processed: state.processed }).toEqual({ status: "finished", processed: 1 });

  // The long imports go on after their turns were given, and finish every item once.
  for (const id of longs) {
    let long: any;
    for (const until = performance.now() + 20_000; performance.now() < until; await Bun.sleep(100)) {
      long = expectData(await h.request("GET", `/v1/imports/${id}`), 200);
      if (long.status === "finished") break;
    }
    expect({ status: long.status, processed: long.processed, failed: long.failed }).toEqual({ status: "finished", processed: 8, failed: 8 });
    expect(long.results.map((result: { index: number }) => result.index)).toEqual(hostileItems.map((_, i) => i));
  }
}, 60_000);
