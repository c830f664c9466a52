/**
 * CONTRACT §19 ("no directory, or no `renewalInfo` in it: `source: "lifetime"`"), with several
 * processes: a CA whose ACME directory publishes no renewalInfo. The process holding the claim writes
 * that finding to the shared cache like any answer, so another process wanting the same leaf (two
 * organizations, or www and the apex served by one leaf) reads it at once. It once waited out the
 * whole claim (2 × the TLS time limit + 1 s), then asked the directory itself. Two AriClients on one
 * store stand for two processes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import "reflect-metadata";
import { DAY } from "../core/base/mod.ts";
import { AriClient, type AriLeaf } from "../core/ari/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { testPki } from "./support/harness.ts";
import { createLeaf } from "./support/pki.ts";
import { certIdOf, startAriServer, type AriServer } from "./support/ari_server.ts";

let ari: AriServer;
let fetcher: ReturnType<typeof createHttpFetcher>;
beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  ari = await startAriServer({ tlsIssuer: rsaIntermediate });
  fetcher = createHttpFetcher({ trust: new TrustStore([root.certPem]), resolve: [], allowPrivateTargets: true });
});
afterAll(async () => {
  await fetcher.close();
  await ari.close();
});

const TIMEOUT_MS = 1000;

test("a directory without renewalInfo: the second process is not held for the first one's claim", async () => {
  const { rsaIntermediate } = await testPki();
  const now = Date.now();
  const issued = await createLeaf({ issuer: rsaIntermediate, dnsNames: ["noari.certkeeper.test"], notBefore: new Date(now - DAY), notAfter: new Date(now + 89 * DAY) });
  const leaf: AriLeaf = { certId: certIdOf(issued), issuerNames: ["certkeeper Test RSA CA"], notBefore: now - DAY, notAfter: now + 89 * DAY };
  // An ACME directory without renewalInfo (a CA that publishes none).
  ari.directory(JSON.stringify({ newNonce: `${ari.directoryUrl}/nonce`, newAccount: `${ari.directoryUrl}/acct`, newOrder: `${ari.directoryUrl}/order` }));
  const cache = createMemoryStore().renewalInfo;
  const make = (owner: string) => new AriClient({ fetcher, cache, owner, directories: [{ issuer: "certkeeper Test RSA CA", url: ari.directoryUrl }], timeoutMs: TIMEOUT_MS });

  const first = await make("proc_a").renewalInfo(leaf, null, now);
  expect(first!.window).toBeNull();

  const started = performance.now();
  const second = await make("proc_b").renewalInfo(leaf, null, now + 10);
  const took = performance.now() - started;
  expect(second!.window).toBeNull();
  // Reading a directory on loopback takes milliseconds; the claim's length is 2 × 1000 + 1000 ms.
  expect(took).toBeLessThan(1000);
});
