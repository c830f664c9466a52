/**
 * CONTRACT §16: each item is judged exactly as POST /v1/certificates would, duplicates and plan limits
 * in item order, on both stores. Two items naming the same target in one import: the first is created,
 * the second is duplicate_domain, even when both are written together (behind a slower item 0). An
 * item whose target does not answer, arriving once the plan is full, is certificate_limit_reached (POST
 * refuses before connecting), not certificate_not_found; one whose target an earlier item added (and
 * which does not answer now) is duplicate_domain. An organization's finished imports are trimmed to its
 * newest 20 in the in-memory store too, never another organization's.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import { DAY } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { refusedPort, startSilentServer, startTlsServer, type TestServer, type TlsTestServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let server: TlsTestServer;
let silent: TestServer;
let refused: number;
beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.item-order.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 60 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  silent = await startSilentServer();
  refused = await refusedPort();
});
afterAll(async () => {
  await server.close();
  await silent.close();
});

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const name = (n: number | string) => `site-${n}.item-order.${TEST_DOMAIN}`;

async function finish(harness: Harness, id: string) {
  await harness.core.services.imports!.loop.runDue();
  return expectData(await harness.request("GET", `/v1/imports/${id}`), 200);
}

describe.each(["libsql", "memory"] as const)("%s store", (store) => {
  test("the same target twice, written in one batch behind a slow item: created once, then duplicate_domain", async () => {
    h = await createHarness({ store, config: { tlsTimeoutMs: 500, checkConcurrency: 4 } });
    const items = [
      // Item 0 waits out the TLS time limit: items 1 and 2 are judged meanwhile and written with it.
      { domain: name("slow"), port: silent.port },
      { domain: name("twice"), port: server.port },
      { domain: name("twice"), port: server.port },
    ];
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
    const done = await finish(h, id);
    expect(done.results.map((r: any) => r.error?.code ?? r.status)).toEqual(["certificate_not_found", "created", "duplicate_domain"]);
    const list = expectData(await h.request("GET", "/v1/certificates"), 200);
    expect(list.map((c: any) => c.domain)).toEqual([name("twice")]);
  });

  test("the same target twice, the second time unreachable: duplicate_domain, as POST answers a name monitored already", async () => {
    // A door to the TLS server that lets the first connection through and resets every later one.
    let seen = 0;
    const door = net.createServer((socket) => {
      socket.on("error", () => {});
      if (++seen > 1) return socket.destroy();
      const upstream = net.connect(server.port, "127.0.0.1");
      upstream.on("error", () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => door.listen(0, "127.0.0.1", resolve));
    const port = (door.address() as net.AddressInfo).port;
    try {
      h = await createHarness({ store, config: { checkConcurrency: 1 } });
      const items = [
        { domain: name("door"), port },
        { domain: name("door"), port },
      ];
      const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
      const done = await finish(h, id);
      expect(seen).toBe(2);
      expect(done.results.map((r: any) => r.error?.code ?? r.status)).toEqual(["created", "duplicate_domain"]);
    } finally {
      door.close();
    }
  });

  test("an unreachable item once the plan is full is certificate_limit_reached, as POST would answer", async () => {
    h = await createHarness({ store, limits: { certificates: 1 } });
    const items = [
      { domain: name("fits"), port: server.port },
      { domain: name("closed"), port: refused },
    ];
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
    const done = await finish(h, id);
    expect(done.results.map((r: any) => r.error?.code ?? r.status)).toEqual(["created", "certificate_limit_reached"]);
  });
});

test("memory store: an organization's finished imports are trimmed to its newest 20, never another organization's", async () => {
  // Each import finishes a second after the one before (the same millisecond would leave "last" undecided).
  const clock = new FakeClock(Date.now());
  h = await createHarness({ store: "memory", clock });
  const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
  const otherKey = await h.makeKey("owner", "live", other.id);
  const invalid = { certificates: [{ domain: "not a domain" }] };
  const kept = expectData(await h.request("POST", "/v1/imports", { key: otherKey.key, body: invalid }), 202).id;
  await h.core.services.imports!.loop.runDue();
  const ids: string[] = [];
  for (let i = 0; i < 22; i++) {
    clock.advance(1_000);
    ids.push(expectData(await h.request("POST", "/v1/imports", { body: invalid }), 202).id);
    await h.core.services.imports!.loop.runDue();
  }
  expect(expectData(await h.request("GET", `/v1/imports/${kept}`, { key: otherKey.key }), 200).status).toBe("finished");
  // The organization's own: its last 20 finished are kept (the newest included), the oldest gone.
  expectError(await h.request("GET", `/v1/imports/${ids[0]}`), 404, "import_not_found");
  for (const id of ids.slice(2)) expect(expectData(await h.request("GET", `/v1/imports/${id}`), 200).status).toBe("finished");
});
