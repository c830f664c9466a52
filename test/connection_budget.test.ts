/**
 * Background checks share one budget of connections (CERTKEEPER_CHECK_CONCURRENCY): names behind four
 * addresses checked by the scheduler never hold more connections at once than that, the wait for a
 * connection is not part of the TLS time limit, and a check asked for through the API does not queue
 * behind them: those have a budget of the same size of their own. Real TLS server behind real TCP fronts on 127.0.0.1 to 127.0.0.4 that hold each
 * connection a while and count how many they hold at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import { ConnectionBudget } from "../core/net/mod.ts";
import { DAY } from "../core/base/time.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";

describe("ConnectionBudget", () => {
  test("grants while connections are free, then first come first served; each release gives back once", async () => {
    const budget = new ConnectionBudget(4);
    const first = await budget.acquire(3);
    expect(budget.free).toBe(1);
    const order: string[] = [];
    const big = budget.acquire(3).then((release) => (order.push("big"), release));
    // One is free, but the big one asked first: a small one must not overtake it.
    expect(budget.tryAcquire(1)).toBeNull();
    const small = budget.acquire(1).then((release) => (order.push("small"), release));
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    first(); // a second call gives nothing back
    const releaseBig = await big;
    const releaseSmall = await small;
    expect(order).toEqual(["big", "small"]);
    expect(budget.free).toBe(0);
    releaseBig();
    releaseSmall();
    expect(budget.free).toBe(4);
  });

  test("a check needing more than the whole budget takes all of it rather than waiting forever", async () => {
    const budget = new ConnectionBudget(2);
    const release = await budget.acquire(16);
    expect(budget.free).toBe(0);
    release();
    expect(budget.free).toBe(2);
  });

  test("a wait given up leaves the queue, and those behind it go on", async () => {
    const budget = new ConnectionBudget(2);
    const first = await budget.acquire(2);
    const cancel = new AbortController();
    const given = budget.acquire(2, cancel.signal);
    const behind = budget.acquire(1);
    cancel.abort(new Error("stopping"));
    await expect(given).rejects.toThrow("stopping");
    first();
    const release = await behind;
    expect(budget.free).toBe(1);
    release();
    await expect(budget.acquire(1, AbortSignal.abort(new Error("already")))).resolves.toBeFunction();
  });

  test("parties waiting take turns: one party's many checks hold another's back by one of them at most", async () => {
    const budget = new ConnectionBudget(4);
    const hostile = budget.for("org_hostile");
    const victim = budget.for("org_victim");
    const order: string[] = [];
    const take = (connections: typeof hostile, name: string) => connections.acquire(4).then((release) => (order.push(name), release));
    const running = await take(hostile, "h1");
    const queued = [take(hostile, "h2"), take(hostile, "h3"), take(hostile, "h4")];
    const victims = take(victim, "v1");
    // Nobody overtakes those waiting, whoever asks.
    expect(victim.tryAcquire(1)).toBeNull();
    running();
    (await victims)();
    for (const next of queued) (await next)();
    expect(order).toEqual(["h1", "v1", "h2", "h3", "h4"]);
    expect(budget.free).toBe(4);
  });

  test("within a party first come first served; the party served last waits behind another", async () => {
    const budget = new ConnectionBudget(2);
    const one = budget.for("org_one");
    const order: string[] = [];
    const record = (name: string) => (release: () => void) => (order.push(name), release);
    const first = await one.acquire(2);
    const big = one.acquire(2).then(record("big"));
    const small = one.acquire(1).then(record("small"));
    const two = budget.for("org_two").acquire(1).then(record("two"));
    first();
    // org_one was served last: org_two's turn, then org_one's big one, which its small one never overtakes.
    (await two)();
    (await big)();
    (await small)();
    expect(order).toEqual(["two", "big", "small"]);
    expect(budget.free).toBe(2);
  });

  test("only a positive whole number is a budget", () => {
    expect(() => new ConnectionBudget(0)).toThrow(RangeError);
    expect(() => new ConnectionBudget(1.5)).toThrow(RangeError);
  });
});

const ZONE = `budget.${TEST_DOMAIN}`;
const ADDRESSES = ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"];
const HOLD_MS = 400;
const CONCURRENCY = 4;

/** TCP fronts on every address at one port, each holding a connection HOLD_MS before piping it to `target`. */
async function startFronts(target: number) {
  let held = 0;
  let most = 0;
  const sockets = new Set<net.Socket>();
  const servers: net.Server[] = [];
  let port = 0;
  for (const host of ADDRESSES) {
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
      held++;
      most = Math.max(most, held);
      let holding = true;
      const letGo = () => {
        if (holding) held--;
        holding = false;
      };
      socket.on("close", () => {
        letGo();
        sockets.delete(socket);
      });
      socket.pause();
      setTimeout(() => {
        letGo();
        if (socket.destroyed) return;
        const upstream = net.connect(target, "127.0.0.1");
        upstream.on("error", () => socket.destroy());
        upstream.on("close", () => socket.destroy());
        socket.on("close", () => upstream.destroy());
        socket.pipe(upstream).pipe(socket);
        socket.resume();
      }, HOLD_MS);
    });
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    port = (server.address() as net.AddressInfo).port;
    servers.push(server);
  }
  return {
    port,
    /** The most connections held at once since the last reset. */
    most: () => most,
    reset: () => (most = held),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

let tlsServer: TlsTestServer;
let fronts: Awaited<ReturnType<typeof startFronts>>;
let h: Harness;
const clock = new FakeClock(Date.now());

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${ZONE}`], daysLeft: 90 });
  tlsServer = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  fronts = await startFronts(tlsServer.port);
  h = await createHarness({
    clock,
    config: {
      checkConcurrency: CONCURRENCY,
      // Shorter than the whole pass below takes (4 waves of HOLD_MS): only the network time is timed.
      tlsTimeoutMs: 1_000,
      resolve: parseResolveRules(`*.${ZONE}=${ADDRESSES.join("|")}`),
    },
  });
});

afterAll(async () => {
  await h.close();
  await fronts.close();
  await tlsServer.close();
});

describe("background checks share CERTKEEPER_CHECK_CONCURRENCY connections", () => {
  test("scheduled checks of names behind four addresses hold at most that many connections at once, and none times out waiting", async () => {
    const ids: string[] = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `n${i}.${ZONE}`, port: fronts.port } }), 201);
      ids.push(created.id);
    }
    clock.advance(2 * DAY); // every certificate is due again
    fronts.reset();
    const started = performance.now();
    const checked = await h.core.services.scheduler.runDue();
    const took = performance.now() - started;

    expect(checked).toBe(CONCURRENCY);
    expect(fronts.most()).toBe(CONCURRENCY);
    // Four checks of four connections, four at a time: four waves, longer than the TLS time limit.
    expect(took).toBeGreaterThan(CONCURRENCY * HOLD_MS - 50);
    for (const id of ids) {
      const certificate = expectData(await h.request("GET", `/v1/certificates/${id}`), 200);
      expect(certificate.lastCheckedAt).toBe(new Date(clock.now()).toISOString());
      expect(certificate.endpoints.map((endpoint: any) => [endpoint.address, endpoint.status, endpoint.statusReason])).toEqual(
        ADDRESSES.map((address) => [address, "valid", null]),
      );
    }
  });

  test("stopping gives up the checks still waiting for connections: they save nothing and stop() does not wait out their turns", async () => {
    for (let i = 0; i < CONCURRENCY; i++) {
      expectData(await h.request("POST", "/v1/certificates", { body: { domain: `stop${i}.${ZONE}`, port: fronts.port } }), 201);
    }
    // Every certificate of the organization (earlier tests' too) is due once the clock moves.
    const lastChecks = async () =>
      new Map<string, string>((expectData(await h.request("GET", "/v1/certificates?limit=100"), 200) as any[]).map((c) => [c.id, c.lastCheckedAt]));
    const before = await lastChecks();
    expect(before.size).toBeGreaterThanOrEqual(CONCURRENCY);
    clock.advance(2 * DAY);
    fronts.reset();
    h.core.start();
    // The first check holds every connection; the other three wait.
    const deadline = Date.now() + 3_000;
    while (fronts.most() < CONCURRENCY && Date.now() < deadline) await Bun.sleep(5);
    const started = performance.now();
    await h.core.stop();
    // One wave (HOLD_MS), not four.
    expect(performance.now() - started).toBeLessThan(3 * HOLD_MS);
    const after = await lastChecks();
    const checked = [...after].filter(([id, at]) => at !== before.get(id));
    expect(checked).toHaveLength(1);
  });

  test("a check asked for through the API does not wait behind the scheduler's", async () => {
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `manual.${ZONE}`, port: fronts.port } }), 201);
    clock.advance(2 * DAY);
    let passDone = false;
    const pass = h.core.services.scheduler.runDue().then(() => (passDone = true));
    await Bun.sleep(50); // the pass has taken the whole budget
    const started = performance.now();
    const checked = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
    const took = performance.now() - started;
    expect(passDone).toBe(false);
    expect(took).toBeLessThan(3 * HOLD_MS);
    expect(checked.endpoints.map((endpoint: any) => endpoint.status)).toEqual(["valid", "valid", "valid", "valid"]);
    await pass;
  });
});

describe("checks asked for through the API have a budget of their own", () => {
  test("adds at once hold at most CERTKEEPER_CHECK_CONCURRENCY connections together, and all succeed", async () => {
    fronts.reset();
    // Three names behind four addresses each: twelve connections wanted, four at a time allowed.
    const added = await Promise.all(
      [1, 2, 3].map((n) => h.request("POST", "/v1/certificates", { body: { domain: `burst-${n}.${ZONE}`, port: fronts.port } })),
    );
    expect(added.map((response) => response.status)).toEqual([201, 201, 201]);
    expect(fronts.most()).toBe(CONCURRENCY);
  });
});
