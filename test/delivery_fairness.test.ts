/**
 * One organization's dead endpoints must not hold up another's alerts. Organization X points its
 * webhooks at black holes (servers that accept the connection and never answer) and raises many
 * alerts; organization Y's webhook answers at once. Y's alert must arrive within one attempt timeout,
 * however many of X's attempts are queued ahead of it. Real TLS servers, real receivers, real clock.
 */
import { afterEach, expect, test } from "bun:test";
import { DAY, HOUR } from "../core/base/time.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/config.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startSilentServer, startTlsServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startHttpReceiver } from "./support/receivers.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const TIMEOUT_MS = 3000;

test("org X's alerts to black-hole webhooks do not delay org Y's alert by more than one attempt timeout", async () => {
  const { root, rsaIntermediate } = await testPki();
  // One TLS server for every certificate: a wildcard leaf 5 days from expiry (a 7-day alert each).
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.x.${TEST_DOMAIN}`, `*.y.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 5 * DAY + HOUR) });
  const site = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  const config: Config = {
    ...DEFAULT_CONFIG, alertPolicy: "days" as const,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    deliveryTimeoutMs: TIMEOUT_MS,
    deliveryRetryMs: [60_000],
    logLevel: "error",
  };
  const transports = createTransports(config, new TrustStore([root.certPem]));
  const h = await createHarness({ store: "libsql", config, transports });
  const holes = await Promise.all([startSilentServer(), startSilentServer()]);
  const healthy = await startHttpReceiver();
  cleanups.push(() => site.close(), () => healthy.close(), ...holes.map((hole) => () => hole.close()), () => transports.close(), () => h.close());
  h.core.start();

  // X: 4 black-hole webhooks (two on each dead server) and 12 certificates, so 48 dead-end deliveries.
  for (const [i, hole] of [...holes, ...holes].entries()) {
    expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: `Dead ${i}`, config: { url: `http://127.0.0.1:${hole.port}/hook/${i}` } } }), 201);
  }
  for (let i = 0; i < 12; i++) {
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: `site${i}.x.${TEST_DOMAIN}`, port: site.port } }), 201);
  }
  // X's attempts are hanging now.
  await waitUntil(() => holes[0]!.connections() + holes[1]!.connections() >= 4);

  // Y: another organization, one healthy webhook, one certificate raising one alert.
  const y = await h.core.services.admin.createOrganization({ name: "Yonder", plan: "enterprise" });
  const yKey = (await h.makeKey("owner", "live", y.id)).key;
  expectData(await h.request("POST", "/v1/channels", { key: yKey, body: { type: "webhook", name: "Fine", config: { url: `${healthy.url}/y` } } }), 201);
  const added = performance.now();
  expectData(await h.request("POST", "/v1/certificates", { key: yKey, body: { domain: `www.y.${TEST_DOMAIN}`, port: site.port } }), 201);
  const [received] = await healthy.waitFor(1, 4 * TIMEOUT_MS);
  const delayMs = performance.now() - added;

  expect(received!.json).toMatchObject({ type: "certificate.expiring", data: { threshold: 7 } });
  // Before fair claims: (48 - 8) queued ahead, 8 at a time, 3 s each: 15 s.
  expect(delayMs).toBeLessThan(TIMEOUT_MS);
  // And X's dead ends were being attempted all along: the test did load the deliverer.
  expect(holes[0]!.connections() + holes[1]!.connections()).toBeGreaterThanOrEqual(8);
  const pendingOfX = (await h.request("GET", "/v1/events?limit=100")).body.data.flatMap((e: any) => e.deliveries);
  expect(pendingOfX).toHaveLength(48);
}, 30_000);

async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await Bun.sleep(20);
  }
}
