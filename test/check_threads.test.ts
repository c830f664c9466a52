/**
 * Check threads (CERTKEEPER_CHECK_THREADS, adapters/check_threads): a check's connections are opened on
 * the event loop or on a thread, whichever has fewer checks under way, and either way the check reads
 * the same chains, speaks STARTTLS the same, and fails the same. Real TLS servers on 127.0.0.1 and
 * 127.0.0.2, a real SMTP server (smtp-server), a server that never answers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import { SMTPServer } from "smtp-server";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { CheckThreads } from "../adapters/check_threads/mod.ts";
import { wire } from "../adapters/wiring/mod.ts";
import { connectEndpoints, TrustStore, type EndpointRetrieval, type EndpointsRequest } from "../core/tls/mod.ts";
import { DEFAULT_CONFIG } from "../core/config/mod.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";
import { silentLogger } from "../core/base/mod.ts";

const DOMAIN = `threads.${TEST_DOMAIN}`;
let first: Issued;
let second: Issued;
let firstChain: string;
let port: number;
const closers: Array<() => Promise<unknown>> = [];
let threads: CheckThreads;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  first = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN], daysLeft: 90 });
  second = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN], daysLeft: 20 });
  firstChain = chainPem(first, rsaIntermediate);
  const a: TlsTestServer = await startTlsServer({ cert: chainPem(first, rsaIntermediate), key: first.keyPem });
  port = a.port;
  const b: TlsTestServer = await startTlsServer({ cert: chainPem(second, rsaIntermediate), key: second.keyPem, port, host: "127.0.0.2" });
  closers.push(() => a.close(), () => b.close());
  threads = new CheckThreads(2);
  closers.push(() => threads.close());
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** Two addresses that answer, one the private-address rule refuses (never connected to). */
const request = (overrides: Partial<EndpointsRequest> = {}): EndpointsRequest => ({
  addresses: [
    { address: "127.0.0.1", family: 4, refused: null },
    { address: "127.0.0.2", family: 4, refused: null },
    { address: "10.0.0.1", family: 4, refused: "a private address" },
  ],
  host: DOMAIN,
  domain: DOMAIN,
  port,
  protocol: "tls",
  timeoutMs: 5_000,
  ...overrides,
});

/** What a comparison needs: the chain bytes as plain arrays, whichever thread read them. */
const plain = (retrievals: EndpointRetrieval[]) =>
  retrievals.map((r) => (r.ok ? { address: r.address, ders: r.chain.ders.map((der) => [...der]), fingerprint: r.chain.fingerprint, tls: r.tls } : r));

/** `count` checks at once: the event loop takes some, the threads the rest. */
async function atOnce(count: number, make: () => EndpointsRequest) {
  const before = { ...threads.handed };
  const results = await Promise.all(Array.from({ length: count }, () => threads.connect(make())));
  return { results, eventLoop: threads.handed.eventLoop - before.eventLoop, onThreads: threads.handed.threads - before.threads };
}

describe("a check's connections, on the event loop or a thread", () => {
  test("every address's chain and connection are the same whichever thread read them; a refused address is never connected to", async () => {
    const expected = plain(await connectEndpoints(request()));
    expect(expected.map((r: any) => [r.address, r.ok ?? true, r.ders?.length ?? r.reason])).toEqual([
      ["127.0.0.1", true, 2],
      ["127.0.0.2", true, 2],
      ["10.0.0.1", false, "connection_refused"],
    ]);
    const { results, eventLoop, onThreads } = await atOnce(12, () => request());
    for (const result of results) expect(plain(result)).toEqual(expected);
    // Shared: neither side took them all, and the threads started as they were needed.
    expect(eventLoop).toBeGreaterThan(0);
    expect(onThreads).toBeGreaterThan(0);
    expect(threads.running).toBe(2);
    expect(threads.pending).toBe(0);
    // The leaves are the two servers' own.
    const [a, b] = results[0]!;
    expect(a!.ok && Buffer.from(a!.chain.ders[0]!).equals(Buffer.from(first.cert.rawData))).toBe(true);
    expect(b!.ok && Buffer.from(b!.chain.ders[0]!).equals(Buffer.from(second.cert.rawData))).toBe(true);
  });

  test("STARTTLS on a thread: a real SMTP server (smtp-server) upgrades and its chain is read", async () => {
    const smtp = new SMTPServer({ secure: false, key: first.keyPem, cert: firstChain, authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    const smtpPort = (smtp.server.address() as net.AddressInfo).port;
    const smtpRequest = () => request({ addresses: [{ address: "127.0.0.1", family: 4, refused: null }], port: smtpPort, protocol: "smtp" });
    const { results, onThreads } = await atOnce(6, smtpRequest);
    expect(onThreads).toBeGreaterThan(0);
    for (const [endpoint] of results) {
      expect(endpoint!.ok).toBe(true);
      if (endpoint!.ok) expect(Buffer.from(endpoint!.chain.ders[0]!).equals(Buffer.from(first.cert.rawData))).toBe(true);
    }
  });

  test("a server that never answers fails as a timeout at the check's time limit, on a thread as on the event loop", async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
    const held: net.Socket[] = [];
    silent.on("connection", (socket) => held.push(socket));
    closers.push(async () => {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const silentPort = (silent.address() as net.AddressInfo).port;
    const started = performance.now();
    const { results, onThreads } = await atOnce(6, () => request({ addresses: [{ address: "127.0.0.1", family: 4, refused: null }], port: silentPort, timeoutMs: 400 }));
    const took = performance.now() - started;
    expect(onThreads).toBeGreaterThan(0);
    for (const [endpoint] of results) expect(endpoint).toMatchObject({ address: "127.0.0.1", ok: false, reason: "timeout" });
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(3_000);
  });

  test("close() ends the threads: a check still under way on one fails, and later checks are refused", async () => {
    const own = new CheckThreads(1);
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
    const held: net.Socket[] = [];
    silent.on("connection", (socket) => held.push(socket));
    const silentPort = (silent.address() as net.AddressInfo).port;
    const slow = () => own.connect(request({ addresses: [{ address: "127.0.0.1", family: 4, refused: null }], port: silentPort, timeoutMs: 10_000 }));
    // The first goes to the event loop, the second to the thread.
    const onLoop = slow();
    const onThread = slow();
    expect(own.handed).toEqual({ eventLoop: 1, threads: 1 });
    await Bun.sleep(200);
    await own.close();
    await expect(onThread).rejects.toThrow("the check thread stopped");
    await expect(own.connect(request())).rejects.toThrow("the check threads are closed");
    for (const socket of held) socket.destroy();
    const [loopResult] = await onLoop;
    expect(loopResult!.ok).toBe(false);
    await new Promise((resolve) => silent.close(resolve));
  });
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
          // Resolved through CERTKEEPER_RESOLVE, both addresses reached, each leaf judged against the trust store.
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
