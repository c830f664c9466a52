/**
 * Logs (CONTRACT §10): a real `certkeeper serve` at log level debug through a whole scenario (CLI
 * set-up with a password, channels with secret headers and a chat token, a test notification, a
 * certificate whose alert is delivered, failures of every kind, a metrics scrape) writes one JSON object
 * per line on stdout, request lines with their request id, and never a secret on stdout or stderr.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { refusedPort, startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { messagesOf, runCli, runCliJson, startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { WebClient } from "./support/web_client.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";

const PASSWORD = "Corr3ct-H0rse-Battery-Staple";
const WRONG_PASSWORD = "Wr0ng-H0rse-Battery-Staple";
const METRICS_TOKEN = "metr1cs-t0ken-n0t-for-logs";
const SMTP_PASSWORD = "smtp-pa55w0rd-n0t-for-logs";
const DB_TOKEN = "db-auth-t0ken-n0t-for-logs";
const HEADER_VALUES = ["x-secret-header-value-1", "Bearer header-t0ken-value-2"];
const CHAT_TOKEN = "slack-webh00k-t0ken-n0t-for-logs";
const CT_TOKEN = "ct-api-t0ken-n0t-for-logs";
const ROUTING_KEY = "pagerdutyR0utingKeyN0tForLogs123";
const BOT_TOKEN = "987654321:AAHtelegram-b0t-t0ken-n0t-for-logs";
const TEAMS_SIG = "teams-w0rkflow-sig-n0t-for-logs";

const ws = tempWorkspace("certkeeper-logs-");
let serve: ServeProcess;
let receiver: HttpReceiver;
let tls: TlsTestServer;
let ct: CtServer;
let output: { stdout: string; stderr: string; code: number };
/** Each secret, named, that must appear nowhere in the server's output. */
const secrets: Record<string, string> = {
  password: PASSWORD,
  wrongPassword: WRONG_PASSWORD,
  metricsToken: METRICS_TOKEN,
  smtpPassword: SMTP_PASSWORD,
  databaseAuthToken: DB_TOKEN,
  headerValue1: HEADER_VALUES[0]!,
  headerValue2: HEADER_VALUES[1]!,
  headerToken2: HEADER_VALUES[1]!.slice("Bearer ".length),
  chatToken: CHAT_TOKEN,
  ctToken: CT_TOKEN,
  pagerdutyRoutingKey: ROUTING_KEY,
  telegramBotToken: BOT_TOKEN,
  telegramBotSecret: BOT_TOKEN.split(":")[1]!,
  teamsSignature: TEAMS_SIG,
};
/** What the server answered, by request id. */
const answered = new Map<string, number>();
const cliStderr: string[] = [];

async function call(method: string, path: string, options: { key?: string; body?: unknown; raw?: string; authorization?: string } = {}) {
  const headers: Record<string, string> = {};
  if (options.authorization ?? options.key) headers.authorization = options.authorization ?? `Bearer ${options.key}`;
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${serve.url}${path}`, { method, headers, body });
  const text = await response.text();
  answered.set(response.headers.get("x-request-id")!, response.status);
  return { status: response.status, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
}

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  const caFile = join(ws.dir, "ca.pem");
  writeFileSync(caFile, root.certPem);
  const domain = `shop.logs.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + 10 * DAY + 3_600_000) });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  receiver = await startHttpReceiver();
  // A CT service that takes the token and then fails: the poll's failure is logged, the token never.
  ct = await startCtServer();
  ct.token = CT_TOKEN;
  ct.fail(500, 1000);
  const smtpPort = await refusedPort();
  const env = {
    ...ws.env,
    CERTKEEPER_DATABASE_AUTH_TOKEN: DB_TOKEN,
    CERTKEEPER_LOG_LEVEL: "debug",
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_METRICS_TOKEN: METRICS_TOKEN,
    CERTKEEPER_SMTP_URL: `smtp://alerts:${SMTP_PASSWORD}@127.0.0.1:${smtpPort}`,
    CERTKEEPER_TLS_TIMEOUT: "2s",
    CERTKEEPER_DELIVERY_RETRY: "200ms,200ms",
    CERTKEEPER_CT_URL: ct.url,
    CERTKEEPER_CT_TOKEN: CT_TOKEN,
    // PagerDuty answers (the receiver); Telegram refuses the connection: a failure with the token in its URL.
    CERTKEEPER_PAGERDUTY_URL: receiver.url,
    CERTKEEPER_TELEGRAM_URL: `http://127.0.0.1:${await refusedPort()}`,
  };

  // Set-up through the CLI, as an operator would.
  const org = await runCliJson(["org", "create", "--name", "Logs Inc", "--plan", "pro"], { env });
  const user = await runCliJson(["user", "create", "--org", org.id, "--email", "owner@logs.test", "--role", "owner", "--password", PASSWORD], { env });
  const created = await runCli(["key", "create", "--user", user.id, "--name", "ops", "--json"], { env });
  cliStderr.push(created.stderr);
  const key: string = JSON.parse(created.stdout).key;
  secrets.key = key;
  secrets.keyRandomPart = key.slice("ck_live_".length);
  secrets.keyWithoutChecksum = key.slice("ck_live_".length, -6);
  const badKey = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
  secrets.attemptedBadKey = badKey;

  serve = await startServe({ env, cwd: ws.dir });

  // The settings area: a wrong password, then a sign-in; the session's cookie is a secret too.
  const browser = new WebClient({ handle: (request) => fetch(request, { redirect: "manual" }) }, serve.url);
  expect((await browser.signIn("owner@logs.test", WRONG_PASSWORD)).status).toBe(401);
  expect((await browser.signIn("owner@logs.test", PASSWORD)).status).toBe(303);
  expect(browser.cookies.size).toBeGreaterThan(0);
  for (const [name, value] of browser.cookies) secrets[`cookie ${name}`] = value;
  expect((await browser.get("/")).status).toBe(200);

  const hook = await call("POST", "/v1/channels", {
    key,
    body: { type: "webhook", name: "Hook", config: { url: `${receiver.url}/hook`, headers: { "X-Secret": HEADER_VALUES[0], Authorization: HEADER_VALUES[1] } } },
  });
  expect(hook.status).toBe(201);
  secrets.signingSecret = hook.json.data.config.signingSecret;
  secrets.signingSecretKey = hook.json.data.config.signingSecret.slice("whsec_".length);
  const chat = await call("POST", "/v1/channels", {
    key,
    body: { type: "slack", name: "Chat", config: { webhookUrl: `https://hooks.${TEST_DOMAIN}:${await refusedPort()}/services/T0/B0/${CHAT_TOKEN}` } },
  });
  expect(chat.status).toBe(201);
  expect((await call("POST", "/v1/channels", { key, body: { type: "email", name: "Mail", config: { email: "ops@logs.test" } } })).status).toBe(201);
  const pager = await call("POST", "/v1/channels", { key, body: { type: "pagerduty", name: "Pager", config: { routingKey: ROUTING_KEY } } });
  const telegram = await call("POST", "/v1/channels", { key, body: { type: "telegram", name: "Telegram", config: { botToken: BOT_TOKEN, chatId: 42 } } });
  const teams = await call("POST", "/v1/channels", {
    key,
    body: { type: "teams", name: "Teams", config: { webhookUrl: `https://hooks.${TEST_DOMAIN}:${await refusedPort()}/workflows/1/invoke?sig=${TEAMS_SIG}` } },
  });
  expect([pager.status, telegram.status, teams.status]).toEqual([201, 201, 201]);
  expect((await call("POST", `/v1/channels/${pager.json.data.id}/test`, { key })).json.data.status).toBe("delivered");
  expect((await call("POST", `/v1/channels/${telegram.json.data.id}/test`, { key })).json.data.status).toBe("failed");
  expect((await call("POST", `/v1/channels/${teams.json.data.id}/test`, { key })).json.data.status).toBe("failed");

  const sent = await call("POST", `/v1/channels/${hook.json.data.id}/test`, { key });
  expect([sent.status, sent.json.data.status]).toEqual([200, "delivered"]);
  expect((await call("POST", `/v1/channels/${chat.json.data.id}/test`, { key })).json.data.status).toBe("failed");

  // A certificate 10 days from expiry: its alert goes to every channel (the hook, the refused chat, the refused SMTP).
  // The days policy: 10 days left crosses a threshold at once (under renewal, a young leaf raises nothing).
  expect((await call("POST", "/v1/certificates", { key, body: { domain, port: tls.port, alertPolicy: "days" } })).status).toBe(201);
  await receiver.waitFor(4, 10_000);
  expect(receiver.requests.find((r) => r.path === "/hook")!.headers["x-secret"]).toBe(HEADER_VALUES[0]!);

  // Failures of every kind.
  expect((await call("GET", "/v1/certificates", { key: badKey })).status).toBe(401);
  expect((await call("GET", "/v1/certificates", { authorization: `Basic ${btoa(`owner@logs.test:${PASSWORD}`)}` })).status).toBe(401);
  expect((await call("GET", "/v1/nothing-here", { key })).status).toBe(404);
  expect((await call("GET", "/v1/certificates/cert_00000000000000000000", { key })).status).toBe(404);
  expect((await call("GET", `/v1/certificates?token=${METRICS_TOKEN}`, { key })).status).toBe(400);
  expect((await call("POST", "/v1/certificates", { key, body: { domain: `nothing.logs.${TEST_DOMAIN}`, port: await refusedPort() } })).status).toBe(422);
  expect((await call("POST", "/v1/channels", { key, body: { type: "webhook", name: "Bad", config: { url: receiver.url, headers: { Host: SMTP_PASSWORD } } } })).status).toBe(400);
  expect((await call("POST", "/v1/channels", { key, raw: `{"password": "${PASSWORD}"` })).status).toBe(400);
  expect((await call("GET", "/metrics", { authorization: `Bearer ${METRICS_TOKEN}x` })).status).toBe(401);
  expect((await call("GET", "/metrics", { authorization: `Bearer ${METRICS_TOKEN}` })).status).toBe(200);

  // A watch: polled at once with the token, against a CT service that fails.
  expect((await call("POST", "/v1/watches", { key, body: { domain: `logs.${TEST_DOMAIN}` } })).status).toBe(201);
  for (let i = 0; i < 100 && !ct.requests.some((r) => r.authorization === `Bearer ${CT_TOKEN}`); i++) await Bun.sleep(50);
  expect(ct.requests.some((r) => r.authorization === `Bearer ${CT_TOKEN}`)).toBe(true);

  // Let the retries of the refused deliveries run (200 ms apart) before stopping.
  await Bun.sleep(800);
  const code = await serve.stop("SIGTERM", 10_000);
  output = { ...serve.output(), code };
}, 60_000);

afterAll(async () => {
  await serve?.stop("SIGKILL");
  await ct?.close();
  await Promise.all([receiver?.close(), tls?.close()]);
  ws.cleanup();
});

describe("certkeeper serve's output", () => {
  test("a failing Certificate Transparency poll is logged as a warning, without CERTKEEPER_CT_TOKEN", () => {
    const lines = output.stdout.split("\n").filter((line) => line.includes("Certificate Transparency poll failed"));
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", error: "The CT service answered HTTP 500" });
    expect(lines.join("\n")).not.toContain(CT_TOKEN);
  });

  test("holds no secret on stdout or stderr: keys, passwords, tokens, signing secrets, header values", () => {
    expect(output.code).toBe(0);
    const leaks = Object.entries(secrets)
      .filter(([, secret]) => output.stdout.includes(secret) || output.stderr.includes(secret) || cliStderr.some((stderr) => stderr.includes(secret)))
      .map(([name]) => name);
    expect(leaks).toEqual([]);
    // The CLI's stderr holds its log lines of what it changed (checked above for secrets), nothing else.
    for (const stderr of cliStderr) expect(messagesOf(stderr)).toBe("");
  });

  test("every line of stdout is one JSON object with time, level and msg", () => {
    const lines = output.stdout.split("\n").filter((line) => line !== "");
    expect(lines.length).toBeGreaterThan(answered.size);
    for (const line of lines) {
      const entry = JSON.parse(line);
      expect({ line, object: typeof entry === "object" && entry !== null && !Array.isArray(entry) }).toEqual({ line, object: true });
      expect(entry).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: expect.any(String), msg: expect.any(String) });
    }
  });

  test("every request made, the API's and /metrics alike, has a request line with its request id and status", () => {
    const requests = output.stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === "request");
    for (const entry of requests) expect(entry.requestId).toMatch(/^req_[0-9A-Za-z]{16,}$/);
    const logged = new Map(requests.map((entry) => [entry.requestId, entry.status]));
    for (const [requestId, status] of answered) expect({ requestId, status: logged.get(requestId) }).toEqual({ requestId, status });
  });

  test("each request is logged once, /metrics included: one request line per request id", () => {
    const requestIds = output.stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === "request")
      .map((entry) => entry.requestId as string);
    const counts = new Map<string, number>();
    for (const id of requestIds) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...answered.keys()].filter((id) => counts.get(id) !== 1).map((id) => ({ id, lines: counts.get(id) }))).toEqual([]);
    expect([...counts].filter(([, lines]) => lines > 1)).toEqual([]);
  });

  test("the delivery failures and the shutdown are logged without their secrets", () => {
    expect(output.stdout).toContain('"msg":"certkeeper stopped"');
    expect(output.stderr).toBe("");
  });
});
