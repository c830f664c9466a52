/**
 * A name served by two nodes on 127.0.0.1 and 127.0.0.2 (same port), each a real TLS server with a
 * leaf of the test PKI, and an in-process certkeeper on an injected clock with the renewal policy:
 * what the multi-node renewal tests start from. Servers and harness are closed by `close()`.
 */
import { DEFAULT_CONFIG, type Config } from "../../core/config/mod.ts";
import { TrustStore } from "../../core/tls/mod.ts";
import { createTransports } from "../../adapters/notify/mod.ts";
import { createHarness, testPki, type Harness } from "./harness.ts";
import { chainPem, createLeaf, type Issued } from "./pki.ts";
import { startTlsServer, type TlsTestServer } from "./servers.ts";
import { FakeClock } from "./fake_clock.ts";

export interface TwoNodes {
  h: Harness;
  clock: FakeClock;
  /** A leaf for the name, issued at `notBefore`, living `lifetime` ms, with this serial (hex). */
  leaf(notBefore: number, lifetime: number, serial: string): Promise<Issued>;
  /** A TLS server serving `issued`: on 127.0.0.1 at a free port, or where `options` says. */
  serve(issued: Issued, options?: { host?: string; port?: number }): Promise<TlsTestServer>;
  /** Serves `issued` from now on at a server that serve() started. */
  replace(server: TlsTestServer, issued: Issued): Promise<void>;
  close(): Promise<void>;
}

export async function twoNodes(domain: string, start: number): Promise<TwoNodes> {
  const clock = new FakeClock(start);
  const { root, rsaIntermediate } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const config: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: domain, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }],
    tlsTimeoutMs: 2000,
    deliveryRetryMs: [1000],
    logLevel: "error",
    alertPolicy: "renewal",
    revocation: false,
    ari: false,
  };
  const transports = createTransports(config, trust);
  const h = await createHarness({ config, clock, transports, trust, random: () => 0.5 });
  const servers: TlsTestServer[] = [];
  return {
    h,
    clock,
    leaf: (notBefore, lifetime, serial) =>
      createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notBefore + lifetime), serial }),
    async serve(issued, options = {}) {
      const server = await startTlsServer({ cert: chainPem(issued, rsaIntermediate), key: issued.keyPem, ...options });
      servers.push(server);
      return server;
    },
    async replace(server, issued) {
      server.setCertificate(chainPem(issued, rsaIntermediate), issued.keyPem);
    },
    async close() {
      await Promise.all(servers.map((server) => server.close()));
      await transports.close();
      await h.close();
    },
  };
}
