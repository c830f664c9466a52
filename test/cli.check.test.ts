/**
 * `certkeeper check DOMAIN[:PORT]...` end to end, as a real process (CONTRACT §2, §17): against real
 * TLS servers with a test PKI, printing what GET would show, storing nothing, and exiting like a
 * monitoring plugin (0 valid, 1 expiring, 2 expired/invalid/unreachable, 3 called wrongly).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startStarttlsServer } from "./support/starttls_servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { CheckedCertificate } from "../core/schemas/certificate.ts";
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

  const FINGERPRINT = /^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/;

  test("check --json shows the certificate as GET would, without id, name, thresholds and timestamps of a record", async () => {
    const { rsaIntermediate } = await testPki();
    const before = Date.now();
    const cert = await runCliJson(["check", `${domain}:${server.port}`], { env: env() });
    const after = Date.now();
    const second = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString();
    expect(Object.keys(cert).sort()).toEqual(
      [
        "domain", "status", "daysUntilExpiry", "expiresAt", "issuedAt", "issuer", "subject", "subjectAlternativeNames",
        "serialNumber", "signatureAlgorithm", "port", "lastCheckedAt", "chain", "statusReason", "revocation",
        "protocol", "connectTo", "mailDomain", "endpoints", "chainExpiresAt", "publicKey", "tls", "warnings", "alertPolicy", "renewal", "deployment",
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
        {
          subject: domain,
          issuer: "certkeeper Test RSA CA",
          validFrom: second(notBefore),
          validTo: second(notAfter),
          serialNumber: "C1:A2:B3",
          fingerprintSha256: expect.stringMatching(FINGERPRINT),
          daysUntilExpiry: 90,
        },
        {
          subject: "certkeeper Test RSA CA",
          issuer: "certkeeper Test Root CA",
          validFrom: rsaIntermediate.cert.notBefore.toISOString(),
          validTo: rsaIntermediate.cert.notAfter.toISOString(),
          serialNumber: expect.stringMatching(/^[0-9A-F]{2}(:[0-9A-F]{2})+$/),
          fingerprintSha256: expect.stringMatching(FINGERPRINT),
          daysUntilExpiry: expect.any(Number),
        },
      ],
      statusReason: null,
      // The leaf names neither an OCSP responder nor a CRL.
      revocation: { status: "not_checked", source: null, checkedAt: null, revokedAt: null, reason: null },
      protocol: "tls",
      connectTo: null,
      mailDomain: null,
      endpoints: [
        {
          address: "127.0.0.1",
          status: "valid",
          statusReason: null,
          serialNumber: "C1:A2:B3",
          fingerprintSha256: cert.chain[0].fingerprintSha256,
          expiresAt: second(notAfter),
          lastCheckedAt: cert.lastCheckedAt,
          dane: null,
        },
      ],
      chainExpiresAt: rsaIntermediate.cert.notAfter.toISOString(),
      // The leaf's key is the test PKI's default, ECDSA P-256 (signed by an RSA intermediate).
      publicKey: { algorithm: "EC", size: 256, curve: "P-256" },
      tls: { protocol: "TLSv1.3", cipher: expect.stringMatching(/^TLS_/) },
      warnings: [],
      // Judged by CERTKEEPER_ALERT_POLICY's default; the test CA publishes no renewal information.
      alertPolicy: "renewal",
      renewal: {
        deadline: new Date(Math.floor(notBefore.getTime() / 1000) * 1000 + Math.ceil(((Math.floor(notAfter.getTime() / 1000) - Math.floor(notBefore.getTime() / 1000)) * 1000 * 3) / 4)).toISOString(),
        source: "lifetime",
        window: null,
        explanationUrl: null,
        state: "not_due",
        checkedAt: null,
      },
      deployment: null,
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

  test("check without --json prints one line: status, days left, reason, domain", async () => {
    const result = await runCli(["check", `${domain}:${server.port}`], { env: env() });
    expect(result).toEqual({ code: 0, stderr: "", stdout: `valid  90 days  -  ${domain}:${server.port}\n` });
  });

  test("check refuses a loopback target unless private targets are allowed, without connecting, and names the variable", async () => {
    const before = server.connections();
    const result = await runCli(["check", `${domain}:${server.port}`, "--json"], { env: env({ CERTKEEPER_ALLOW_PRIVATE_TARGETS: "false" }) });
    expect(result.code).toBe(2);
    const view = JSON.parse(result.stdout);
    expect(view).toMatchObject({ domain, port: server.port, status: "unreachable", statusReason: "connection_refused", daysUntilExpiry: null });
    // Every field of the check view (as GET shows a certificate), the unretrieved ones null: Part III's among them.
    expect(Object.keys(view).sort()).toEqual(Object.keys(CheckedCertificate.properties).sort());
    expect([view.revocation, view.renewal, view.deployment]).toEqual([null, null, null]);
    expect(result.stderr).toContain(domain);
    expect(result.stderr).toContain("loopback address");
    expect(result.stderr).toContain("CERTKEEPER_ALLOW_PRIVATE_TARGETS=true");
    expect(server.connections()).toBe(before);
  });

  test("check of a name that does not resolve is unreachable: exit 2, dns_error, and how to point a name at an address", async () => {
    const result = await runCli(["check", `x.${TEST_DOMAIN}:${server.port}`], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^unreachable\s+-\s+dns_error\s+x\.certkeeper\.test:\d+\n$/);
    expect(result.stderr).toContain("x.certkeeper.test");
    expect(result.stderr).toContain("CERTKEEPER_RESOLVE");
  });

  test("check of something that is not a domain is a usage error (exit 3) naming it", async () => {
    const result = await runCli(["check", "https://example.com/", "--json"], { env: env() });
    expectUsageError(result, /https:\/\/example\.com\//, 3);
  });

  test("check of an IP address is a usage error (exit 3) explaining how to check a server by its address", async () => {
    for (const target of ["127.0.0.1:19443", "::1", "[::1]:8443"]) {
      const result = await runCli(["check", target], { env: env() });
      expectUsageError(result, /IP address/, 3);
      expect(result.stderr).toContain("certkeeper check example.com");
      expect(result.stderr).toContain("--connect-to ");
      expect(result.stderr).toContain("CERTKEEPER_ALLOW_PRIVATE_TARGETS=true");
    }
  });

  test("check --connect-to ADDRESS connects there, verifying the domain; --protocol speaks STARTTLS first", async () => {
    const { rsaIntermediate } = await testPki();
    const elsewhere = `elsewhere.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [elsewhere] });
    const pop = await startStarttlsServer("pop3", { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem, host: "127.0.0.5" });
    try {
      // The name itself does not resolve: only --connect-to says where the server is.
      const cert = await runCliJson(["check", `${elsewhere}:${pop.port}`, "--protocol", "pop3", "--connect-to", "127.0.0.5"], {
        env: env({ CERTKEEPER_RESOLVE: `${elsewhere}=none` }),
      });
      expect([cert.status, cert.protocol, cert.connectTo, cert.endpoints.map((e: any) => e.address)]).toEqual(["valid", "pop3", "127.0.0.5", ["127.0.0.5"]]);
      expect(pop.received()).toEqual(["STLS\r\n"]);
    } finally {
      await pop.close();
    }
  });

  test("check --protocol with an unknown protocol, or --connect-to with a bad address, is a usage error (exit 3)", async () => {
    expectUsageError(await runCli(["check", domain, "--protocol", "https"], { env: env() }), /--protocol must be one of tls, smtp/, 3);
    expectUsageError(await runCli(["check", domain, "--connect-to", "a b"], { env: env() }), /--connect-to/, 3);
  });

  test("check without a domain is a usage error (exit 3)", async () => {
    expectUsageError(await runCli(["check", "--json"], { env: env() }), /DOMAIN/, 3);
  });

  test("check with a missing CA file names CERTKEEPER_EXTRA_CA_FILE, without a stack trace (exit 3)", async () => {
    const missing = join(ws.dir, "nowhere", "ca.pem");
    const result = await runCli(["check", `${domain}:${server.port}`], { env: env({ CERTKEEPER_EXTRA_CA_FILE: missing }) });
    expectFailure(result, 3, /CERTKEEPER_EXTRA_CA_FILE/);
    expect(result.stderr).toContain(missing);
    expect(result.stderr).not.toContain("ENOENT");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("serve with a missing CA file names CERTKEEPER_EXTRA_CA_FILE in one line and exits 1", async () => {
    const missing = join(ws.dir, "nowhere", "ca.pem");
    const result = await runCli(["serve", "--port", "0"], { env: env({ CERTKEEPER_EXTRA_CA_FILE: missing }) });
    expectFailure(result, 1, /CERTKEEPER_EXTRA_CA_FILE/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("a missing CA file stops the commands that connect, naming it, and not those that only use the database", async () => {
    const missing = join(ws.dir, "nowhere", "ca.pem");
    const badCa = env({ CERTKEEPER_EXTRA_CA_FILE: missing });
    const org = await runCliJson(["org", "create", "--name", "No CA needed"], { env: badCa });
    expect(await runCliJson(["org", "list"], { env: badCa })).toContainEqual(expect.objectContaining({ id: org.id }));
    expect(await runCliJson(["certificate", "list", "--org", org.id], { env: badCa })).toEqual([]);
    const add = await runCli(["certificate", "add", "--org", org.id, `${domain}:${server.port}`], { env: badCa });
    expectFailure(add, 1, /CERTKEEPER_EXTRA_CA_FILE/);
    expect(add.stderr).toContain(missing);
    // Nothing was added: the command stopped before connecting.
    expect(await runCliJson(["certificate", "list", "--org", org.id], { env: env() })).toEqual([]);
  });
});

describe("check exits like a monitoring plugin", () => {
  const base = `plugin.${TEST_DOMAIN}`;
  const names = { valid: `valid.${base}`, expiring: `expiring.${base}`, expired: `expired.${base}`, selfSigned: `self.${base}`, mismatch: `mismatch.${base}`, stranger: `stranger.${base}` };
  const servers: Record<string, TlsTestServer> = {};
  let ws: Workspace;
  let caFile: string;

  beforeAll(async () => {
    const { root, rsaIntermediate, strangerRoot } = await testPki();
    ws = workspace();
    caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    // issuer null: the leaf signs itself.
    const issued = async (dnsNames: string[], daysLeft: number, issuer: typeof root | null = rsaIntermediate) => {
      const leaf = await createLeaf({ issuer: issuer ?? undefined, dnsNames, notAfter: new Date(Date.now() + daysLeft * DAY + 3_600_000), notBefore: new Date(Date.now() - 100 * DAY) });
      return startTlsServer({ cert: issuer ? chainPem(leaf, ...(issuer === rsaIntermediate ? [rsaIntermediate] : [])) : leaf.certPem, key: leaf.keyPem });
    };
    servers.valid = await issued([names.valid], 60);
    servers.expiring = await issued([names.expiring], 10);
    servers.expired = await issued([names.expired], -3);
    servers.selfSigned = await issued([names.selfSigned], 60, null);
    servers.mismatch = await issued([`other.${base}`], 60);
    servers.stranger = await issued([names.stranger], 60, strangerRoot);
  });

  afterAll(async () => {
    await Promise.all(Object.values(servers).map((s) => s.close()));
  });

  const env = () => ({
    ...ws.env,
    CERTKEEPER_RESOLVE: `*.${base}=127.0.0.1`,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_TLS_TIMEOUT: "5s",
  });
  const target = (key: keyof typeof names) => `${names[key]}:${servers[key]!.port}`;

  test.each([
    ["valid", 0, "valid", null, []],
    // 10 days left of 110: past its renewal deadline under the default policy, within 30 days under days.
    ["expiring", 1, "expiring", "renewal_overdue", []],
    ["expiring", 1, "expiring", "expiring_soon", ["--alert-policy", "days"]],
    ["expired", 2, "expired", "expired", []],
    ["selfSigned", 2, "invalid", "self_signed", []],
    ["mismatch", 2, "invalid", "hostname_mismatch", []],
    ["stranger", 2, "invalid", "untrusted_issuer", []],
  ] as const)("a %s certificate exits %d with status %s (%s) %p", async (key, code, status, reason, flags) => {
    const result = await runCli(["check", target(key), ...flags], { env: env() });
    expect({ code: result.code, stdout: result.stdout }).toEqual({
      code,
      stdout: expect.stringMatching(new RegExp(`^${status}\\s+(\\d+ days?|\\d+ days? ago|less than a day ago)\\s+${reason ?? "-"}\\s+${target(key).replace(/\./g, "\\.")}\\n$`)),
    });
  });

  test("an untrusted issuer's note names CERTKEEPER_EXTRA_CA_FILE", async () => {
    const result = await runCli(["check", target("stranger")], { env: env() });
    expect(result.stderr).toContain("CERTKEEPER_EXTRA_CA_FILE");
  });

  test("several targets: one line each in the order given, and the worst decides the exit code", async () => {
    const result = await runCli(["check", target("valid"), target("expiring")], { env: env() });
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^valid\\s+\\d+ days\\s+-\\s+${names.valid.replace(/\./g, "\\.")}:`));
    expect(lines[1]).toMatch(new RegExp(`^expiring\\s+10 days\\s+renewal_overdue\\s+${names.expiring.replace(/\./g, "\\.")}:`));

    const all = await runCli(["check", target("expiring"), target("valid"), target("selfSigned"), `none.${TEST_DOMAIN}:1`], {
      env: { ...env(), CERTKEEPER_RESOLVE: `*.${base}=127.0.0.1,none.${TEST_DOMAIN}=none` },
    });
    expect(all.code).toBe(2);
    expect(all.stdout.trimEnd().split("\n").map((line) => line.split(/\s+/)[0])).toEqual(["expiring", "valid", "invalid", "unreachable"]);
  });

  test("several targets with --json: an array of GET views in the order given; one target: the view itself", async () => {
    const many = await runCli(["check", target("valid"), target("expired"), "--json"], { env: env() });
    expect(many.code).toBe(2);
    const views = JSON.parse(many.stdout);
    expect(views.map((v: any) => [v.domain, v.status, v.statusReason])).toEqual([
      [names.valid, "valid", null],
      [names.expired, "expired", "expired"],
    ]);
    const one = await runCliJson(["check", target("valid")], { env: env() });
    expect(Array.isArray(one)).toBe(false);
    expect(one).toMatchObject({ domain: names.valid, status: "valid" });
  });

  test("check --help and help check explain the exit codes on stdout, exit 0", async () => {
    for (const args of [["check", "--help"], ["help", "check"]]) {
      const result = await runCli(args, { env: env() });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout).toContain("Usage: certkeeper check DOMAIN[:PORT]...");
      expect(result.stdout).toContain("3 called wrongly");
    }
  });
});
