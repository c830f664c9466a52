/**
 * The CLI's account commands end to end, as real processes (CONTRACT §1, §3): organizations, users
 * and API keys in a libSQL file, and the conventions every command keeps (--json, exit codes, usage).
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import {
  expectFailure,
  logLinesOf,
  messagesOf,
  expectUsageError,
  ISO,
  orgWithUser,
  runCli,
  runCliJson,
  runCliScript,
  workspacesRemovedAfterAll,
  type Workspace,
} from "./support/cli.ts";

// CLI processes need more than Bun's 5 s default under load.
setDefaultTimeout(30_000);

// The tests run one after another: each CLI process costs about a second of CPU to start, and tests
// side by side only queued their processes behind each other's until the timeouts fired (the suite
// already runs files side by side; see test/run.ts).

const ID = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix}_[0-9A-Za-z]{16,}$`));

const workspace = workspacesRemovedAfterAll();

// One database for the tests that only read or add, created (and migrated) once before them.
let shared: Workspace;
let sharedOrg: any;
let sharedUser: any;
beforeAll(async () => {
  shared = workspace();
  ({ org: sharedOrg, user: sharedUser } = await orgWithUser(shared.env));
});

describe("org create", () => {
  test("org create defaults to the free plan: 25 certificates, 5 channels, 60 requests per minute", async () => {
    const org = await runCliJson(["org", "create", "--name", "Free Co"], { env: shared.env });
    expect(org).toEqual({
      id: ID("org"),
      name: "Free Co",
      plan: "free",
      limits: { certificates: 25, channels: 5, requestsPerMinute: 60, watches: 1 },
    });
  });

  test("org create --plan pro and --plan enterprise carry their plan's limits", async () => {
    const [pro, enterprise] = await Promise.all([
      runCliJson(["org", "create", "--name", "Pro Co", "--plan", "pro"], { env: shared.env }),
      runCliJson(["org", "create", "--name", "Big Co", "--plan", "enterprise"], { env: shared.env }),
    ]);
    expect(pro).toEqual({ id: ID("org"), name: "Pro Co", plan: "pro", limits: { certificates: 500, channels: 50, requestsPerMinute: 600, watches: 10 } });
    expect(enterprise).toEqual({
      id: ID("org"),
      name: "Big Co",
      plan: "enterprise",
      limits: { certificates: 100000, channels: 1000, requestsPerMinute: 6000, watches: 1000 },
    });
  });

  test("--certificate-limit, --channel-limit, --rate-limit and --watch-limit override the plan's limits", async () => {
    const [all, one] = await Promise.all([
      runCliJson(
        ["org", "create", "--name", "Custom", "--plan", "pro", "--certificate-limit", "3", "--channel-limit", "0", "--rate-limit", "7", "--watch-limit", "4"],
        { env: shared.env },
      ),
      runCliJson(["org", "create", "--name", "One", "--rate-limit", "1000"], { env: shared.env }),
    ]);
    expect(all).toEqual({ id: ID("org"), name: "Custom", plan: "pro", limits: { certificates: 3, channels: 0, requestsPerMinute: 7, watches: 4 } });
    expect(one).toEqual({ id: ID("org"), name: "One", plan: "free", limits: { certificates: 25, channels: 5, requestsPerMinute: 1000, watches: 1 } });
  });

  test("names are 1 to 100 characters as the API counts them, trimmed: 60 emoji fit (org create, org update, key create), 101 letters do not", async () => {
    const sixtyEmoji = "🔒".repeat(60);
    const org = await runCliJson(["org", "create", "--name", sixtyEmoji], { env: shared.env });
    expect(org.name).toBe(sixtyEmoji);
    expect((await runCliJson(["org", "update", "--id", org.id, "--name", ` ${"é".repeat(100)} `], { env: shared.env })).name).toBe("é".repeat(100));
    expect((await runCliJson(["key", "create", "--user", sharedUser.id, "--name", sixtyEmoji], { env: shared.env })).name).toBe(sixtyEmoji);
    expectFailure(await runCli(["org", "create", "--name", "n".repeat(101), "--json"], { env: shared.env }), 1, /Field "name" must be a string of 1 to 100 characters/);
    expectFailure(await runCli(["org", "create", "--name", "   ", "--json"], { env: shared.env }), 1, /Field "name" must be a string of 1 to 100 characters/);
  });

  test("org create without --json prints a sentence naming the id, not JSON", async () => {
    const result = await runCli(["org", "create", "--name", "Plain"], { env: shared.env });
    expect(result.code).toBe(0);
    expect(messagesOf(result.stderr)).toBe("");
    expect(result.stdout).toMatch(/org_[0-9A-Za-z]{16,}/);
    expect(() => JSON.parse(result.stdout)).toThrow();
  });

  test("org create refuses an unknown plan as a usage error (exit 2) naming --plan, stdout empty", async () => {
    expectUsageError(await runCli(["org", "create", "--name", "X", "--plan", "gold", "--json"], { env: shared.env }), /--plan must be free, pro or enterprise; got "gold"/);
  });

  test("org create refuses a limit that is not a whole number as a usage error (exit 2)", async () => {
    expectUsageError(await runCli(["org", "create", "--name", "X", "--rate-limit", "ten", "--json"], { env: shared.env }), /--rate-limit/);
    expectUsageError(await runCli(["org", "create", "--name", "X", "--watch-limit", "many", "--json"], { env: shared.env }), /--watch-limit/);
    // A number past any limit (and past what a double keeps exactly) is refused, not stored rounded.
    expectUsageError(
      await runCli(["org", "create", "--name", "X", "--certificate-limit", "99999999999999999999", "--json"], { env: shared.env }),
      /--certificate-limit must be a whole number from 0 to 1,000,000,000; got "99999999999999999999"/,
    );
    // A rate limit of 0 would refuse every request of the organization: a typo, not a setting.
    expectUsageError(
      await runCli(["org", "create", "--name", "X", "--rate-limit", "0", "--json"], { env: shared.env }),
      /--rate-limit must be a whole number from 1 to 1,000,000,000 \(at 0 every request of the organization would be refused\); got "0"/,
    );
    const org = await runCliJson(["org", "create", "--name", "Zero certificates", "--certificate-limit", "0"], { env: shared.env });
    expect(org.limits.certificates).toBe(0);
  });
});

describe("user create", () => {
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

  test("user create refuses a role that does not exist as a usage error (exit 2) naming --role, stdout empty", async () => {
    const result = await runCli(["user", "create", "--org", sharedOrg.id, "--email", "boss@users.test", "--role", "superuser", "--json"], {
      env: shared.env,
    });
    expectUsageError(result, /--role must be owner, admin or member; got "superuser"/);
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
    expect({ code: result.code, stderr: messagesOf(result.stderr) }).toEqual({ code: 0, stderr: "" });
    const user = JSON.parse(result.stdout);
    // Logged as the server logs it: who was made, and that a password was set; never the password.
    expect(logLinesOf(result.stderr).map((line) => [line.msg, line.userId])).toEqual([["user created", user.id]]);
    expect(result.stderr).not.toContain(password);
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

describe("API keys", () => {
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
    // A table, headed as the other lists are.
    expect(listText.stdout.split("\n")[0]).toMatch(/^ID\s+KEY\s+NAME\s+CREATED\s+STATE$/);
    expect(listText.stdout.split("\n").find((line) => line.startsWith(live.id))).toMatch(/ck_live_…\w{4}\s+live one\s+\d{4}-.*\s+revoked \d{4}-/);

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

describe("command line conventions", () => {
  test("--json prints exactly one JSON document and nothing else on stdout", async () => {
    const result = await runCli(["org", "create", "--name", "Json Co", "--json"], { env: shared.env });
    // stderr holds only the log line of what it did (stdout is the answer alone).
    expect({ code: result.code, stderr: messagesOf(result.stderr) }).toEqual({ code: 0, stderr: "" });
    expect(logLinesOf(result.stderr).map((line) => line.msg)).toEqual(["organization created"]);
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
      limits: { certificates: 25, channels: 5, requestsPerMinute: 60, watches: 1 },
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
