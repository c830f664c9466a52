/**
 * `certkeeper check DOMAIN[:PORT]` end to end, as a real process (CONTRACT §2): against a real TLS
 * server with a test PKI, printing what GET would show and storing nothing.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { expectFailure, expectUsageError, ISO, runCli, runCliJson, workspacesRemovedAfterAll, type Workspace } from "./support/cli.ts";

// describe.concurrent tests do not inherit the preload's default timeout; CLI processes need more than 5 s under load.
setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();

describe("check DOMAIN[:PORT]", () => {
  const domain = `cli.${TEST_DOMAIN}`;
  let server: TlsTestServer;
  let caFile: string;
  let ws: Workspace;
  let notBefore: Date;
  let notAfter: Date;

  beforeAll(async () => {
    const { root, rsaIntermediate } = await testPki();
    ws = workspace();
    caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    notBefore = new Date(Date.now() - 10 * DAY);
    notAfter = new Date(Date.now() + 90 * DAY + 3_600_000);
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain, `www.${domain}`], serial: "00c1a2b3", notBefore, notAfter });
    server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  });

  afterAll(async () => {
    await server?.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    ...ws.env,
    CERTKEEPER_RESOLVE: `${domain}=127.0.0.1,x.${TEST_DOMAIN}=none`,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_TLS_TIMEOUT: "5s",
    ...extra,
  });

  test("check --json shows the certificate as GET would, without id, name, thresholds and timestamps of a record", async () => {
    const { rsaIntermediate } = await testPki();
    const before = Date.now();
    const cert = await runCliJson(["check", `${domain}:${server.port}`], { env: env() });
    const after = Date.now();
    const second = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString();
    expect(Object.keys(cert).sort()).toEqual(
      [
        "domain", "status", "daysUntilExpiry", "expiresAt", "issuedAt", "issuer", "subject", "subjectAlternativeNames",
        "serialNumber", "signatureAlgorithm", "port", "lastCheckedAt", "chain", "statusReason",
      ].sort(),
    );
    expect(cert).toEqual({
      domain,
      status: "valid",
      daysUntilExpiry: 90,
      expiresAt: second(notAfter),
      issuedAt: second(notBefore),
      issuer: "certkeeper intermediates",
      subject: domain,
      subjectAlternativeNames: [domain, `www.${domain}`],
      serialNumber: "C1:A2:B3",
      signatureAlgorithm: "sha256WithRSAEncryption",
      port: server.port,
      lastCheckedAt: expect.stringMatching(ISO),
      chain: [
        { subject: domain, issuer: "certkeeper Test RSA CA", validFrom: second(notBefore), validTo: second(notAfter) },
        {
          subject: "certkeeper Test RSA CA",
          issuer: "certkeeper Test Root CA",
          validFrom: rsaIntermediate.cert.notBefore.toISOString(),
          validTo: rsaIntermediate.cert.notAfter.toISOString(),
        },
      ],
      statusReason: null,
    });
    const checkedAt = Date.parse(cert.lastCheckedAt);
    expect(checkedAt).toBeGreaterThanOrEqual(before);
    expect(checkedAt).toBeLessThanOrEqual(after);
  });

  test("check stores nothing", async () => {
    const cwd = workspace().dir;
    await runCliJson(["org", "create", "--name", "Checker"], { env: env() });
    await runCliJson(["check", `${domain}:${server.port}`], { env: env(), cwd });
    const db = createClient({ url: ws.env.CERTKEEPER_DATABASE_URL! });
    try {
      const counts = await db.execute("SELECT (SELECT count(*) FROM certificates) AS certificates, (SELECT count(*) FROM events) AS events");
      expect({ ...counts.rows[0] }).toEqual({ certificates: 0, events: 0 });
    } finally {
      db.close();
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  test("check without --json prints a summary with the status", async () => {
    const result = await runCli(["check", `${domain}:${server.port}`], { env: env() });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toContain(`${domain}:${server.port}`);
    expect(result.stdout).toContain("valid");
  });

  test("check refuses a loopback target unless private targets are allowed, without connecting", async () => {
    const before = server.connections();
    const result = await runCli(["check", `${domain}:${server.port}`, "--json"], { env: env({ CERTKEEPER_ALLOW_PRIVATE_TARGETS: "false" }) });
    expectFailure(result, 1, new RegExp(domain.replace(/\./g, "\\.")));
    expect(server.connections()).toBe(before);
  });

  test("check of a name that does not resolve fails with exit 1", async () => {
    const result = await runCli(["check", `x.${TEST_DOMAIN}:${server.port}`, "--json"], { env: env() });
    expectFailure(result, 1, /x\.certkeeper\.test/);
  });

  test("check of something that is not a domain fails with a message", async () => {
    const result = await runCli(["check", "https://example.com/", "--json"], { env: env() });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("https://example.com/");
  });

  test("check without a domain is a usage error (exit 2)", async () => {
    expectUsageError(await runCli(["check", "--json"], { env: env() }), /domain/);
  });
});
