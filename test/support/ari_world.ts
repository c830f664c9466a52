/**
 * What the ARI tests share: a CA's renewal information service (ari_server.ts) for the test CA, an
 * in-process certkeeper under the renewal policy that asks it (the test CA's intermediate, "CN=certkeeper
 * Test RSA CA", mapped to its directory), and TLS servers serving the test CA's leaves.
 *
 * `ariWorlds()` registers the file's hooks: the ARI server starts before its tests; after them, what
 * the worlds started (and what the file adds to `cleanups`) stops, then the ARI server.
 */
import { afterAll, beforeAll } from "bun:test";
import { DAY } from "../../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../../core/config/mod.ts";
import { TrustStore } from "../../core/tls/mod.ts";
import type { Store } from "../../core/store/mod.ts";
import { createTransports } from "../../adapters/notify/mod.ts";
import { createHarness, testPki, TEST_DOMAIN, type Harness } from "./harness.ts";
import { chainPem, createLeaf, type Issued } from "./pki.ts";
import { startTlsServer, type TlsTestServer } from "./servers.ts";
import { startAriServer, type AriServer } from "./ari_server.ts";
import { FakeClock } from "./fake_clock.ts";

export interface AriWorld {
  h: Harness;
  clock: FakeClock;
}

export function ariWorlds() {
  let server: AriServer | undefined;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  beforeAll(async () => {
    server = await startAriServer({ tlsIssuer: (await testPki()).rsaIntermediate });
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await server?.close();
  });
  const ari = (): AriServer => {
    if (!server) throw new Error("the ARI server starts before the file's tests");
    return server;
  };
  return {
    ari,
    cleanups,
    /** certkeeper in this process with `config` over the shared settings, on `options.store` (default: memory) and clock. */
    async world(config: Partial<Config> = {}, options: { store?: Store; clock?: FakeClock } = {}): Promise<AriWorld> {
      const { root } = await testPki();
      const trust = new TrustStore([root.certPem]);
      const clock = options.clock ?? new FakeClock(Date.now());
      const full: Config = {
        ...DEFAULT_CONFIG,
        allowPrivateTargets: true,
        resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
        tlsTimeoutMs: 1500,
        logLevel: "error",
        alertPolicy: "renewal",
        revocation: false,
        acmeDirectories: [{ issuer: "certkeeper Test RSA CA", url: ari().directoryUrl }],
        ...config,
      };
      const transports = createTransports(full, trust);
      const h = await createHarness({ config: full, clock, transports, trust, ...(options.store ? { store: options.store } : {}) });
      cleanups.push(() => transports.close(), () => h.core.stop());
      return { h, clock };
    },
    /** A TLS server on 127.0.0.1 serving a leaf of the test CA for `domain` (by default 10 days old, 80 days left). */
    async served(domain: string, options: { notBefore?: number; notAfter?: number; serial?: string } = {}): Promise<{ leaf: Issued; server: TlsTestServer }> {
      const { rsaIntermediate } = await testPki();
      const now = Date.now();
      const leaf = await createLeaf({
        issuer: rsaIntermediate,
        dnsNames: [domain],
        notBefore: new Date(options.notBefore ?? now - 10 * DAY),
        notAfter: new Date(options.notAfter ?? now + 80 * DAY),
        serial: options.serial,
      });
      const tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
      cleanups.push(() => tls.close());
      return { leaf, server: tls };
    },
  };
}
