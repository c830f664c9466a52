/**
 * A key of `config` given as undefined (Partial<Config> allows it) overrides nothing: the default
 * stays (a NaN time limit failed every add; others threw at createCertkeeper()).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CONFIG, silentLogger, type Config } from "certkeeper";
import { createCertkeeper } from "certkeeper/embed";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startDelayingFront, startTlsServer, type DelayingFront, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";

setDefaultTimeout(20_000);
const DOMAIN = `www.${TEST_DOMAIN}`;
let dir: string;
let server: TlsTestServer;
let slow: DelayingFront;
let base: Partial<Config>;

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  dir = mkdtempSync(join(tmpdir(), "certkeeper-embed-config-"));
  writeFileSync(join(dir, "ca.pem"), root.certPem);
  base = {
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    allowPrivateTargets: true,
    extraCaFile: join(dir, "ca.pem"),
    dnsServers: "off",
  };
  const leaf = await createLeaf({ dnsNames: [DOMAIN], daysLeft: 50, issuer: rsaIntermediate });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  // A server 200 ms away: well inside the default 10 s time limit.
  slow = await startDelayingFront(server.port, 200);
});

afterAll(async () => {
  await slow?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("tlsTimeoutMs: undefined keeps the default time limit, and a server 200 ms away is added", async () => {
  const timeout: number | undefined = undefined; // e.g. the host's own option, not set
  const ck = await createCertkeeper({ database: ":memory:", logger: silentLogger, config: { ...base, tlsTimeoutMs: timeout } });
  try {
    const added = await ck.certificates.add({ domain: DOMAIN, port: slow.port }).then(
      (certificate) => certificate.domain,
      (error: Error & { code?: string }) => `${error.code}: ${error.message}`,
    );
    expect({ tlsTimeoutMs: ck.config.tlsTimeoutMs, added }).toEqual({ tlsTimeoutMs: DEFAULT_CONFIG.tlsTimeoutMs, added: DOMAIN });
  } finally {
    await ck.close();
  }
});

test("checkConcurrency: undefined and deliveryRetryMs: undefined keep their defaults instead of failing createCertkeeper()", async () => {
  const opened: Record<string, string> = {};
  for (const key of ["checkConcurrency", "deliveryRetryMs"] as const) {
    try {
      const ck = await createCertkeeper({ database: ":memory:", logger: silentLogger, config: { ...base, [key]: undefined } });
      opened[key] = JSON.stringify(ck.config[key]) === JSON.stringify(DEFAULT_CONFIG[key]) ? "default" : `in effect: ${JSON.stringify(ck.config[key])}`;
      await ck.close();
    } catch (error) {
      opened[key] = `threw ${(error as Error).name}: ${(error as Error).message}`;
    }
  }
  expect(opened).toEqual({ checkConcurrency: "default", deliveryRetryMs: "default" });
});
