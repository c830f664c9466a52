/**
 * Logs of what happened (CONTRACT §23, issue 32) and channels' delivery health, on a real `certkeeper
 * serve` at the default level (info): at start one line of the settings that differ from the
 * defaults (credentials masked); one line per status change, per event raised, per key created or
 * revoked, role changed, password set; a failed sign-in at warn with the email and never the
 * password; request lines with the error code and the key id or user id; every failed delivery
 * attempt at warn and a delivery that ends failed at error, never with a credential. The failing
 * channel's health shows on the API at the first failed attempt, and a success clears it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { refusedPort, startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { runCliJson, startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { WebClient } from "./support/web_client.ts";

setDefaultTimeout(60_000);

const PASSWORD = "first-Passw0rd-for-events";
const NEW_PASSWORD = "second-Passw0rd-for-events";
const WRONG_PASSWORD = "wrong-Passw0rd-n0t-logged";
const SMTP_PASSWORD = "smtp-Secr3t-n0t-logged";
const HEADER_VALUE = "Bearer hook-t0ken-n0t-logged";
const BOT_TOKEN = "123456789:AAH-b0t-t0ken-n0t-logged";
const DOMAIN = `shop.events.${TEST_DOMAIN}`;

const ws = tempWorkspace("certkeeper-events-");
let serve: ServeProcess;
let receiver: HttpReceiver;
let tls: TlsTestServer;
let key: string;
let keyId: string;
let ownerId: string;
let hookId: string;
let telegramId: string;
let certificateId: string;
let browser: WebClient;
/** Whether the hook's receiver accepts deliveries (it refuses until a test says otherwise). */
let healthy = false;

/** The JSON log entries the server wrote so far. */
const entries = () =>
  serve
    .output()
    .stdout.split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, any>);

/** Waits until an entry matches (the server works in the background); fails naming what it waited for. */
async function logged(what: string, match: (entry: Record<string, any>) => boolean, timeoutMs = 15_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = entries().find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no log line ${what}; the log:\n${serve.output().stdout.slice(-4000)}`);
    await Bun.sleep(50);
  }
}

async function api(method: string, path: string, body?: unknown, apiKey = key) {
  const response = await fetch(`${serve.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, requestId: response.headers.get("x-request-id")!, json: (await response.json()) as any };
}

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  const caFile = join(ws.dir, "ca.pem");
  writeFileSync(caFile, root.certPem);
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN], notAfter: new Date(Date.now() + 10 * DAY + 3_600_000) });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  receiver = await startHttpReceiver();
  receiver.answer = () => ({ status: healthy ? 200 : 500 });
  const env = {
    ...ws.env,
    CERTKEEPER_LOG_LEVEL: "info",
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_SMTP_URL: `smtp://alerts:${SMTP_PASSWORD}@127.0.0.1:${await refusedPort()}`,
    CERTKEEPER_DELIVERY_RETRY: "300ms,300ms",
    CERTKEEPER_TELEGRAM_URL: `http://127.0.0.1:${await refusedPort()}`,
    CERTKEEPER_TLS_TIMEOUT: "2s",
  };
  const org = await runCliJson(["org", "create", "--name", "Events Inc", "--plan", "pro"], { env });
  const owner = await runCliJson(["user", "create", "--org", "Events Inc", "--email", "owner@events.test", "--role", "owner", "--password", PASSWORD], { env });
  ownerId = owner.id;
  await runCliJson(["user", "create", "--org", org.id, "--email", "member@events.test", "--role", "member"], { env });
  const created = await runCliJson(["key", "create", "--user", "owner@events.test", "--name", "ops"], { env });
  key = created.key;
  keyId = created.id;
  serve = await startServe({ env: { ...env, CERTKEEPER_LOG_LEVEL: "info" }, cwd: ws.dir });
  browser = new WebClient({ handle: (request) => fetch(request, { redirect: "manual" }) }, serve.url);
});

afterAll(async () => {
  await serve?.stop("SIGKILL");
  await Promise.all([receiver?.close(), tls?.close()]);
  ws.cleanup();
});

describe("at start", () => {
  test("one line lists every setting that differs from its default, credentials masked", async () => {
    const line = await logged("of settings", (e) => e.msg === "settings that differ from the defaults");
    expect(line).toMatchObject({
      level: "info",
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_DELIVERY_RETRY: "300ms,300ms",
      CERTKEEPER_TLS_TIMEOUT: "2s",
      CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
      CERTKEEPER_SMTP_URL: expect.stringMatching(/^smtp:\/\/alerts:\*{8}@127\.0\.0\.1:\d+$/),
      CERTKEEPER_DATABASE_URL: `file:${ws.databasePath}`,
    });
    // Defaults are not listed.
    expect(line.CERTKEEPER_CHECK_INTERVAL).toBeUndefined();
    expect(JSON.stringify(line)).not.toContain(SMTP_PASSWORD);
  });
});

describe("deliveries and channel health", () => {
  test("a failing webhook: a warn line per failed attempt, an error line when the delivery ends failed, and health on the API at once", async () => {
    const hook = await api("POST", "/v1/channels", { type: "webhook", name: "Hook", config: { url: `${receiver.url}/hook`, headers: { Authorization: HEADER_VALUE } } });
    expect(hook.status).toBe(201);
    hookId = hook.json.data.id;
    expect(hook.json.data.health).toEqual({ lastDeliveryAt: null, lastStatus: null, lastError: null, failingSince: null });
    // 10 days left: certificate.expiring, delivered to the hook (which answers 500).
    // The days policy: 10 days left crosses the 14-day threshold at once.
    const added = await api("POST", "/v1/certificates", { domain: DOMAIN, port: tls.port, alertPolicy: "days" });
    expect(added.status).toBe(201);
    certificateId = added.json.data.id;
    const raised = await logged("of the event", (e) => e.msg === "event raised" && e.certificateId === certificateId);
    expect(raised).toMatchObject({ level: "info", type: "certificate.expiring", domain: DOMAIN, threshold: 14 });

    const first = await logged("of the first failed attempt", (e) => e.msg === "notification attempt failed" && e.channelId === hookId);
    expect(first).toMatchObject({ level: "warn", eventId: raised.eventId, attempt: 1, error: "The endpoint answered HTTP 500", channelType: "webhook", willRetry: true });
    // Within one attempt, the API says it is failing.
    const channel = (await api("GET", `/v1/channels/${hookId}`)).json.data;
    expect(channel.health).toMatchObject({ lastStatus: expect.stringMatching(/^(pending|failed)$/), lastError: expect.stringContaining("HTTP 500"), failingSince: expect.any(String) });

    await logged("of the second failed attempt", (e) => e.msg === "notification attempt failed" && e.channelId === hookId && e.attempt === 2);
    // The last attempt is a failed attempt too: its own warn line, then the delivery's error line.
    const lastAttempt = await logged("of the last failed attempt", (e) => e.msg === "notification attempt failed" && e.channelId === hookId && e.attempt === 3);
    expect(lastAttempt).toMatchObject({ level: "warn", eventId: raised.eventId, error: "The endpoint answered HTTP 500", willRetry: false });
    const last = await logged("of the delivery ending failed", (e) => e.msg === "notification delivery failed" && e.channelId === hookId);
    expect(last).toMatchObject({ level: "error", eventId: raised.eventId, attempt: 3, error: expect.stringContaining("gave up after 3 attempts") });
    const listed = (await api("GET", "/v1/channels")).json.data.find((c: any) => c.id === hookId);
    expect(listed.health).toMatchObject({ lastStatus: "failed", failingSince: channel.health.failingSince });
    expect(serve.output().stdout).not.toContain(HEADER_VALUE.slice("Bearer ".length));
  });

  test("a successful delivery (a test included) clears failingSince", async () => {
    healthy = true;
    const sent = await api("POST", `/v1/channels/${hookId}/test`);
    expect(sent.json.data.status).toBe("delivered");
    const health = (await api("GET", `/v1/channels/${hookId}`)).json.data.health;
    expect(health).toMatchObject({ lastStatus: "delivered", lastError: null, failingSince: null });
    expect(Date.parse(health.lastDeliveryAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  test("a failed test to a Telegram bot is logged without the bot token that is part of its URL", async () => {
    const telegram = await api("POST", "/v1/channels", { type: "telegram", name: "Bot", config: { botToken: BOT_TOKEN, chatId: 42 } });
    telegramId = telegram.json.data.id;
    const tested = await api("POST", `/v1/channels/${telegramId}/test`);
    expect(tested.json.data.status).toBe("failed");
    const line = await logged("of the failed test", (e) => e.msg === "notification delivery failed" && e.channelId === telegramId);
    expect(line).toMatchObject({ level: "error", eventType: "test", attempt: 1 });
    expect(serve.output().stdout).not.toContain(BOT_TOKEN.split(":")[1]!);
    expect((await api("GET", `/v1/channels/${telegramId}`)).json.data.health).toMatchObject({ lastStatus: "failed", failingSince: expect.any(String) });
  });
});

describe("what happened", () => {
  test("a status change: one line with the old and new status and reason; and the event it raised", async () => {
    await tls.close();
    const checked = await api("POST", `/v1/certificates/${certificateId}/check`);
    expect(checked.json.data.status).toBe("unreachable");
    const line = await logged("of the status change", (e) => e.msg === "certificate status changed" && e.certificateId === certificateId);
    expect(line).toMatchObject({ level: "info", domain: DOMAIN, from: "expiring", fromReason: "expiring_soon", to: "unreachable", toReason: "connection_refused" });
    await logged("of the unreachable event", (e) => e.msg === "event raised" && e.type === "certificate.unreachable" && e.certificateId === certificateId);
  });

  test("request lines carry the error code of a failed request, and the key id and user id, never the key", async () => {
    const bad = await api("POST", "/v1/certificates", { domain: "https://a.example/" });
    expect(bad.status).toBe(400);
    const line = await logged("of the refused request", (e) => e.msg === "request" && e.requestId === bad.requestId);
    expect(line).toMatchObject({ status: 400, code: "invalid_domain", keyId, userId: ownerId });
    const good = await api("GET", "/v1/certificates");
    expect(await logged("of the listing", (e) => e.requestId === good.requestId)).toMatchObject({ status: 200, keyId, userId: ownerId });
    expect((await logged("of the listing", (e) => e.requestId === good.requestId)).code).toBeUndefined();
    // Another key: its last character changed (to one it is not).
    const unknown = await api("GET", "/v1/certificates", undefined, `${key.slice(0, -1)}${key.endsWith("x") ? "y" : "x"}`);
    expect(await logged("of the bad key", (e) => e.requestId === unknown.requestId)).toMatchObject({ status: 401, code: "invalid_api_key" });
    expect(serve.output().stdout).not.toContain(key.slice("ck_live_".length));
  });

  test("a failed sign-in is a warning naming the email, never the password", async () => {
    expect((await browser.signIn("owner@events.test", WRONG_PASSWORD)).status).toBe(401);
    const line = await logged("of the failed sign-in", (e) => e.msg === "sign-in failed" && e.email === "owner@events.test");
    expect(line).toMatchObject({ level: "warn", reason: "wrong password" });
    expect(serve.output().stdout).not.toContain(WRONG_PASSWORD);
  });

  test("in the settings area: key created and revoked, role changed, password set, each one line; page requests carry the user id", async () => {
    expect((await browser.signIn("owner@events.test", PASSWORD)).status).toBe(303);
    await browser.get("/settings/api-keys");
    const createdPage = await browser.post("/settings/api-keys", { name: "from the web", mode: "live" });
    expect(createdPage.status).toBe(200);
    const created = await logged("of the key created", (e) => e.msg === "API key created" && e.name === "from the web");
    expect(created).toMatchObject({ level: "info", userId: ownerId, mode: "live" });
    const newKey = /value="(ck_live_[0-9A-Za-z]+)"/.exec(createdPage.text)![1]!;
    await browser.get(`/settings/api-keys/${created.keyId}/revoke`);
    expect((await browser.post(`/settings/api-keys/${created.keyId}/revoke`, {})).status).toBe(303);
    expect(await logged("of the key revoked", (e) => e.msg === "API key revoked" && e.keyId === created.keyId)).toMatchObject({ level: "info" });
    // The revoked key sent again: refused, and its request line names it (by id) for the operator to find who still uses it.
    const stale = await api("GET", "/v1/certificates", undefined, newKey);
    expect(stale.status).toBe(401);
    expect(await logged("of the revoked key's request", (e) => e.msg === "request" && e.requestId === stale.requestId)).toMatchObject({ status: 401, code: "expired_api_key", keyId: created.keyId });

    const members = await browser.get("/settings/members");
    const memberId = [...members.text.matchAll(/<tr data-user-id="(usr_\w+)">([\s\S]*?)<\/tr>/g)].find((m) => m[2]!.includes("member@events.test"))?.[1];
    expect(memberId).toBeDefined();
    expect((await browser.post(`/settings/members/${memberId}/role`, { role: "admin" })).status).toBe(303);
    expect(await logged("of the role change", (e) => e.msg === "role changed" && e.userId === memberId)).toMatchObject({ level: "info", from: "member", to: "admin", by: ownerId });

    await browser.get("/settings/account");
    expect((await browser.post("/settings/account/password", { current: PASSWORD, next: NEW_PASSWORD, confirm: NEW_PASSWORD })).status).toBe(303);
    expect(await logged("of the password set", (e) => e.msg === "password set" && e.userId === ownerId)).toMatchObject({ level: "info" });
    const page = await browser.get("/");
    const pageLine = await logged("of the dashboard request", (e) => e.msg === "request" && e.requestId === page.headers.get("x-request-id"));
    expect(pageLine).toMatchObject({ status: 200, userId: ownerId });
    for (const secret of [PASSWORD, NEW_PASSWORD, newKey, newKey.slice("ck_live_".length)]) expect(serve.output().stdout).not.toContain(secret);
  });
});
