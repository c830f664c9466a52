/**
 * A certkeeper whose checks read DNS from servers the test runs (CONTRACT §22): the harness with
 * CERTKEEPER_DNS_SERVERS pointed at them, the transports (MTA-STS policies are fetched through them),
 * TLSA data computed by openssl from the certificates served, and an HTTPS server for MTA-STS policies
 * on port 443 of a loopback address of its own.
 */
import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import https from "node:https";
import type net from "node:net";
import type { Clock } from "../../core/base/time.ts";
import { DEFAULT_CONFIG, type Config } from "../../core/config/config.ts";
import type { ResolveRule } from "../../core/config/resolve_rules.ts";
import { TrustStore } from "../../core/tls/trust_store.ts";
import { createTransports } from "../../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./harness.ts";
import { startKnot, startUnbound, type KnotServer, type UnboundServer } from "./dns_servers.ts";
import { chainPem, createLeaf } from "./pki.ts";
import { startTlsServer, type TlsTestServer } from "./servers.ts";

export interface DnsWorld {
  h: Harness;
  close(): Promise<void>;
}

/**
 * The harness asking the resolver on 127.0.0.1:`port`, with the test PKI's RSA intermediate mapped to
 * the CAA domain `ca.certkeeper.test` (by its CN), and `resolve` before the `*.certkeeper.test` rule.
 */
export async function dnsWorld(port: number | null, options: { resolve?: ResolveRule[]; config?: Partial<Config>; clock?: Clock } = {}): Promise<DnsWorld> {
  const { root } = await testPki();
  const config: Partial<Config> = {
    allowPrivateTargets: true,
    tlsTimeoutMs: 2000,
    resolve: [...(options.resolve ?? []), { pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    dnsServers: port === null ? "off" : [{ address: "127.0.0.1", port }],
    caaIdentities: [{ name: "certkeeper Test RSA CA", domain: `ca.${TEST_DOMAIN}` }],
    ...options.config,
  };
  const transports = createTransports({ ...DEFAULT_CONFIG, ...config }, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-test-outbox" });
  const h = await createHarness({ config, transports, ...(options.clock ? { clock: options.clock } : {}) });
  return {
    h,
    async close() {
      await h.close();
      await transports.close();
    },
  };
}

/** Adds a certificate and returns it as GET shows it. */
export async function addAndGet(h: Harness, body: Record<string, unknown>): Promise<any> {
  const created = expectData(await h.request("POST", "/v1/certificates", { body }), 201);
  return expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
}

/** Checks a certificate now and returns it as the check answers. */
export async function checkNow(h: Harness, id: string): Promise<any> {
  return expectData(await h.request("POST", `/v1/certificates/${id}/check`), 200);
}

/** The events of one certificate, oldest first, as GET /v1/events lists them. */
export async function eventsOf(h: Harness, certificateId: string): Promise<any[]> {
  const events = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return events.filter((event) => event.certificateId === certificateId).reverse();
}

/** TLSA data as DANE operators compute it with openssl (`x509 -pubkey | pkey -pubin -outform DER | sha256`). */
export function opensslTlsa(pem: string, selector: 0 | 1, hash: "sha256" | "sha512"): string {
  const der =
    selector === 1
      ? execFileSync("openssl", ["pkey", "-pubin", "-outform", "DER"], { input: execFileSync("openssl", ["x509", "-pubkey", "-noout"], { input: pem }) })
      : execFileSync("openssl", ["x509", "-outform", "DER"], { input: pem });
  return execFileSync("openssl", ["dgst", `-${hash}`, "-r"], { input: der }).toString().split(" ")[0]!;
}

export interface PolicyServer {
  /** The loopback address it listens on, port 443. */
  address: string;
  /** Requests so far, as `METHOD path` with the Host header. */
  requests(): string[];
  /** What the next requests get. */
  respond(answer: { status: number; body: string | Buffer; headers?: Record<string, string> }): void;
  close(): Promise<void>;
}

/**
 * An HTTPS server for MTA-STS policies on port 443 (the port RFC 8461 fixes) of a loopback address
 * of its own, presenting `cert`. Null, with the reason, when port 443 cannot be bound here.
 */
export async function startPolicyServer(cert: string, key: string): Promise<PolicyServer | { unavailable: string }> {
  let answer: { status: number; body: string | Buffer; headers?: Record<string, string> } = { status: 404, body: "no policy" };
  const seen: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = https.createServer({ cert, key }, (request, response) => {
    seen.push(`${request.method} ${request.url} ${request.headers.host}`);
    response.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
    response.end(answer.body);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {});
  const address = `127.0.${randomInt(2, 250)}.${randomInt(2, 250)}`;
  const bound = await new Promise<string | null>((resolve) => {
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen(443, address, () => resolve(null));
  });
  if (bound !== null) return { unavailable: `port 443 of ${address} cannot be bound here (${bound})` };
  return {
    address,
    requests: () => [...seen],
    respond: (next) => (answer = next),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface SignedDnsWorld extends DnsWorld {
  knot: KnotServer;
  unbound: UnboundServer;
  /** A TLS server on 127.0.0.1 presenting a leaf for `dnsNames` from the test PKI's RSA intermediate (closed with the world). */
  serve(dnsNames: string[]): Promise<TlsTestServer>;
}

/**
 * `zone` (records under certkeeper.test) DNSSEC-signed on Knot, behind a validating Unbound, and the
 * certkeeper of {@link dnsWorld} asking that Unbound. Call only when dnsDaemonsMissing() is null.
 */
export async function signedDnsWorld(zone: string, options: Parameters<typeof dnsWorld>[1] = {}): Promise<SignedDnsWorld> {
  const intermediate = (await testPki()).rsaIntermediate;
  const knot = await startKnot(zone, { signed: true });
  const unbound = await startUnbound({ zone: "test.", port: knot.port }, knot.dnskeys());
  const world = await dnsWorld(unbound.port, options);
  const servers: TlsTestServer[] = [];
  return {
    ...world,
    knot,
    unbound,
    async serve(dnsNames) {
      const leaf = await createLeaf({ issuer: intermediate, dnsNames });
      const server = await startTlsServer({ cert: chainPem(leaf, intermediate), key: leaf.keyPem });
      servers.push(server);
      return server;
    },
    async close() {
      await Promise.all([world.close(), ...servers.map((server) => server.close())]);
      await Promise.all([unbound.close(), knot.close()]);
    },
  };
}
