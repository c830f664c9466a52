/**
 * The CLI for the daily work (CONTRACT §23), typed as a user types it, against a real `certkeeper
 * serve` on the same database: `org update` and limits that apply from the next request, `org list`
 * with usage beside limits, names and emails wherever an id is asked, `certificate add/list/remove`,
 * `channel list/test`, `--version`, and set-up commands that can be run twice (`--if-missing`).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import packageJson from "../package.json" with { type: "json" };
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { logLinesOf, messagesOf, expectFailure, expectUsageError, runCli, runCliJson, startServe, workspacesRemovedAfterAll, type ServeProcess, type Workspace } from "./support/cli.ts";

setDefaultTimeout(60_000);

const workspace = workspacesRemovedAfterAll();
const domain = (name: string) => `${name}.cli.${TEST_DOMAIN}`;
let ws: Workspace;
let serve: ServeProcess;
let receiver: HttpReceiver;
const servers: TlsTestServer[] = [];
const ports: Record<string, number> = {};
let org: any;
let key: string;

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${serve.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as any };
}

beforeAll(async () => {
  ws = workspace();
  const { root, rsaIntermediate } = await testPki();
  const caFile = join(ws.dir, "root.pem");
  writeFileSync(caFile, root.certPem);
  for (const [name, days] of [["one", 60], ["two", 90], ["three", 120], ["soon", 5]] as const) {
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain(name)], notAfter: new Date(Date.now() + days * DAY + 3_600_000) });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    servers.push(server);
    ports[name] = server.port;
  }
  receiver = await startHttpReceiver();
  Object.assign(ws.env, {
    CERTKEEPER_RESOLVE: `*.cli.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_TLS_TIMEOUT: "3s",
  });
  org = await runCliJson(["org", "create", "--name", "Acme", "--certificate-limit", "1", "--channel-limit", "1"], { env: ws.env });
  await runCliJson(["user", "create", "--org", "Acme", "--email", "you@acme.example", "--role", "owner"], { env: ws.env });
  key = (await runCliJson(["key", "create", "--user", "you@acme.example", "--name", "laptop"], { env: ws.env })).key;
  serve = await startServe({ env: ws.env, cwd: ws.dir });
});

afterAll(async () => {
  await serve?.stop("SIGKILL");
  await Promise.all([...servers.map((s) => s.close()), receiver?.close()]);
});

describe("self-hosted limits", () => {
  test("a full plan names org update; org update raises the limit, and the running server applies it from the next request", async () => {
    expect((await api("POST", "/v1/certificates", { domain: domain("one"), port: ports.one })).status).toBe(201);
    const refused = await api("POST", "/v1/certificates", { domain: domain("two"), port: ports.two });
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toContain(`npm run certkeeper -- org update --id ${org.id} --certificate-limit N`);
    const channel = await api("POST", "/v1/channels", { type: "webhook", name: "Hook", config: { url: `${receiver.url}/hook` } });
    expect(channel.status).toBe(201);
    const second = await api("POST", "/v1/channels", { type: "email", name: "Mail", config: { email: "ops@acme.example" } });
    expect([second.status, second.json.error.code]).toEqual([402, "channel_limit_reached"]);
    expect(second.json.error.message).toContain(`npm run certkeeper -- org update --id ${org.id} --channel-limit N`);

    const updated = await runCliJson(["org", "update", "--id", "Acme", "--certificate-limit", "5", "--channel-limit", "3"], { env: ws.env });
    // What org create prints.
    expect(updated).toEqual({ id: org.id, name: "Acme", plan: "free", limits: { certificates: 5, channels: 3, requestsPerMinute: 60, watches: 1 } });
    expect((await api("POST", "/v1/certificates", { domain: domain("two"), port: ports.two })).status).toBe(201);
    expect((await api("POST", "/v1/channels", { type: "email", name: "Mail", config: { email: "ops@acme.example" } })).status).toBe(201);
  });

  test("org update --plan brings the plan's limits, which limit flags then override; without --plan each flag changes one limit", async () => {
    const other = await runCliJson(["org", "create", "--name", "Plans Co"], { env: ws.env });
    const pro = await runCliJson(["org", "update", "--id", other.id, "--plan", "pro", "--watch-limit", "3", "--name", "Plans Inc"], { env: ws.env });
    expect(pro).toEqual({ id: other.id, name: "Plans Inc", plan: "pro", limits: { certificates: 500, channels: 50, requestsPerMinute: 600, watches: 3 } });
    const text = await runCli(["org", "update", "--id", "Plans Inc", "--rate-limit", "90"], { env: ws.env });
    expect({ code: text.code, stderr: messagesOf(text.stderr) }).toEqual({ code: 0, stderr: "" });
    expect(text.stdout).toBe(`Organization Plans Inc updated: ${other.id}\nPlan pro: 500 certificates, 50 channels, 90 requests per minute per key, 3 watches.\n`);
    expectUsageError(await runCli(["org", "update", "--id", other.id], { env: ws.env }), /needs something to change/);
    expectUsageError(await runCli(["org", "update", "--id", other.id, "--plan", "gold"], { env: ws.env }), /--plan must be free, pro or enterprise; got "gold"/);
    expectFailure(await runCli(["org", "update", "--id", "Nobody", "--rate-limit", "5"], { env: ws.env }), 1, /No organization with id or name "Nobody": see org list/);
  });

  test("org list shows what each organization holds and its limits as two things, never the limit as the count", async () => {
    const orgs = await runCliJson(["org", "list"], { env: ws.env });
    const acme = orgs.find((o: any) => o.id === org.id);
    expect(acme.usage.live).toEqual({ certificates: 2, channels: 2, watches: 0 });
    expect(acme.usage.test).toEqual({ certificates: 0, channels: 0, watches: 0 });
    expect(acme.limits).toMatchObject({ certificates: 5, channels: 3 });
    const table = await runCli(["org", "list"], { env: ws.env });
    expect(table.stdout).toMatch(new RegExp(`${org.id}\\s+Acme\\s+free\\s+2 of 5\\s+2 of 3\\s+0 of 1\\s+at most 60`));
  });
});

describe("ids or unique names and emails", () => {
  test("--org takes a name (any case) and --user an email; a name two organizations share is refused, naming their ids", async () => {
    const users = await runCliJson(["user", "list", "--org", "acme"], { env: ws.env });
    expect(users.map((u: any) => u.email)).toEqual(["you@acme.example"]);
    const keys = await runCliJson(["key", "list", "--org", "ACME"], { env: ws.env });
    expect(keys.map((k: any) => k.name)).toEqual(["laptop"]);
    const twin1 = await runCliJson(["org", "create", "--name", "Twin"], { env: ws.env });
    const twin2 = await runCliJson(["org", "create", "--name", "twin"], { env: ws.env });
    const refused = await runCli(["user", "list", "--org", "Twin"], { env: ws.env });
    expectFailure(refused, 1, /2 organizations are named "Twin": give the id of the one you mean/);
    expect(refused.stderr).toContain(twin1.id);
    expect(refused.stderr).toContain(twin2.id);
    expect(await runCliJson(["user", "list", "--org", twin2.id], { env: ws.env })).toEqual([]);
    expectFailure(await runCli(["key", "create", "--user", "nobody@acme.example", "--name", "x"], { env: ws.env }), 1, /No user with id or email "nobody@acme.example"/);
  });

  test("org create and user create with --if-missing can run twice: the second run prints what exists and changes nothing", async () => {
    const local = workspace();
    const first = await runCliJson(["org", "create", "--name", "Once", "--if-missing"], { env: local.env });
    const again = await runCliJson(["org", "create", "--name", "once", "--if-missing"], { env: local.env });
    expect(again).toEqual(first);
    const user = await runCliJson(["user", "create", "--org", "Once", "--email", "me@once.test", "--role", "owner", "--if-missing"], { env: local.env });
    expect(await runCliJson(["user", "create", "--org", "Once", "--email", "ME@once.test", "--role", "owner", "--if-missing"], { env: local.env })).toEqual(user);
    expect((await runCliJson(["org", "list"], { env: local.env })).map((o: any) => o.id)).toEqual([first.id]);
    // The same email as another role is not the same user: refused, not changed.
    expectFailure(await runCli(["user", "create", "--org", "Once", "--email", "me@once.test", "--role", "member", "--if-missing"], { env: local.env }), 1, /as owner, not member/);
    // Without the flag, a second organization of the same name is made, as before.
    expect((await runCliJson(["org", "create", "--name", "Once"], { env: local.env })).id).not.toBe(first.id);
  });
});

describe("certificates", () => {
  test("certificate add goes through the add route: its answer, with name, tags and connect-to; list prints ids and tags; remove stops monitoring", async () => {
    const added = await runCliJson(
      ["certificate", "add", "--org", "Acme", `${domain("three")}:${ports.three}`, "--name", "Three", "--tags", "team:web, env:prod", "--connect-to", "127.0.0.1"],
      { env: ws.env },
    );
    // Exactly the add response's 13 fields (SPEC 2.2).
    expect(Object.keys(added).sort()).toEqual(
      ["id", "domain", "name", "status", "daysUntilExpiry", "expiresAt", "issuedAt", "issuer", "subject", "port", "alertThresholds", "createdAt", "updatedAt"].sort(),
    );
    expect(added).toMatchObject({ domain: domain("three"), port: ports.three, name: "Three", status: "valid", daysUntilExpiry: 120 });
    const stored = (await api("GET", `/v1/certificates/${added.id}`)).json.data;
    expect(stored).toMatchObject({ tags: ["env:prod", "team:web"], connectTo: "127.0.0.1" });

    const table = await runCli(["certificate", "list", "--org", "Acme"], { env: ws.env });
    expect({ code: table.code, stderr: table.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+DAYS\s+EXPIRES\s+REASON\s+DOMAIN\s+TAGS\s+NAME$/);
    expect(lines.find((line) => line.startsWith(added.id))).toMatch(new RegExp(`^${added.id}\\s+valid\\s+120 days\\s+\\S+\\s+-\\s+${domain("three").replace(/\./g, "\\.")}:${ports.three}\\s+env:prod,team:web\\s+Three$`));

    const text = await runCli(["certificate", "remove", "--id", added.id], { env: ws.env });
    expect({ ...text, stderr: logLinesOf(text.stderr).map((line) => [line.msg, line.certificateId]) }).toEqual({
      code: 0,
      stderr: [["certificate removed", added.id]],
      stdout: `Removed ${domain("three")}:${ports.three} (${added.id}): it is no longer monitored.\n`,
    });
    expect((await api("GET", `/v1/certificates/${added.id}`)).status).toBe(404);
    expectFailure(await runCli(["certificate", "remove", "--id", added.id], { env: ws.env }), 1, /No certificate with id/);
  });

  test("certificate add logs the events its first check raised, on stderr (stdout stays the one JSON document)", async () => {
    const soon = await runCliJson(["org", "create", "--name", "Soon Co"], { env: ws.env });
    const result = await runCli(["certificate", "add", "--org", soon.id, `${domain("soon")}:${ports.soon}`, "--alert-policy", "days", "--json"], { env: { ...ws.env, CERTKEEPER_LOG_FORMAT: "json" } });
    expect({ code: result.code, stderr: messagesOf(result.stderr) }).toEqual({ code: 0, stderr: "" });
    const added = JSON.parse(result.stdout);
    expect(added).toMatchObject({ status: "expiring", daysUntilExpiry: 5 });
    const raised = logLinesOf(result.stderr).filter((line) => line.msg === "event raised");
    expect(raised).toEqual([expect.objectContaining({ level: "info", type: "certificate.expiring", certificateId: added.id, organizationId: soon.id })]);
  });

  test("certificate add refuses as the add route does: a bad domain, a duplicate, an unreachable target, an alert policy the route refuses", async () => {
    expectFailure(await runCli(["certificate", "add", "--org", "Acme", "https://a.example/"], { env: ws.env }), 1, /Domain "https:\/\/a\.example\/" is not a valid domain/);
    expectFailure(await runCli(["certificate", "add", "--org", "Acme", `${domain("one")}:${ports.one}`], { env: ws.env }), 1, /is already monitored/);
    const closed = await runCli(["certificate", "add", "--org", "Acme", `${domain("nothing")}:1`], { env: ws.env });
    expectFailure(closed, 1, /No TLS certificate could be retrieved from .*Nothing was stored/);
    // The route judges the policy (an unknown value, or a field this build lacks): its message names the field.
    expectFailure(await runCli(["certificate", "add", "--org", "Acme", `${domain("two")}:${ports.two}`, "--alert-policy", "sometimes"], { env: ws.env }), 1, /alertPolicy/);
    expectUsageError(await runCli(["certificate", "add", "--org", "Acme"], { env: ws.env }), /certificate add needs DOMAIN\[:PORT\]/);
  });

  test("certificate add --json against a full organization: exit 1, stdout empty, the limit message naming org update", async () => {
    const full = await runCliJson(["org", "create", "--name", "Full", "--certificate-limit", "0"], { env: ws.env });
    const result = await runCli(["certificate", "add", "--org", full.id, `${domain("one")}:${ports.one}`, "--json"], { env: ws.env });
    expectFailure(result, 1, new RegExp(`allows 0 certificates.*org update --id ${full.id} --certificate-limit N`));
  });
});

describe("channels", () => {
  test("channel list shows every channel with how its deliveries went; channel test exits 0 when delivered and 1 with why when not", async () => {
    const channels = await runCliJson(["channel", "list", "--org", "Acme"], { env: ws.env });
    const hook = channels.find((c: any) => c.name === "Hook");
    expect(hook).toMatchObject({ type: "webhook", enabled: true, health: { lastDeliveryAt: null, lastStatus: null, failingSince: null } });

    const delivered = await runCli(["channel", "test", "--id", hook.id], { env: ws.env });
    expect({ code: delivered.code, stderr: messagesOf(delivered.stderr) }).toEqual({ code: 0, stderr: "" });
    expect(delivered.stdout).toMatch(/^The test notification reached "Hook" \(webhook\) \(it answered HTTP 200\)/);
    await receiver.waitFor(1, 5000);

    receiver.answer = () => ({ status: 503 });
    const failed = await runCli(["channel", "test", "--id", hook.id, "--json"], { env: ws.env });
    expect(failed.code).toBe(1);
    const outcome = JSON.parse(failed.stdout);
    expect(outcome).toMatchObject({ channelId: hook.id, status: "failed", responseStatus: 503, error: "The endpoint answered HTTP 503" });
    expect(messagesOf(failed.stderr)).toBe("Why: The endpoint answered HTTP 503\n");
    // Logged as the server logs a failed attempt: at warn, with the channel, the event and the attempt.
    expect(logLinesOf(failed.stderr).filter((line) => line.level === "warn")).toEqual([
      expect.objectContaining({ channelId: hook.id, eventId: outcome.eventId, attempt: 1, error: "The endpoint answered HTTP 503" }),
    ]);
    receiver.answer = () => ({ status: 200 });

    const table = await runCli(["channel", "list", "--org", "Acme"], { env: ws.env });
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+TYPE\s+STATE\s+LAST DELIVERY\s+FAILING SINCE\s+LAST ERROR$/);
    expect(table.stdout.split("\n").find((line) => line.startsWith(hook.id))).toMatch(/Hook\s+webhook\s+enabled\s+failed \d{4}-\d\d-\d\d \d\d:\d\d UTC\s+\d{4}-.*HTTP 503$/);
    expectFailure(await runCli(["channel", "test", "--id", "ch_nothere0000000000000"], { env: ws.env }), 1, /No channel with id or name "ch_nothere0000000000000"/);
    const empty = await runCli(["channel", "list", "--org", "Acme", "--mode", "test"], { env: ws.env });
    expect(empty.stdout).toContain("alerts go nowhere");
  });

  test("channel test run without the server's CERTKEEPER_ALLOW_PRIVATE_TARGETS says that is why a loopback receiver was not reached", async () => {
    const channels = await runCliJson(["channel", "list", "--org", "Acme"], { env: ws.env });
    const hook = channels.find((c: any) => c.name === "Hook");
    const failed = await runCli(["channel", "test", "--id", hook.id], { env: { ...ws.env, CERTKEEPER_ALLOW_PRIVATE_TARGETS: "false" } });
    expect(failed.code).toBe(1);
    expect(messagesOf(failed.stderr)).toMatch(/^Why: 127\.0\.0\.1 resolves to a loopback address, which certkeeper does not connect to\nThis test ran with this shell's settings, without CERTKEEPER_ALLOW_PRIVATE_TARGETS=true: if the server has it, run the command with the server's settings/);
    // With them, it reaches the receiver (and the channel's health is right again).
    const delivered = await runCli(["channel", "test", "--id", hook.id], { env: ws.env });
    expect(delivered.code).toBe(0);
  });
});

describe("the CLI itself", () => {
  test("--version prints the version (--json: as a document)", async () => {
    expect(await runCli(["--version"], { env: ws.env })).toEqual({ code: 0, stderr: "", stdout: `certkeeper ${packageJson.version}\n` });
    expect(await runCliJson(["--version"], { env: ws.env })).toEqual({ name: "certkeeper", version: packageJson.version });
  });

  test("--version --json after a command's words prints the same one document", async () => {
    for (const words of [["org", "list"], ["certificate", "list", "--org", "Acme"], ["channel", "test", "--id", "x"]]) {
      expect(await runCliJson([...words, "--version"], { env: ws.env })).toEqual({ name: "certkeeper", version: packageJson.version });
    }
  });
});
