/**
 * Check threads (CERTKEEPER_CHECK_THREADS, adapters/check_threads): a check's connections are opened on
 * the event loop or on a thread, whichever has fewer checks under way, and either way the check reads
 * the same chains, speaks STARTTLS the same, and fails the same, within its time limit. A stuck or
 * failing thread costs its checks a failure, never the process. Real TLS servers on 127.0.0.1,
 * 127.0.0.2 and 127.0.0.3, a real SMTP server (smtp-server), servers that never answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { SMTPServer } from "smtp-server";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer, startSilentServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { CheckThreads } from "../adapters/check_threads/mod.ts";
import { wire } from "../adapters/wiring/mod.ts";
import { connectEndpoints, TrustStore, type EndpointConnector, type EndpointRetrieval, type EndpointsRequest } from "../core/tls/mod.ts";
import { retrieveEndpoints } from "../core/tls/endpoint_retrieve.ts";
import { ConnectionBudget, preciseNow } from "../core/net/mod.ts";
import { DEFAULT_CONFIG } from "../core/config/mod.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";
import { createLogger, silentLogger } from "../core/base/mod.ts";

const DOMAIN = `threads.${TEST_DOMAIN}`;
let first: Issued;
let second: Issued;
let firstChain: string;
let port: number;
/** On 127.0.0.3: a name resolving to it is refused by the private-address rule, so it must see nobody. */
let refusedNode: TlsTestServer;
let serverA: TlsTestServer;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  first = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN], daysLeft: 90 });
  second = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN], daysLeft: 20 });
  firstChain = chainPem(first, rsaIntermediate);
  const a = await startTlsServer({ cert: firstChain, key: first.keyPem });
  serverA = a;
  port = a.port;
  const b = await startTlsServer({ cert: chainPem(second, rsaIntermediate), key: second.keyPem, port, host: "127.0.0.2" });
  refusedNode = await startTlsServer({ cert: firstChain, key: first.keyPem, port, host: "127.0.0.3" });
  closers.push(() => a.close(), () => b.close(), () => refusedNode.close());
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** Own threads for one test, closed after the file. */
function threadsFor(size: number, options?: ConstructorParameters<typeof CheckThreads>[1]): CheckThreads {
  const threads = new CheckThreads(size, options);
  closers.push(() => threads.close());
  return threads;
}

/** A server that accepts connections and never says a word. */
async function silentServer(): Promise<number> {
  const server = await startSilentServer();
  closers.push(() => server.close());
  return server.port;
}

const request = (overrides: Partial<EndpointsRequest> = {}): EndpointsRequest => ({
  addresses: [
    { address: "127.0.0.1", family: 4 },
    { address: "127.0.0.2", family: 4 },
  ],
  host: DOMAIN,
  domain: DOMAIN,
  port,
  protocol: "tls",
  dueAt: preciseNow() + 5_000,
  ...overrides,
});
const one = (targetPort: number, ms: number) => request({ addresses: [{ address: "127.0.0.1", family: 4 }], port: targetPort, dueAt: preciseNow() + ms });

/** What a comparison needs: the chain bytes as plain arrays, whichever thread read them. */
const plain = (retrievals: EndpointRetrieval[]) =>
  retrievals.map((r) => (r.ok ? { address: r.address, ders: r.chain.ders.map((der) => [...der]), fingerprint: r.chain.fingerprint, tls: r.tls } : r));

/** `count` checks at once: the event loop takes some, the threads the rest. */
async function atOnce(threads: CheckThreads, count: number, make: () => EndpointsRequest) {
  const before = { ...threads.handed };
  const results = await Promise.all(Array.from({ length: count }, () => threads.connect(make())));
  return { results, eventLoop: threads.handed.eventLoop - before.eventLoop, onThreads: threads.handed.threads - before.threads };
}

const sameBytes = (a: Uint8Array, b: ArrayBuffer) => Buffer.from(a).equals(Buffer.from(b));

describe("a check's connections, on the event loop or a thread", () => {
  test("every address's chain and connection are the same whichever thread read them; threads start as they are needed", async () => {
    const threads = threadsFor(2);
    expect(threads.running).toBe(0);
    const expected = plain(await connectEndpoints(request()));
    expect(expected.map((r: any) => [r.address, r.ders?.length])).toEqual([
      ["127.0.0.1", 2],
      ["127.0.0.2", 2],
    ]);
    const { results, eventLoop, onThreads } = await atOnce(threads, 12, () => request());
    for (const result of results) expect(plain(result)).toEqual(expected);
    // Shared: neither side took them all.
    expect(eventLoop).toBeGreaterThan(0);
    expect(onThreads).toBeGreaterThan(0);
    expect(threads.running).toBe(2);
    expect(threads.pending).toBe(0);
    // The leaves are the two servers' own.
    const [a, b] = results.at(-1)!;
    expect(a!.ok && sameBytes(a!.chain.ders[0]!, first.cert.rawData)).toBe(true);
    expect(b!.ok && sameBytes(b!.chain.ders[0]!, second.cert.rawData)).toBe(true);
  });

  test("STARTTLS on a thread: a real SMTP server (smtp-server) upgrades and its chain is read", async () => {
    const threads = threadsFor(1);
    const smtp = new SMTPServer({ secure: false, key: first.keyPem, cert: firstChain, authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    const smtpPort = (smtp.server.address() as net.AddressInfo).port;
    const { results, onThreads } = await atOnce(threads, 6, () => ({ ...one(smtpPort, 5_000), protocol: "smtp" }));
    expect(onThreads).toBeGreaterThan(0);
    for (const [endpoint] of results) expect(endpoint!.ok && sameBytes(endpoint!.chain.ders[0]!, first.cert.rawData)).toBe(true);
  });

  test("a server that never answers fails as a timeout at the check's time limit, counted from before a new thread started", async () => {
    const threads = threadsFor(1, { script: new URL("./support/check_threads/slow_start.ts", import.meta.url) });
    const silentPort = await silentServer();
    const started = performance.now();
    const dueAt = preciseNow() + 1_500;
    // The first is the event loop's; the second goes to a thread that starts now and takes 1.4 s to
    // start, and its start-up counts against the same limit: both end together, not 1.4 s apart (half
    // that is allowed for a loaded machine's turns).
    const done: number[] = [];
    const [onLoop, onThread] = await Promise.all(
      [0, 1].map((i) => threads.connect({ ...one(silentPort, 0), dueAt }).then((result) => ((done[i] = performance.now() - started), result))),
    );
    expect(threads.handed).toEqual({ eventLoop: 1, threads: 1 });
    for (const [endpoint] of [onLoop!, onThread!]) expect(endpoint).toMatchObject({ address: "127.0.0.1", ok: false, reason: "timeout" });
    expect(done[0]!).toBeGreaterThanOrEqual(1_450);
    expect(done[0]!).toBeLessThan(2_500);
    expect(Math.abs(done[1]! - done[0]!)).toBeLessThan(700);
  });

  test("a thread whose clock reads differently (a wall-clock step between the threads' starts) keeps the same time limit", async () => {
    const threads = threadsFor(1, { script: new URL("./support/check_threads/skewed.ts", import.meta.url) });
    const silentPort = await silentServer();
    const started = performance.now();
    const dueAt = preciseNow() + 800;
    const done: number[] = [];
    await Promise.all([0, 1].map((i) => threads.connect({ ...one(silentPort, 0), dueAt }).then((result) => ((done[i] = performance.now() - started), result))));
    expect(threads.handed).toEqual({ eventLoop: 1, threads: 1 });
    // Read on the thread's own clock without the offset, the limit would have been 60 s gone at once
    // (or 60 s away). A new thread's answer may come late on a loaded machine (its modules load
    // first: 1.7 s was seen beside a full suite run), never a minute.
    expect(done[1]!).toBeGreaterThanOrEqual(700);
    expect(Math.abs(done[1]! - done[0]!)).toBeLessThan(5_000);
  });

  test("the time limit handed on counts resolving, not the wait for the connection budget", async () => {
    const seen: number[] = [];
    const recording: EndpointConnector = {
      connect: async (req) => {
        seen.push(req.dueAt - preciseNow());
        return connectEndpoints(req);
      },
    };
    const budget = new ConnectionBudget(1);
    const held = budget.tryAcquire(1)!;
    setTimeout(held, 300);
    const options = { timeoutMs: 1_000, rules: parseResolveRules(`${DOMAIN}=127.0.0.1`), allowPrivateTargets: true, connections: budget, connector: recording };
    const [endpoint] = await retrieveEndpoints(DOMAIN, port, options);
    expect(endpoint!.ok).toBe(true);
    // 300 ms waited for the budget; the connector still had (nearly) the whole second.
    expect(seen[0]!).toBeGreaterThan(900);
    expect(seen[0]!).toBeLessThanOrEqual(1_000);
  });

  test("an address the private-address rule refuses never reaches a connector, and a connector connects only to IP literals", async () => {
    const calls: EndpointsRequest[] = [];
    const threads = threadsFor(1);
    const counting: EndpointConnector = { connect: (req) => (calls.push(req), threads.connect(req)) };
    const before = refusedNode.servernames().length;
    const beforeA = serverA.servernames().length;
    const options = { timeoutMs: 2_000, rules: parseResolveRules(`${DOMAIN}=127.0.0.3`), allowPrivateTargets: false, connector: counting };
    const retrievals = await retrieveEndpoints(DOMAIN, port, options);
    expect(retrievals).toEqual([expect.objectContaining({ address: "127.0.0.3", ok: false, reason: "connection_refused" })]);
    expect(calls).toEqual([]);
    // A name slipped into a request is not resolved and connected to.
    const byName = await connectEndpoints(request({ addresses: [{ address: "localhost", family: 4 }] }));
    expect(byName).toEqual([expect.objectContaining({ address: "localhost", ok: false, reason: "connection_refused" })]);
    expect(refusedNode.servernames().length).toBe(before);
    // localhost is 127.0.0.1, where server A listens: it saw nobody either.
    expect(serverA.servernames().length).toBe(beforeA);
  });
});

/** Ids of the threads named ck-check in this process now (Linux: /proc/self/task). */
function checkThreadsAlive(): Set<string> {
  return new Set(
    readdirSync("/proc/self/task").filter((tid) => {
      try {
        return readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === "ck-check";
      } catch {
        return false;
      }
    }),
  );
}

/** The check threads alive once none has started or ended for 500 ms (at most 5 s). */
async function settledCheckThreads(): Promise<Set<string>> {
  let last = checkThreadsAlive();
  let stableSince = performance.now();
  for (const until = performance.now() + 5000; performance.now() < until; ) {
    await Bun.sleep(50);
    const now = checkThreadsAlive();
    if (now.size !== last.size || [...now].some((tid) => !last.has(tid))) {
      last = now;
      stableSince = performance.now();
    } else if (performance.now() - stableSince >= 500) break;
  }
  return last;
}

describe("a thread that misbehaves", () => {
  test("a stuck thread: its check fails as a timeout shortly after its limit, the thread is ended and logged, and checks stay on the event loop meanwhile", async () => {
    const errors: string[] = [];
    const threads = threadsFor(1, {
      script: new URL("./support/check_threads/silent.ts", import.meta.url),
      answerGraceMs: 200,
      sweepMs: 50,
      restartAfterMs: 60_000,
      logger: createLogger("error", (line) => errors.push(line)),
    });
    const started = performance.now();
    const { results, onThreads } = await atOnce(threads, 2, () => request({ dueAt: preciseNow() + 1_000 }));
    const took = performance.now() - started;
    expect(onThreads).toBe(1);
    // The event loop's check read both chains; the stuck thread's failed on every address, without a word of why.
    expect(results[0]!.map((r) => r.ok)).toEqual([true, true]);
    expect(results[1]!.map((r) => [r.address, r.ok, !r.ok && r.reason, !r.ok && r.message])).toEqual([
      ["127.0.0.1", false, "timeout", `${DOMAIN}:${port} (127.0.0.1): no answer within the time limit`],
      ["127.0.0.2", false, "timeout", `${DOMAIN}:${port} (127.0.0.2): no answer within the time limit`],
    ]);
    expect(took).toBeGreaterThanOrEqual(1_150);
    expect(took).toBeLessThan(3_000);
    expect(threads.running).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("gave no answer");
    // No new thread for a while: both of the next checks are the event loop's, and read their chains.
    const next = await atOnce(threads, 2, () => request());
    expect([next.eventLoop, next.onThreads]).toEqual([2, 0]);
    for (const result of next.results) expect(result.every((r) => r.ok)).toBe(true);
  });

  test("a thread that fails outright: its check is made again on the event loop, the failure is logged, and a new thread starts after the pause", async () => {
    const errors: string[] = [];
    const threads = threadsFor(1, {
      script: new URL("./support/check_threads/failing.ts", import.meta.url),
      restartAfterMs: 300,
      logger: createLogger("error", (line) => errors.push(line)),
    });
    const { results, onThreads } = await atOnce(threads, 2, () => request());
    expect(onThreads).toBe(1);
    // Both read their chains: the thread's failure is ours, not the server's.
    for (const result of results) expect(result.every((r) => r.ok)).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("the thread broke");
    expect(threads.running).toBe(0);
    // Within the pause, no thread; after it, a new one is tried (and fails the same way).
    expect((await atOnce(threads, 2, () => request())).onThreads).toBe(0);
    await Bun.sleep(400);
    const after = await atOnce(threads, 2, () => request());
    expect(after.onThreads).toBe(1);
    for (const result of after.results) expect(result.every((r) => r.ok)).toBe(true);
    expect(errors).toHaveLength(2);
  });

  test("close() lets a thread's check under way finish, then ends the thread; later checks open on the event loop", async () => {
    const own = new CheckThreads(1);
    const silentPort = await silentServer();
    // Threads this process started before (other files run in it too) settle first: starting or ending
    // meanwhile, one would pass for this test's.
    const alive = await settledCheckThreads();
    // The first goes to the event loop, the second to the thread.
    const onLoop = own.connect(one(silentPort, 500));
    const onThread = own.connect(one(silentPort, 700));
    expect(own.handed).toEqual({ eventLoop: 1, threads: 1 });
    await Bun.sleep(200);
    // Other tests' threads may still be ending: this one is the thread that appeared meanwhile.
    const started = [...checkThreadsAlive()].filter((tid) => !alive.has(tid));
    expect(started).toHaveLength(1);
    const closing = performance.now();
    await own.close();
    // The thread's check ran to its own limit (a real timeout), and only then did the thread end.
    expect(performance.now() - closing).toBeGreaterThanOrEqual(400);
    expect(await onThread).toEqual([expect.objectContaining({ ok: false, reason: "timeout" })]);
    expect((await onLoop)[0]!.ok).toBe(false);
    expect(own.running).toBe(0);
    await Bun.sleep(100);
    expect(checkThreadsAlive().has(started[0]!)).toBe(false);
    const later = await Promise.all([own.connect(request()), own.connect(request())]);
    expect(own.handed).toEqual({ eventLoop: 3, threads: 1 });
    for (const result of later) expect(result.every((r) => r.ok)).toBe(true);
    expect([...checkThreadsAlive()].filter((tid) => !alive.has(tid))).toEqual([]);
  });

  test("a process that checks through a thread and never closes it still exits when its work is done", async () => {
    const script = `
      import { CheckThreads } from ${JSON.stringify(new URL("../adapters/check_threads/mod.ts", import.meta.url).pathname)};
      const threads = new CheckThreads(1);
      const request = () => ({ addresses: [{ address: "127.0.0.1", family: 4 }], host: "${DOMAIN}", domain: "${DOMAIN}", port: ${port}, protocol: "tls", dueAt: performance.timeOrigin + performance.now() + 5000 });
      const results = await Promise.all([threads.connect(request()), threads.connect(request())]);
      console.log(JSON.stringify({ ok: results.map(([r]) => r.ok), handed: threads.handed }));
    `;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const exited = await Promise.race([child.exited, Bun.sleep(10_000).then(() => "still running")]);
    if (exited === "still running") child.kill();
    expect(exited).toBe(0);
    expect(JSON.parse(await new Response(child.stdout).text())).toEqual({ ok: [true, true], handed: { eventLoop: 1, threads: 1 } });
  }, 15_000);
});

describe("the wiring", () => {
  test("by default (CERTKEEPER_CHECK_THREADS=1) checks share a thread with the event loop; at 0 the event loop opens them all", async () => {
    const { root } = await testPki();
    for (const checkThreads of [1, 0]) {
      const config = { ...DEFAULT_CONFIG, checkThreads, allowPrivateTargets: true, resolve: parseResolveRules(`${DOMAIN}=127.0.0.1|127.0.0.2`) };
      const wired = await wire(config, { store: "memory", logger: silentLogger, trust: new TrustStore([root.certPem]) });
      try {
        expect(wired.checkThreads === undefined).toBe(checkThreads === 0);
        const outcomes = await Promise.all(Array.from({ length: 8 }, () => wired.core.source.inspect({ domain: DOMAIN, port })));
        for (const outcome of outcomes) {
          expect(outcome.ok).toBe(true);
          // Resolved through CERTKEEPER_RESOLVE, both addresses reached, each chain judged against the trust store.
          expect(outcome.endpoints!.map((e) => [e.address, e.failure, e.problem])).toEqual([
            ["127.0.0.1", null, null],
            ["127.0.0.2", null, null],
          ]);
        }
        if (wired.checkThreads) expect(wired.checkThreads.handed.threads).toBeGreaterThan(0);
      } finally {
        await wired.close();
      }
      if (wired.checkThreads) expect(wired.checkThreads.running).toBe(0);
    }
  });
});
