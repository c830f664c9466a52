/**
 * What the embedding API answers is the host's own copy, as an HTTP client's is: editing the arrays of
 * a certificate get() or list() returned changes neither what the next call answers nor what a check
 * judges (an edited threshold raised an alert the database did not hold).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configFromEnv, silentLogger, type Config } from "certkeeper";
import { createCertkeeper } from "certkeeper/embed";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";

setDefaultTimeout(20_000);
const DOMAIN = `www.${TEST_DOMAIN}`;
let dir: string;
let config: Config;
let server: TlsTestServer;

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  dir = mkdtempSync(join(tmpdir(), "certkeeper-embed-alias-"));
  writeFileSync(join(dir, "ca.pem"), root.certPem);
  config = configFromEnv({
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: join(dir, "ca.pem"),
    CERTKEEPER_TLS_TIMEOUT: "2s",
    CERTKEEPER_LOG_LEVEL: "error",
    CERTKEEPER_ALERT_POLICY: "days",
    CERTKEEPER_DNS_SERVERS: "off",
  });
  const leaf = await createLeaf({ dnsNames: [DOMAIN], daysLeft: 50, issuer: rsaIntermediate });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function embedded(database: string) {
  return createCertkeeper({ database, config, logger: silentLogger, outboxDir: join(dir, "outbox") });
}

test("editing a certificate returned by get() does not change what the next get() answers", async () => {
  const ck = await embedded(":memory:");
  try {
    const added = await ck.certificates.add({ domain: DOMAIN, port: server.port, alertThresholds: [30], tags: ["team:web"] });
    // The host edits its value, as any program may do with an object it was handed.
    const mine = await ck.certificates.get(added.id);
    mine.alertThresholds.push(60);
    mine.tags.push("env:edited");
    mine.subjectAlternativeNames.push("evil.example.com");

    const again = await ck.certificates.get(added.id);
    expect({ alertThresholds: again.alertThresholds, tags: again.tags, san: again.subjectAlternativeNames }).toEqual({
      alertThresholds: [30],
      tags: ["team:web"],
      san: [DOMAIN],
    });
  } finally {
    await ck.close();
  }
});

test("a re-check after such an edit does not alert on the edited threshold (and the database keeps what was set)", async () => {
  const database = `file:${join(dir, "alias.db")}`;
  const ck = await embedded(database);
  let alertedThresholds: unknown[];
  try {
    const added = await ck.certificates.add({ domain: DOMAIN, port: server.port, alertThresholds: [30], tags: ["team:web"] });
    const mine = await ck.certificates.get(added.id);
    mine.alertThresholds.push(60);
    mine.tags.push("env:edited");
    await ck.certificates.check(added.id);
    const expiring = (await ck.events.list()).data.filter((event) => event.type === "certificate.expiring");
    alertedThresholds = expiring.map((event) => event.data.threshold);
  } finally {
    await ck.close();
  }
  // What another process (or a server sharing the file) reads.
  const fresh = await embedded(database);
  try {
    const [stored] = (await fresh.certificates.list()).data;
    expect({
      // 50 days left and a 30-day threshold: nothing to alert. A threshold of 60 was never set through the API.
      alertedThresholds,
      stored: { alertThresholds: stored!.alertThresholds, tags: stored!.tags },
    }).toEqual({ alertedThresholds: [], stored: { alertThresholds: [30], tags: ["team:web"] } });
  } finally {
    await fresh.close();
  }
});

test("editing a certificate of a list() page does not change what the next list() answers", async () => {
  const ck = await embedded(`file:${join(dir, "alias-list.db")}`);
  try {
    await ck.certificates.add({ domain: DOMAIN, port: server.port, alertThresholds: [30] });
    const [mine] = (await ck.certificates.list()).data;
    mine!.alertThresholds.push(60);
    const [again] = (await ck.certificates.list()).data;
    expect(again!.alertThresholds).toEqual([30]);
  } finally {
    await ck.close();
  }
});
