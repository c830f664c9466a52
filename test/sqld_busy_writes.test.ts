/**
 * Several processes on one libSQL server (sqld): a write that meets another process's write
 * transaction waits for it (sqld queues it) and goes through once it ends. A write the server refuses
 * as busy (SQLITE_BUSY, which sqld answers at once in some moments of two processes' write load) is
 * tried again until the busy time limit, and then fails as 503 `storage_unavailable`, never as a 500,
 * with nothing written. One process's writes reach the server one at a time, and a request the server
 * never answers fails as 503 `storage_unavailable` ("no answer") at its time limit instead of holding
 * its caller for ever. The other process is played by a raw client holding an open write transaction;
 * the refusals and the silence by a proxy in front of the real server.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createClient, type Client } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { StorageUnavailableError, type Store } from "../core/store/mod.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { startSqld, type SqldServer } from "./support/sqld.ts";

const BUSY_TIMEOUT_MS = 1500;
let sqld: SqldServer;
let store: Store;
let other: Client;

beforeAll(async () => {
  sqld = await startSqld();
  store = await openLibsqlStore({ url: sqld.url, busyTimeoutMs: BUSY_TIMEOUT_MS });
  other = createClient({ url: sqld.url });
});
afterAll(async () => {
  other?.close();
  await store?.close();
  await sqld?.close();
});

/** Another process's write transaction, open until `release()` (committed) or rolled back. */
async function otherWriteTransaction() {
  const tx = await other.transaction("write");
  await tx.execute({ sql: "UPDATE write_probe SET probed_at = probed_at WHERE id = -1", args: [] });
  return {
    release: async () => {
      await tx.commit();
      tx.close();
    },
  };
}

test("a write meeting another process's transaction waits for it, and goes through once it ends", async () => {
  const held = await otherWriteTransaction();
  const org = organizationRecord();
  const started = performance.now();
  const releasing = Bun.sleep(400).then(() => held.release());
  await store.organizations.create(org);
  const took = performance.now() - started;
  await releasing;
  expect(took).toBeGreaterThanOrEqual(350);
  expect(await store.organizations.get(org.id)).toMatchObject({ id: org.id, name: org.name });
});

test("a transaction meeting another one waits for it too (its BEGIN goes with its first statement)", async () => {
  const held = await otherWriteTransaction();
  const org = organizationRecord();
  const releasing = Bun.sleep(300).then(() => held.release());
  const outcome = await store.organizations.create(org).then(
    () => "created",
    (error) => error,
  );
  await releasing;
  expect(outcome).toBe("created");
});

/**
 * sqld itself answers SQLITE_BUSY at once in some moments (seen under two processes' write load): a
 * proxy in front of the real server answers the next `count` requests that write with that error,
 * as sqld words it, and passes everything else on.
 */
function busyProxy(target: string) {
  let refusals = 0;
  let refused = 0;
  let silent = false;
  let gate: Promise<void> | undefined;
  const arrived: string[] = [];
  let writing = 0;
  let mostWriting = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === "POST" ? await request.text() : undefined;
      const writes = body !== undefined && /INSERT|UPDATE|BEGIN/i.test(body);
      if (writes && silent) return new Promise<Response>(() => {});
      if (writes) arrived.push(body!);
      if (writes && gate) {
        const held = gate;
        gate = undefined;
        await held;
      }
      if (writes && refusals > 0) {
        refusals--;
        refused++;
        const requests = (JSON.parse(body).requests as unknown[]) ?? [];
        const error = { type: "error", error: { message: "SQLite error: database is locked", code: "SQLITE_BUSY" } };
        return Response.json({ baton: null, base_url: null, results: requests.map(() => error) });
      }
      if (writes) mostWriting = Math.max(mostWriting, ++writing);
      const answer = await fetch(`${target}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body }).finally(() => {
        if (writes) writing--;
      });
      // fetch has decoded the body: its encoding and length go with it.
      const headers = new Headers(answer.headers);
      headers.delete("content-encoding");
      headers.delete("content-length");
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    refuse(count: number) {
      refusals = count;
      refused = 0;
    },
    refused: () => refused,
    /** Writes from now on get no answer at all. */
    silence: () => (silent = true),
    /** The next write is answered only once `open()` is called. */
    holdNext() {
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      return open;
    },
    /** The writes' bodies, in the order they reached the server. */
    arrived: () => arrived,
    mostWritesAtOnce: () => mostWriting,
    stop: () => server.stop(true),
  };
}

test("refused as busy a few times: the write is tried again and goes through", async () => {
  const proxy = busyProxy(sqld.url);
  const through = await openLibsqlStore({ url: proxy.url, busyTimeoutMs: BUSY_TIMEOUT_MS });
  try {
    const org = organizationRecord();
    proxy.refuse(3);
    await through.organizations.create(org);
    expect(proxy.refused()).toBe(3);
    expect(await store.organizations.get(org.id)).toMatchObject({ id: org.id });
  } finally {
    await through.close();
    proxy.stop();
  }
});

test("refused as busy for longer than the busy time limit: storage_unavailable (503), nothing written", async () => {
  const proxy = busyProxy(sqld.url);
  const through = await openLibsqlStore({ url: proxy.url, busyTimeoutMs: BUSY_TIMEOUT_MS });
  try {
    const org = organizationRecord();
    proxy.refuse(Infinity);
    const started = performance.now();
    const error = await through.organizations.create(org).then(
      () => null,
      (thrown) => thrown,
    );
    const took = performance.now() - started;
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect({ code: error.code, status: error.status, reason: error.reason }).toEqual({ code: "storage_unavailable", status: 503, reason: "busy" });
    expect(took).toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS - 50);
    expect(took).toBeLessThan(BUSY_TIMEOUT_MS + 2000);
    expect(proxy.refused()).toBeGreaterThan(3);
    expect(await store.organizations.get(org.id)).toBeNull();
  } finally {
    proxy.refuse(0);
    await through.close();
    proxy.stop();
  }
});

test("one process's writes reach the server one at a time, however many are asked for at once", async () => {
  const proxy = busyProxy(sqld.url);
  const through = await openLibsqlStore({ url: proxy.url, busyTimeoutMs: BUSY_TIMEOUT_MS });
  try {
    const organizations = Array.from({ length: 30 }, () => organizationRecord());
    await Promise.all(organizations.map((org) => through.organizations.create(org)));
    expect(proxy.mostWritesAtOnce()).toBe(1);
    for (const org of organizations) expect(await store.organizations.get(org.id)).toMatchObject({ id: org.id });
  } finally {
    await through.close();
    proxy.stop();
  }
});

test("a write the server never answers fails as storage_unavailable (no answer) at the request time limit, and the one waiting for its turn (busy) no later", async () => {
  const proxy = busyProxy(sqld.url);
  const through = await openLibsqlStore({ url: proxy.url, busyTimeoutMs: BUSY_TIMEOUT_MS, requestTimeoutMs: 800 });
  try {
    proxy.silence();
    const started = performance.now();
    const [first, second] = await Promise.all(
      [organizationRecord(), organizationRecord()].map((org) =>
        through.organizations.create(org).then(
          () => null,
          (thrown) => thrown,
        ),
      ),
    );
    const took = performance.now() - started;
    // The first was sent and not answered: whether it was saved is not known. The second waited for
    // its turn behind it and was never sent: nothing was changed.
    const described = [first, second].map((error) => error instanceof StorageUnavailableError && { code: error.code, status: error.status, reason: error.reason });
    expect(described).toEqual([
      { code: "storage_unavailable", status: 503, reason: "no_answer" },
      { code: "storage_unavailable", status: 503, reason: "busy" },
    ]);
    // Both within the limit of a request.
    expect(took).toBeGreaterThanOrEqual(750);
    expect(took).toBeLessThan(2 * 800 + 1000);
  } finally {
    await through.close();
    proxy.stop();
  }
});

/**
 * The kinds of the first two writes (`urgent`'s, told by `mark`, or an organization's create) to reach
 * sqld once a held write is let through, `urgent` asked for after three ordinary creates were queued.
 */
async function firstAfterHeldWrite(urgent: (store: Store) => Promise<unknown>, mark: RegExp): Promise<string[]> {
  const proxy = busyProxy(sqld.url);
  const through = await openLibsqlStore({ url: proxy.url, busyTimeoutMs: BUSY_TIMEOUT_MS });
  try {
    const open = proxy.holdNext();
    const first = through.organizations.create(organizationRecord());
    await Bun.sleep(50);
    const ordinary = [organizationRecord(), organizationRecord(), organizationRecord()].map((org) => through.organizations.create(org));
    await Bun.sleep(20);
    const asked = urgent(through);
    await Bun.sleep(20);
    const before = proxy.arrived().length;
    open();
    await Promise.all([first, ...ordinary, asked]);
    const kinds = proxy.arrived().slice(before).map((body) => (mark.test(body) ? "urgent" : /organizations/.test(body) ? "create" : "other"));
    return kinds.filter((kind) => kind !== "other").slice(0, 2);
  } finally {
    await through.close();
    proxy.stop();
  }
}

test("a delivery's writes (the urgent lane) take the turn before ordinary writes still waiting", async () => {
  const claim = (store: Store) => store.events.claimDueDeliveries({ owner: "urgent-test", now: 0, leaseUntil: 1, limit: 1 });
  expect(await firstAfterHeldWrite(claim, /deliveries/)).toEqual(["urgent", "create"]);
});

test("the readiness probe's write (the urgent lane) takes the turn before ordinary writes still waiting", async () => {
  expect(await firstAfterHeldWrite((store) => store.ping(), /write_probe/)).toEqual(["urgent", "create"]);
});
