/**
 * Notifications end to end: certificates on real TLS servers, channels pointing at real HTTP, HTTPS and
 * SMTP receivers, time moved by a fake clock. The alert arrives once, on every enabled channel, and
 * never again for the same threshold, whatever restarts happen between.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import PostalMime from "postal-mime";
import { DEFAULT_CONFIG, type Config } from "../core/config/config.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import type { Store } from "../core/store/ports.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from "./support/receivers.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { temporaryDirectory } from "./support/temp.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface World {
  h: Harness;
  clock: FakeClock;
  config: Config;
  store: Store;
  hook: HttpReceiver;
  chat: HttpReceiver;
  smtp: SmtpReceiver;
  dir: string;
  /** Runs every due check, then every due delivery. */
  settle(): Promise<void>;
}

/** A certkeeper on a libSQL file with real transports, the fake clock at real time, receivers listening. */
async function world(overrides: { config?: Partial<Config>; store?: Store; dir?: string; clock?: FakeClock } = {}): Promise<World> {
  const { root } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const clock = overrides.clock ?? new FakeClock(Date.now());
  const dir = overrides.dir ?? temporaryDirectory("certkeeper-notify-");
  const store = overrides.store ?? (await openLibsqlStore({ url: `file:${join(dir, "db.sqlite")}` }));
  const smtp = await startSmtpReceiver();
  const config: Config = {
    ...DEFAULT_CONFIG, alertPolicy: "days" as const,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    // Generous limits: every server and receiver here answers (or refuses at once), so they only
    // bound a defect, and a machine busy with other test files never trips them. The test of a
    // receiver that never answers sets its own short one.
    tlsTimeoutMs: 5000,
    smtpUrl: smtp.url,
    mailFrom: "alerts@certkeeper.test",
    deliveryRetryMs: [1000, 5000, 60_000],
    checkIntervalMs: 6 * HOUR,
    logLevel: "error",
    deliveryTimeoutMs: 5000,
    ...overrides.config,
  };
  const transports = createTransports(config, trust);
  const h = await createHarness({ store, clock, config, transports, trust, random: () => 0.5 });
  const leafForChat = await createLeaf({ issuer: (await testPki()).rsaIntermediate, dnsNames: [`chat.${TEST_DOMAIN}`] });
  const hook = await startHttpReceiver();
  const chat = await startHttpReceiver({
    tls: { cert: chainPem(leafForChat, (await testPki()).rsaIntermediate), key: leafForChat.keyPem },
    host: `chat.${TEST_DOMAIN}`,
  });
  cleanups.push(() => hook.close(), () => chat.close(), () => smtp.close(), () => transports.close(), () => h.core.stop());
  return {
    h,
    clock,
    config,
    store,
    hook,
    chat,
    smtp,
    dir,
    async settle() {
      await h.core.services.scheduler.runDue();
      await h.core.services.deliveries!.loop.runDue();
    },
  };
}

async function tlsServer(domain: string, notAfter: Date, serial?: string): Promise<TlsTestServer> {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter, serial });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cleanups.push(() => server.close());
  return server;
}

async function renew(server: TlsTestServer, domain: string, notAfter: Date, serial: string) {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter, serial });
  server.setCertificate(chainPem(leaf, rsaIntermediate), leaf.keyPem);
}

async function addChannels(w: World) {
  const post = (body: unknown) => w.h.request("POST", "/v1/channels", { body });
  const webhook = expectData(await post({ type: "webhook", name: "Hook", config: { url: `${w.hook.url}/hook`, headers: { "X-Team": "ops" } } }), 201);
  const discord = expectData(await post({ type: "discord", name: "Discord", config: { webhookUrl: `${w.chat.url}/discord/1/tok` } }), 201);
  const slack = expectData(await post({ type: "slack", name: "Slack", config: { webhookUrl: `${w.chat.url}/slack/T/B/tok` } }), 201);
  const email = expectData(await post({ type: "email", name: "Mail", config: { email: "oncall@acme.test" } }), 201);
  const off = expectData(await post({ type: "webhook", name: "Off", config: { url: `${w.hook.url}/off` } }), 201);
  expectData(await w.h.request("PATCH", `/v1/channels/${off.id}`, { body: { enabled: false } }), 200);
  return { webhook, discord, slack, email, off };
}

const eventTypes = (r: HttpReceiver, prefix: string) => r.requests.filter((q) => q.path.startsWith(prefix));

describe("a certificate 5 days from expiry with the default thresholds", () => {
  test("raises exactly one certificate.expiring (threshold 7) on each enabled channel, and nothing more until the next threshold, across restarts", async () => {
    const w = await world();
    const channels = await addChannels(w);
    const domain = `five.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 5 * DAY + HOUR));
    const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    await w.settle();

    // Webhook: CONTRACT §7's body, the channel's headers, a Standard Webhooks signature.
    const [hookRequest] = eventTypes(w.hook, "/hook");
    expect(eventTypes(w.hook, "/hook").length).toBe(1);
    expect(hookRequest!.json).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: "certificate.expiring",
      createdAt: expect.any(String),
      data: { certificate: expect.objectContaining({ id: cert.id, domain, status: "expiring", daysUntilExpiry: 5, statusReason: "expiring_soon" }), threshold: 7 },
    });
    expect(hookRequest!.headers["x-team"]).toBe("ops");
    expect(hookRequest!.headers["content-type"]).toStartWith("application/json");
    expect(hookRequest!.headers["webhook-id"]).toBe(hookRequest!.json.id);
    const verified = new Webhook(channels.webhook.config.signingSecret).verify(hookRequest!.body, {
      "webhook-id": hookRequest!.headers["webhook-id"]!,
      "webhook-timestamp": hookRequest!.headers["webhook-timestamp"]!,
      "webhook-signature": hookRequest!.headers["webhook-signature"]!,
    });
    expect(verified).toEqual(hookRequest!.json);

    // Discord (content + embeds) and Slack (text + blocks) over HTTPS.
    const discord = eventTypes(w.chat, "/discord");
    const slack = eventTypes(w.chat, "/slack");
    expect([discord.length, slack.length]).toEqual([1, 1]);
    expect(discord[0]!.json.content).toContain(domain);
    expect(discord[0]!.json.embeds.length).toBeGreaterThan(0);
    expect(slack[0]!.json.text).toContain(domain);
    expect(slack[0]!.json.blocks.length).toBeGreaterThan(0);

    // Email: subject naming the domain and what happened, text and HTML parts.
    expect(w.smtp.messages.length).toBe(1);
    const mail = w.smtp.messages[0]!;
    expect([mail.to, mail.from, mail.subject]).toEqual([["oncall@acme.test"], "alerts@certkeeper.test", `${domain}:${server.port}: certificate expires in 5 days`]);
    expect(mail.text).toContain(domain);
    expect(mail.html).toContain("<");

    // The disabled channel got nothing; the events list shows the deliveries.
    expect(eventTypes(w.hook, "/off").length).toBe(0);
    const [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(event.type).toBe("certificate.expiring");
    expect(event.deliveries.map((d: any) => [d.channelId, d.status, d.attempts]).sort()).toEqual(
      [channels.webhook, channels.discord, channels.slack, channels.email].map((c) => [c.id, "delivered", 1]).sort(),
    );

    // Re-checks, manual and scheduled, and a day later: nothing more.
    expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    w.clock.advance(DAY - 2 * HOUR);
    await w.settle();
    await w.h.core.stop();

    // A restart: a new process on the same database. Still nothing more, until threshold 3 is crossed,
    // which happens once less than 4 days are left: 1 day and 1 hour after the add.
    const w2 = await world({ store: await openLibsqlStore({ url: `file:${join(w.dir, "db.sqlite")}` }), dir: w.dir, clock: w.clock });
    await w2.settle();
    w.clock.advance(2 * HOUR + 59 * 60_000); // 1 minute before the crossing
    await w2.settle();
    expect([eventTypes(w.hook, "/hook").length, w.smtp.messages.length]).toEqual([1, 1]);
    w.clock.advance(60_000 + 1);
    await w2.settle();
    w.clock.advance(HOUR);
    await w2.settle();
    const hooks = eventTypes(w.hook, "/hook");
    expect(hooks.map((r) => [r.json.type, r.json.data.threshold])).toEqual([
      ["certificate.expiring", 7],
      ["certificate.expiring", 3],
    ]);
    // The SMTP relay is the process's configuration: the restarted process sent through its own.
    expect([...w.smtp.messages, ...w2.smtp.messages].map((m) => m.subject)).toEqual([
      `${domain}:${server.port}: certificate expires in 5 days`,
      `${domain}:${server.port}: certificate expires in 3 days`,
    ]);
  });
});

describe("delivery retries", () => {
  test("a retry cancelled by the certificate's deletion leaves the channel's health failed: nothing will be tried again", async () => {
    const w = await world();
    const webhook = expectData(await w.h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Hook", config: { url: `${w.hook.url}/hook` } } }), 201);
    w.hook.answer = () => ({ status: 500 });
    const domain = `cancelled-health.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 2 * DAY + HOUR));
    const certificate = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    await w.settle();
    const health = async () => expectData(await w.h.request("GET", `/v1/channels/${webhook.id}`), 200).health;
    expect(await health()).toMatchObject({ lastStatus: "pending", lastError: "The endpoint answered HTTP 500" });

    expectData(await w.h.request("DELETE", `/v1/certificates/${certificate.id}`), 200);
    const [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(event.deliveries).toEqual([expect.objectContaining({ channelId: webhook.id, status: "failed", lastError: "Cancelled: the certificate was deleted" })]);
    // The endpoint's last answer stays the channel's error, and it is failing until a delivery goes through.
    expect(await health()).toMatchObject({ lastStatus: "failed", lastError: "The endpoint answered HTTP 500", failingSince: expect.any(String) });
  });

  test("a receiver that fails twice, then succeeds: delivered on the third attempt, after the retry waits", async () => {
    const w = await world();
    const { webhook } = await addChannels(w);
    w.hook.answer = (n) => ({ status: n < 2 ? 503 : 200 });
    const domain = `retry.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 10 * DAY + HOUR));
    expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").length).toBe(1);
    w.clock.advance(999); // the first wait is 1 s (jitter pinned to 0)
    await w.settle();
    expect(eventTypes(w.hook, "/hook").length).toBe(1);
    w.clock.advance(1);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").length).toBe(2);
    w.clock.advance(5000);
    await w.settle();
    const attempts = eventTypes(w.hook, "/hook");
    expect(attempts.length).toBe(3);
    expect(new Set(attempts.map((a) => a.headers["webhook-id"])).size).toBe(1);
    const [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(event.deliveries.find((d: any) => d.channelId === webhook.id)).toEqual({ channelId: webhook.id, status: "delivered", attempts: 3, lastError: null });
    w.clock.advance(DAY);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").length).toBe(3);
  });

  test("after the last wait of the schedule the delivery is failed, with the reason", async () => {
    const w = await world({ config: { deliveryRetryMs: [1000, 1000] } });
    const { webhook } = await addChannels(w);
    w.hook.answer = () => ({ status: 500 });
    const domain = `giveup.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 2 * DAY + HOUR));
    expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    for (let i = 0; i < 5; i++) {
      await w.settle();
      w.clock.advance(1000);
    }
    expect(eventTypes(w.hook, "/hook").length).toBe(3);
    const [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(event.deliveries.find((d: any) => d.channelId === webhook.id)).toEqual({
      channelId: webhook.id,
      status: "failed",
      attempts: 3,
      lastError: "The endpoint answered HTTP 500 (gave up after 3 attempts)",
    });
  });

  test("a receiver that never answers is cut off at the time limit and retried", async () => {
    const w = await world({ config: { deliveryTimeoutMs: 500 } });
    const { webhook } = await addChannels(w);
    w.hook.answer = (n) => (n === 0 ? { status: 200, hang: true } : { status: 200 });
    const domain = `hang.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 2 * DAY + HOUR));
    expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const started = performance.now();
    await w.settle();
    expect(performance.now() - started).toBeLessThan(2000);
    const [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
    const delivery = event.deliveries.find((d: any) => d.channelId === webhook.id);
    expect([delivery.status, delivery.attempts]).toEqual(["pending", 1]);
    expect(delivery.lastError).toMatch(/time|answer/i);
    w.clock.advance(1000);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").length).toBe(2);
  });

  test("a 429 with Retry-After waits that long; a 410 disables the channel", async () => {
    const w = await world();
    const { webhook, discord } = await addChannels(w);
    w.hook.answer = (n) => (n === 0 ? { status: 429, headers: { "retry-after": "30" } } : { status: 200 });
    w.chat.answer = (_n, request) => (request.path.startsWith("/discord") ? { status: 410 } : { status: 200 });
    const domain = `ratelimited.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 2 * DAY + HOUR));
    expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    await w.settle();
    w.clock.advance(29_000);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").length).toBe(1);
    w.clock.advance(1_000);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").length).toBe(2);
    expect(expectData(await w.h.request("GET", `/v1/channels/${discord.id}`), 200).enabled).toBe(false);
    const [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(event.deliveries.find((d: any) => d.channelId === discord.id)).toMatchObject({ status: "failed", attempts: 1 });
    expect(event.deliveries.find((d: any) => d.channelId === webhook.id)).toMatchObject({ status: "delivered", attempts: 2 });
  });

  test("deleting the certificate cancels its pending notifications", async () => {
    const w = await world();
    const { webhook } = await addChannels(w);
    w.hook.answer = () => ({ status: 503 });
    const domain = `cancel.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 2 * DAY + HOUR));
    const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    await w.settle();
    expectData(await w.h.request("DELETE", `/v1/certificates/${cert.id}`), 200);
    w.hook.answer = () => ({ status: 200 });
    w.clock.advance(10_000);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").length).toBe(1);
    const [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(event.deliveries.find((d: any) => d.channelId === webhook.id)).toMatchObject({ status: "failed", lastError: "Cancelled: the certificate was deleted" });
  });
});

describe("what checks announce", () => {
  test("a renewal is announced and re-arms the thresholds", async () => {
    const w = await world();
    await addChannels(w);
    const domain = `renewal.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 6 * DAY + HOUR), "0a");
    expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    await w.settle();
    await renew(server, domain, new Date(w.clock.now() + 90 * DAY + HOUR), "0b");
    w.clock.advance(6 * HOUR);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").map((r) => [r.json.type, r.json.data.threshold ?? null])).toEqual([
      ["certificate.expiring", 7],
      ["certificate.renewed", null],
    ]);
    const renewed = eventTypes(w.hook, "/hook")[1]!.json.data;
    expect([renewed.certificate.serialNumber, renewed.previous.serialNumber]).toEqual(["0B", "0A"]);
    // 61 days on, the renewed certificate crosses 30 days: announced again, for the new serial.
    w.clock.advance(61 * DAY);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").map((r) => r.json.type)).toEqual(["certificate.expiring", "certificate.renewed", "certificate.expiring"]);
    expect(eventTypes(w.hook, "/hook")[2]!.json.data.threshold).toBe(30);
  });

  test("an outage is announced once after the retries, and the recovery once", async () => {
    const w = await world({ config: { checkIntervalMs: 60_000 } });
    await addChannels(w);
    const domain = `outage.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 200 * DAY));
    const port = server.port;
    expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
    await server.close();
    // Three scheduled checks fail (the first two are retried shortly): one unreachable event.
    for (let i = 0; i < 6; i++) {
      w.clock.advance(60_000);
      await w.settle();
    }
    expect(eventTypes(w.hook, "/hook").map((r) => r.json.type)).toEqual(["certificate.unreachable"]);
    expect(eventTypes(w.hook, "/hook")[0]!.json.data.certificate).toMatchObject({ status: "unreachable", statusReason: "connection_refused" });
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(w.clock.now() + 200 * DAY) });
    const back = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem, port });
    cleanups.push(() => back.close());
    for (let i = 0; i < 3; i++) {
      w.clock.advance(60_000);
      await w.settle();
    }
    const types = eventTypes(w.hook, "/hook").map((r) => r.json.type);
    expect(types[0]).toBe("certificate.unreachable");
    // Raised by one check and delivered concurrently: the two may arrive in either order.
    expect(types.slice(1).sort()).toEqual(["certificate.recovered", "certificate.renewed"]);
  });

  test("a single failed check is retried before anything is announced", async () => {
    const w = await world({ config: { checkIntervalMs: 60_000 } });
    await addChannels(w);
    const domain = `blip.${TEST_DOMAIN}`;
    const server = await tlsServer(domain, new Date(w.clock.now() + 200 * DAY));
    const port = server.port;
    const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
    await server.close();
    w.clock.advance(60_000);
    await w.settle();
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(w.clock.now() + 200 * DAY) });
    const back = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem, port });
    cleanups.push(() => back.close());
    for (let i = 0; i < 3; i++) {
      w.clock.advance(60_000);
      await w.settle();
    }
    expect(eventTypes(w.hook, "/hook").map((r) => r.json.type)).toEqual(["certificate.renewed"]);
    expect(expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200).status).toBe("valid");
  });

  test("an invalid certificate is announced once; an expired one once", async () => {
    const w = await world();
    await addChannels(w);
    const domain = `badhost.${TEST_DOMAIN}`;
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`other.${TEST_DOMAIN}`], notAfter: new Date(w.clock.now() + 40 * DAY) });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    cleanups.push(() => server.close());
    expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: [] } }), 201);
    await w.settle();
    w.clock.advance(41 * DAY);
    await w.settle();
    w.clock.advance(DAY);
    await w.settle();
    expect(eventTypes(w.hook, "/hook").map((r) => r.json.type)).toEqual(["certificate.invalid", "certificate.expired"]);
    expect(eventTypes(w.hook, "/hook")[0]!.json.data.certificate.statusReason).toBe("hostname_mismatch");
  });
});

describe("email without SMTP", () => {
  test("is written as an .eml file to the outbox folder", async () => {
    const { root } = await testPki();
    const outbox = temporaryDirectory("certkeeper-outbox-");
    const config = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }] };
    const transports = createTransports(config, new TrustStore([root.certPem]), { outboxDir: outbox });
    const h = await createHarness({ transports, config });
    cleanups.push(() => h.close());
    const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "Mail", config: { email: "me@acme.test" } } }), 201);
    expect(expectData(await h.request("POST", `/v1/channels/${channel.id}/test`), 200).status).toBe("delivered");
    const files = readdirSync(outbox).filter((f) => f.endsWith(".eml"));
    expect(files.length).toBe(1);
    const parsed = await PostalMime.parse(readFileSync(join(outbox, files[0]!)));
    expect([parsed.to?.[0]?.address, parsed.subject]).toEqual(["me@acme.test", "certkeeper test notification"]);
  });
});

describe("private targets at delivery time", () => {
  test("a channel whose name later resolves to a private address is refused at connect time", async () => {
    const canary = await startHttpReceiver();
    cleanups.push(() => canary.close());
    const w = await world({ config: { allowPrivateTargets: false, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }] } });
    // Stored directly: at creation the name resolved elsewhere (the API would refuse it today).
    await w.store.channels.insert(
      {
        organizationId: w.h.org.id,
        mode: "live",
        id: "ch_rebindrebindrebind00",
        type: "webhook",
        name: "rebound",
        enabled: true,
        filter: null,
        config: { url: `http://rebound.${TEST_DOMAIN}:${canary.port}/x` },
        signingSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        createdAt: w.clock.now(),
        updatedAt: w.clock.now(),
      },
      { limit: 10 },
    );
    const result = expectData(await w.h.request("POST", "/v1/channels/ch_rebindrebindrebind00/test"), 200);
    expect(result).toMatchObject({ status: "failed", responseStatus: null, error: expect.stringContaining("loopback") });
    expect(canary.requests.length).toBe(0);
  });
});
