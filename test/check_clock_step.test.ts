/**
 * A check's result gives way only to a later check saved while it ran (CONTRACT §9's single save per
 * check), never to the record it started from: after the system clock steps back (NTP correcting a
 * clock that ran ahead), checks are still saved, and what the server serves now is shown.
 */
import { afterAll, expect, test } from "bun:test";
import { HOUR } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("after the clock steps back an hour, a check is saved and shows the certificate served now", async () => {
  const start = Date.now();
  const clock = new FakeClock(start);
  const { root, rsaIntermediate } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const config: Config = { ...DEFAULT_CONFIG, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }], tlsTimeoutMs: 2000, logLevel: "error", revocation: false, ari: false };
  const transports = createTransports(config, trust);
  const h = await createHarness({ config, clock, transports, trust });
  cleanups.push(() => transports.close(), () => h.close());
  const domain = `clockstep.${TEST_DOMAIN}`;
  const first = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(start - 10 * 24 * HOUR), notAfter: new Date(start + 80 * 24 * HOUR), serial: "0d01" });
  const server = await startTlsServer({ cert: chainPem(first, rsaIntermediate), key: first.keyPem });
  cleanups.push(() => server.close());
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const second = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(start - 2 * 24 * HOUR), notAfter: new Date(start + 88 * 24 * HOUR), serial: "0d02" });
  server.setCertificate(chainPem(second, rsaIntermediate), second.keyPem);
  clock.set(start - HOUR);
  const checked = expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(checked.serialNumber).toBe("0D:02");
  expect(expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200).serialNumber).toBe("0D:02");
});
