/**
 * The CLI end to end, as real processes (CONTRACT §1, §2, §3): organizations, users and keys in a
 * libSQL file, `check` against a real TLS server, and `serve` running beside the CLI on one database.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { generateApiKey } from "../core/auth/api_key.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { runCli, runCliJson, runCliScript, startServe, tempWorkspace, type CliResult } from "./support/cli.ts";

// describe.concurrent tests do not inherit the preload's default timeout; CLI processes need more than 5 s under load.
setDefaultTimeout(30_000);

// Tests of a group run side by side, so one test's processes wait for the others' CPU time.

const ID = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix}_[0-9A-Za-z]{16,}$`));
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const workspaces: Array<ReturnType<typeof tempWorkspace>> = [];
function workspace() {
  const ws = tempWorkspace();
  workspaces.push(ws);
  return ws;
}

afterAll(() => {
  for (const ws of workspaces) ws.cleanup();
});

/** A failed command: the exit code, nothing on stdout, a sentence on stderr. */
function expectFailure(result: CliResult, code: number, stderr: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: "" });
  expect(result.stderr).toMatch(stderr);
}

/** A usage error: exit 2, nothing on stdout, the message and the usage on stderr. */
function expectUsageError(result: CliResult, message: RegExp): void {
  expectFailure(result, 2, message);
  expect(result.stderr).toContain("Usage: certkeeper <command> [flags]");
}

/** A database with one organization (free plan) and one user of `role`, prepared once and shared. */
async function orgWithUser(env: Record<string, string>, role = "owner") {
  const org = await runCliJson(["org", "create", "--name", "Acme"], { env });
  const user = await runCliJson(["user", "create", "--org", org.id, "--email", `${role}-${crypto.randomUUID()}@acme.test`, "--role", role], { env });
  return { org, user };
}

// One database for the tests that only read or add: created before they run in parallel, so that
// concurrent first uses do not race the schema migration.
let shared: ReturnType<typeof tempWorkspace>;
let sharedOrg: any;
let sharedUser: any;
beforeAll(async () => {
  shared = workspace();
  ({ org: sharedOrg, user: sharedUser } = await orgWithUser(shared.env));
});

describe.concurrent("org create", () => {
  test("org create defaults to the free plan: 25 certificates, 5 channels, 60 requests per minute", async () => {
    const org = await runCliJson(["org", "create", "--name", "Free Co"], { env: shared.env });
    expect(org).toEqual({
      id: ID("org"),
      name: "Free Co",
      plan: "free",
      limits: { certificates: 25, channels: 5, requestsPerMinute: 60 },
    });
  });

  test("org create --plan pro and --plan enterprise carry their plan's limits", async () => {
    const [pro, enterprise] = await Promise.all([
      runCliJson(["org", "create", "--name", "Pro Co", "--plan", "pro"], { env: shared.env }),
      runCliJson(["org", "create", "--name", "Big Co", "--plan", "enterprise"], { env: shared.env }),
    ]);
    expect(pro).toEqual({ id: ID("org"), name: "Pro Co", plan: "pro", limits: { certificates: 500, channels: 50, requestsPerMinute: 600 } });
    expect(enterprise).toEqual({
      id: ID("org"),
      name: "Big Co",
      plan: "enterprise",
      limits: { certificates: 100000, channels: 1000, requestsPerMinute: 6000 },
    });
  });

  test("--certificate-limit, --channel-limit and --rate-limit override the plan's limits", async () => {
    const [all, one] = await Promise.all([
      runCliJson(
        ["org", "create", "--name", "Custom", "--plan", "pro", "--certificate-limit", "3", "--channel-limit", "0", "--rate-limit", "7"],
        { env: shared.env },
      ),
      runCliJson(["org", "create", "--name", "One", "--rate-limit", "1000"], { env: shared.env }),
    ]);
    expect(all).toEqual({ id: ID("org"), name: "Custom", plan: "pro", limits: { certificates: 3, channels: 0, requestsPerMinute: 7 } });
    expect(one).toEqual({ id: ID("org"), name: "One", plan: "free", limits: { certificates: 25, channels: 5, requestsPerMinute: 1000 } });
  });

  test("org create without --json prints a sentence naming the id, not JSON", async () => {
    const result = await runCli(["org", "create", "--name", "Plain"], { env: shared.env });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/org_[0-9A-Za-z]{16,}/);
    expect(() => JSON.parse(result.stdout)).toThrow();
  });

  test("org create refuses an unknown plan: exit 1, the reason on stderr, stdout empty", async () => {
    expectFailure(await runCli(["org", "create", "--name", "X", "--plan", "gold", "--json"], { env: shared.env }), 1, /"gold"/);
  });

  test("org create refuses a limit that is not a whole number as a usage error (exit 2)", async () => {
    expectUsageError(await runCli(["org", "create", "--name", "X", "--rate-limit", "ten", "--json"], { env: shared.env }), /--rate-limit/);
  });
});

describe.concurrent("user create", () => {
  test("user create makes owners, admins and members of an organization", async () => {
    const emails = { owner: "owner@users.test", admin: "admin@users.test", member: "member@users.test" };
    const users = await Promise.all(
      Object.entries(emails).map(([role, email]) =>
        runCliJson(["user", "create", "--org", sharedOrg.id, "--email", email, "--role", role], { env: shared.env }),
      ),
    );
    expect(users).toEqual(
      Object.entries(emails).map(([role, email]) => ({ id: ID("usr"), organizationId: sharedOrg.id, email, role })),
    );
  });

  test("user create refuses a role that does not exist: exit 1, stderr names it, stdout empty", async () => {
    const result = await runCli(["user", "create", "--org", sharedOrg.id, "--email", "boss@users.test", "--role", "superuser", "--json"], {
      env: shared.env,
    });
    expectFailure(result, 1, /"superuser"/);
  });

  test("user create refuses an address that is not an email address", async () => {
    const result = await runCli(["user", "create", "--org", sharedOrg.id, "--email", "not-an-address", "--role", "admin", "--json"], {
      env: shared.env,
    });
    expectFailure(result, 1, /"not-an-address"/);
  });

  test("user create refuses an organization that does not exist", async () => {
    const result = await runCli(["user", "create", "--org", "org_doesnotexist000000", "--email", "x@users.test", "--role", "admin", "--json"], {
      env: shared.env,
    });
    expectFailure(result, 1, /"org_doesnotexist000000"/);
  });

  test("user create refuses an email address that already has a user", async () => {
    const args = ["user", "create", "--org", sharedOrg.id, "--email", "twice@users.test", "--role", "member"];
    await runCliJson(args, { env: shared.env });
    expectFailure(await runCli([...args, "--json"], { env: shared.env }), 1, /twice@users\.test/);
  });

  test("user create without --role is a usage error (exit 2)", async () => {
    expectUsageError(
      await runCli(["user", "create", "--org", sharedOrg.id, "--email", "norole@users.test", "--json"], { env: shared.env }),
      /--role/,
    );
  });

  test("user create --password - reads the password from stdin and stores only its hash", async () => {
    const password = "correct horse battery staple";
    const args = ["user", "create", "--org", sharedOrg.id, "--email", "stdin@users.test", "--role", "owner", "--password", "-", "--json"];
    const result = await runCli(args, {
      env: shared.env,
      stdin: `${password}\n`,
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const user = JSON.parse(result.stdout);
    expect(user).toEqual({ id: ID("usr"), organizationId: sharedOrg.id, email: "stdin@users.test", role: "owner" });
    expect(result.stdout).not.toContain(password);

    const db = createClient({ url: shared.env.CERTKEEPER_DATABASE_URL! });
    try {
      const rows = await db.execute({ sql: "SELECT password_hash FROM users WHERE id = ?", args: [user.id] });
      const hash = String(rows.rows[0]!.password_hash);
      expect(hash).not.toContain(password);
      // The trailing newline of the piped line is not part of the password.
      expect([await Bun.password.verify(password, hash), await Bun.password.verify(`${password}\n`, hash)]).toEqual([true, false]);
    } finally {
      db.close();
    }
  });

  test("user create --password - refuses a too short password read from stdin", async () => {
    const args = ["user", "create", "--org", sharedOrg.id, "--email", "short@users.test", "--role", "owner", "--password", "-", "--json"];
    const result = await runCli(args, {
      env: shared.env,
      stdin: "short\n",
    });
    expectFailure(result, 1, /password/i);
  });
});

describe.concurrent("API keys", () => {
  test("key create prints a live key once: ck_live_ and at least 32 base62 characters", async () => {
    const created = await runCliJson(["key", "create", "--user", sharedUser.id, "--name", "deploy"], { env: shared.env });
    expect(created).toEqual({
      id: ID("key"),
      key: expect.stringMatching(/^ck_live_[0-9A-Za-z]{32,}$/),
      name: "deploy",
      mode: "live",
      userId: sharedUser.id,
    });
  });

  test("key create --test prints a test key: ck_test_", async () => {
    const created = await runCliJson(["key", "create", "--user", sharedUser.id, "--name", "ci", "--test"], { env: shared.env });
    expect(created).toEqual({
      id: ID("key"),
      key: expect.stringMatching(/^ck_test_[0-9A-Za-z]{32,}$/),
      name: "ci",
      mode: "test",
      userId: sharedUser.id,
    });
  });

  test("key create refuses a user that does not exist", async () => {
    const result = await runCli(["key", "create", "--user", "usr_doesnotexist000000", "--name", "x", "--json"], { env: shared.env });
    expectFailure(result, 1, /usr_doesnotexist000000/);
  });

  test("key list shows every key of the organization without its secret or hash; key revoke marks it", async () => {
    const ws = workspace();
    const { org, user } = await orgWithUser(ws.env, "admin");
    const [live, testKey] = await Promise.all([
      runCliJson(["key", "create", "--user", user.id, "--name", "live one"], { env: ws.env }),
      runCliJson(["key", "create", "--user", user.id, "--name", "test one", "--test"], { env: ws.env }),
    ]);
    const revoked = await runCliJson(["key", "revoke", "--id", live.id], { env: ws.env });
    expect(revoked).toEqual({ id: live.id, revoked: true });

    const [listJson, listText] = await Promise.all([
      runCli(["key", "list", "--org", org.id, "--json"], { env: ws.env }),
      runCli(["key", "list", "--org", org.id], { env: ws.env }),
    ]);
    expect({ code: listJson.code, stderr: listJson.stderr }).toEqual({ code: 0, stderr: "" });
    const keys = JSON.parse(listJson.stdout) as any[];
    const byId = Object.fromEntries(keys.map((k) => [k.id, k]));
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(["createdAt", "id", "last4", "lastUsedAt", "mode", "name", "prefix", "revokedAt"]);
      expect(key.createdAt).toMatch(ISO);
    }
    expect(byId[live.id]).toEqual({
      id: live.id,
      name: "live one",
      mode: "live",
      prefix: "ck_live_",
      last4: live.key.slice(-4),
      createdAt: expect.stringMatching(ISO),
      lastUsedAt: null,
      revokedAt: expect.stringMatching(ISO),
    });
    expect(byId[testKey.id]).toEqual({
      id: testKey.id,
      name: "test one",
      mode: "test",
      prefix: "ck_test_",
      last4: testKey.key.slice(-4),
      createdAt: expect.stringMatching(ISO),
      lastUsedAt: null,
      revokedAt: null,
    });

    // Neither the secret nor a hash of it, in any usual encoding, appears in either rendering.
    for (const secret of [live.key, testKey.key]) {
      const random = secret.slice("ck_live_".length);
      const sha256 = createHash("sha256").update(secret);
      const forms = [secret, random, sha256.copy().digest("hex"), sha256.copy().digest("base64"), sha256.digest("base64url")];
      for (const output of [listJson.stdout, listText.stdout]) {
        for (const form of forms) expect(output).not.toContain(form);
      }
    }
    expect(listText.code).toBe(0);
    expect(listText.stdout).toContain(live.id);

    // The database holds no key either (CONTRACT §3): look at the raw bytes of every file of it.
    for (const file of readdirSync(ws.dir).filter((f) => f.startsWith("db.sqlite"))) {
      const bytes = readFileSync(join(ws.dir, file)).toString("latin1");
      expect(bytes).not.toContain(live.key);
      expect(bytes).not.toContain(testKey.key);
    }
  });

  test("key revoke refuses a key that does not exist", async () => {
    expectFailure(await runCli(["key", "revoke", "--id", "key_doesnotexist000000", "--json"], { env: shared.env }), 1, /key_doesnotexist000000/);
  });

  test("key list refuses an organization that does not exist", async () => {
    expectFailure(await runCli(["key", "list", "--org", "org_doesnotexist000000", "--json"], { env: shared.env }), 1, /org_doesnotexist000000/);
  });
});

describe.concurrent("command line conventions", () => {
  test("--json prints exactly one JSON document and nothing else on stdout", async () => {
    const result = await runCli(["org", "create", "--name", "Json Co", "--json"], { env: shared.env });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout).name).toBe("Json Co");
    expect(result.stdout.trim().startsWith("{")).toBe(true);
    expect(result.stdout.trimEnd().endsWith("}")).toBe(true);
  });

  test("an unknown command exits 2 with the usage on stderr", async () => {
    expectUsageError(await runCli(["frobnicate", "--json"], { env: shared.env }), /frobnicate/);
    expectUsageError(await runCli(["org", "delete", "--json"], { env: shared.env }), /org delete/);
  });

  test("a missing required flag exits 2 with the usage on stderr", async () => {
    expectUsageError(await runCli(["org", "create", "--json"], { env: shared.env }), /--name/);
  });

  test("an unknown flag exits 2 with the usage on stderr", async () => {
    expectUsageError(await runCli(["org", "create", "--name", "X", "--colour", "red", "--json"], { env: shared.env }), /--colour/);
  });

  test("no command at all exits 2 with the usage on stderr", async () => {
    expectUsageError(await runCli([], { env: shared.env }), /Usage/);
  });

  test("--help prints the usage on stdout and exits 0", async () => {
    const result = await runCli(["--help"], { env: shared.env });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toContain("Usage: certkeeper <command> [flags]");
  });

  test("the first command creates an empty database, folders included", async () => {
    const ws = workspace();
    const path = join(ws.dir, "nested", "deeper", "certkeeper.db");
    const env = { CERTKEEPER_DATABASE_URL: `file:${path}` };
    const org = await runCliJson(["org", "create", "--name", "First"], { env });
    expect(existsSync(path)).toBe(true);
    expect(await runCliJson(["key", "list", "--org", org.id], { env })).toEqual([]);
  });

  test("with no configuration the database is ./data/certkeeper.db under the working directory", async () => {
    const ws = workspace();
    const org = await runCliJson(["org", "create", "--name", "Default"], { cwd: ws.dir });
    expect(org.name).toBe("Default");
    expect(existsSync(join(ws.dir, "data", "certkeeper.db"))).toBe(true);
  });

  test("bun run certkeeper … --json prints the JSON document alone on stdout", async () => {
    const result = await runCliScript(["org", "create", "--name", "Script Co", "--json"], { env: shared.env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      id: ID("org"),
      name: "Script Co",
      plan: "free",
      limits: { certificates: 25, channels: 5, requestsPerMinute: 60 },
    });
  });

  test("serve on a port already in use exits 1 with one line on stderr", async () => {
    const blocker = net.createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, "127.0.0.1", () => resolve((blocker.address() as net.AddressInfo).port)),
    );
    try {
      const result = await runCli(["serve"], {
        env: { ...shared.env, CERTKEEPER_HOST: "127.0.0.1", CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "warn" },
        timeoutMs: 10_000,
      });
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
      expect(result.stderr).toContain(String(port));
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  test("a malformed configuration variable is reported on stderr", async () => {
    const result = await runCli(["org", "create", "--name", "X", "--json"], { env: { ...shared.env, CERTKEEPER_LOG_LEVEL: "loud" } });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("CERTKEEPER_LOG_LEVEL");
  });
});

describe("check DOMAIN[:PORT]", () => {
  const domain = `cli.${TEST_DOMAIN}`;
  let server: TlsTestServer;
  let caFile: string;
  let ws: ReturnType<typeof tempWorkspace>;
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

describe("serve and the CLI on one database at the same time", () => {
  test("a key made by the CLI works at once, is refused from the request after its revocation, and SIGTERM exits 0", async () => {
    const ws = workspace();
    // The first process migrates the schema; the server then starts on an existing database.
    const { org, user } = await orgWithUser(ws.env, "owner");
    const serve = await startServe({ env: ws.env, cwd: ws.dir });
    try {
      const created = await runCliJson(["key", "create", "--user", user.id, "--name", "while serving"], { env: ws.env });
      const get = (authorization?: string) =>
        fetch(`${serve.url}/v1/certificates/cert_xxxxxxxxxxxxxxxxxxxx`, { headers: authorization ? { authorization } : {} }).then(
          async (r) => ({ status: r.status, body: await r.json() }),
        );
      const errorBody = (code: string) => ({ error: { code, message: expect.any(String) } });

      expect(await get(`Bearer ${created.key}`)).toEqual({ status: 404, body: errorBody("certificate_not_found") });
      expect(await get(`bearer ${created.key}`)).toEqual({ status: 404, body: errorBody("certificate_not_found") });

      expect(await runCliJson(["key", "revoke", "--id", created.id], { env: ws.env })).toEqual({ id: created.id, revoked: true });
      expect(await get(`Bearer ${created.key}`)).toEqual({ status: 401, body: errorBody("expired_api_key") });

      const [unknown, malformed, missing, otherScheme] = await Promise.all([
        get(`Bearer ${generateApiKey("live").key}`),
        get("Bearer ck_live_short"),
        get(),
        get(`Basic ${btoa("a:b")}`),
      ]);
      expect(unknown).toEqual({ status: 401, body: errorBody("invalid_api_key") });
      expect(malformed).toEqual({ status: 401, body: errorBody("invalid_api_key") });
      expect(missing).toEqual({ status: 401, body: errorBody("missing_api_key") });
      expect(otherScheme).toEqual({ status: 401, body: errorBody("missing_api_key") });

      // The key list, read while the server runs, shows the revocation.
      const [listed] = await runCliJson(["key", "list", "--org", org.id], { env: ws.env });
      expect(listed).toMatchObject({ id: created.id, revokedAt: expect.stringMatching(ISO) });
    } finally {
      const started = Date.now();
      const code = await serve.stop("SIGTERM", 5000);
      const { stdout, stderr } = serve.output();
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      expect(Date.now() - started).toBeLessThan(5000);
      // Logs never carry a key (CONTRACT §10).
      expect(stdout).not.toContain("ck_live_");
    }
  });
});
