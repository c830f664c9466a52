/**
 * close() lets the host's calls in flight finish (a certificates.add() whose handshake is under way is
 * answered and stored), as a server finishes its requests before it stops; a call made after close()
 * is refused as closed. Never an internal_error on a closed database connection.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configFromEnv, silentLogger, type Config, type Logger } from "certkeeper";
import { CertkeeperApiError, createCertkeeper } from "certkeeper/embed";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startDelayingFront, startTlsServer, type DelayingFront, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";

setDefaultTimeout(20_000);
const DOMAIN = `www.${TEST_DOMAIN}`;
let dir: string;
let config: Config;
let server: TlsTestServer;
let slow: DelayingFront;

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  dir = mkdtempSync(join(tmpdir(), "certkeeper-embed-close-"));
  writeFileSync(join(dir, "ca.pem"), root.certPem);
  config = configFromEnv({
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: join(dir, "ca.pem"),
    CERTKEEPER_TLS_TIMEOUT: "3s",
    CERTKEEPER_DNS_SERVERS: "off",
  });
  const leaf = await createLeaf({ dnsNames: [DOMAIN], daysLeft: 50, issuer: rsaIntermediate });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  // Each connection held 400 ms before it reaches the TLS server: the add is in flight when close() is called.
  slow = await startDelayingFront(server.port, 400);
});

afterAll(async () => {
  await slow?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a call in flight when close() is called finishes or is refused as closed, never internal_error", async () => {
  const database = `file:${join(dir, "inflight.db")}`;
  const logged: string[] = [];
  const logger: Logger = { ...silentLogger, error: (message) => logged.push(message) };
  const ck = await createCertkeeper({ database, config, logger, outboxDir: join(dir, "outbox") });
  const adding = ck.certificates.add({ domain: DOMAIN, port: slow.port }).then(
    (certificate) => ({ ok: true as const, id: certificate.id }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  await Bun.sleep(100);
  await ck.close();
  const outcome = await adding;

  if (outcome.ok) {
    // Finished: what it answered is stored.
    const reopened = await createCertkeeper({ database, config, logger: silentLogger, outboxDir: join(dir, "outbox") });
    try {
      expect((await reopened.certificates.list()).data.map((c) => c.id)).toEqual([outcome.id]);
    } finally {
      await reopened.close();
    }
  } else {
    const error = outcome.error as CertkeeperApiError;
    expect({ code: error instanceof CertkeeperApiError ? error.code : "(not an api error)", message: (error as Error).message, logged }).toEqual({
      code: expect.not.stringMatching(/^internal_error$/),
      message: expect.stringContaining("closed"),
      logged: [],
    });
  }
});
