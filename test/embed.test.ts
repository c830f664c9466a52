/**
 * The embed API (`certkeeper/embed`) as a host app uses it: certificates on real TLS servers, a webhook
 * channel on a real receiver, errors as typed exceptions with the HTTP API's codes and statuses, the
 * background work started and stopped by the host, organizations kept apart. No HTTP server anywhere.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { configFromEnv, ConfigError, silentLogger, type Config } from "certkeeper";
import { CertkeeperApiError, createCertkeeper, type Certkeeper, type CertkeeperOptions } from "certkeeper/embed";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { refusedPort, startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";

setDefaultTimeout(20_000);

const VALID = `www.${TEST_DOMAIN}`;
const SOON = `soon.${TEST_DOMAIN}`;

let dir: string;
let config: Config;
let valid: TlsTestServer;
let soon: TlsTestServer;
let hook: HttpReceiver;

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  dir = mkdtempSync(join(tmpdir(), "certkeeper-embed-"));
  writeFileSync(join(dir, "ca.pem"), root.certPem);
  // The settings a host reads from its environment, as the server does (CONTRACT §1).
  config = configFromEnv({
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: join(dir, "ca.pem"),
    CERTKEEPER_TLS_TIMEOUT: "2s",
    CERTKEEPER_LOG_LEVEL: "error",
    // These tests assert Part I's fixed-day thresholds (a 5-day certificate raises certificate.expiring for 7).
    CERTKEEPER_ALERT_POLICY: "days",
  });
  const validLeaf = await createLeaf({ dnsNames: [VALID], daysLeft: 90, issuer: rsaIntermediate });
  valid = await startTlsServer({ cert: chainPem(validLeaf, rsaIntermediate), key: validLeaf.keyPem });
  const soonLeaf = await createLeaf({ dnsNames: [SOON], daysLeft: 5.5, issuer: rsaIntermediate });
  soon = await startTlsServer({ cert: chainPem(soonLeaf, rsaIntermediate), key: soonLeaf.keyPem });
  hook = await startHttpReceiver();
});

afterAll(async () => {
  await Promise.all([valid?.close(), soon?.close(), hook?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const open: Certkeeper[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
  hook.requests.length = 0;
});

async function embedded(options: CertkeeperOptions = {}): Promise<Certkeeper> {
  const ck = await createCertkeeper({ database: ":memory:", outboxDir: join(dir, "outbox"), ...options, config: { ...config, ...options.config } });
  open.push(ck);
  return ck;
}

/** Runs `call` and returns what it threw, which must be a CertkeeperApiError. */
async function thrown(call: () => Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(CertkeeperApiError);
    const { code, status, message } = error as CertkeeperApiError;
    return { code, status, message };
  }
  throw new Error("expected the call to throw");
}

describe("certificates", () => {
  test("add(), list(), get(), update(), check() and delete() work on a certificate of a local TLS server", async () => {
    const ck = await embedded();
    const added = await ck.certificates.add({ domain: VALID.toUpperCase(), port: valid.port, name: "Shop" });
    expect(added).toEqual({
      id: expect.stringMatching(/^cert_[0-9A-Za-z]{16,}$/),
      domain: VALID,
      name: "Shop",
      status: "valid",
      daysUntilExpiry: 89,
      expiresAt: expect.any(String),
      issuedAt: expect.any(String),
      issuer: "certkeeper intermediates",
      subject: VALID,
      port: valid.port,
      alertThresholds: [30, 14, 7, 3, 1],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const page = await ck.certificates.list({ status: "valid", limit: 10 });
    expect(page).toEqual({ data: [expect.objectContaining({ id: added.id, statusReason: null })], nextCursor: null });
    expect(await ck.certificates.list({ status: "expiring" })).toEqual({ data: [], nextCursor: null });

    const got = await ck.certificates.get(added.id);
    expect(got).toMatchObject({ ...added, subjectAlternativeNames: [VALID], statusReason: null });
    expect(got.chain.map((entry) => entry.subject)).toEqual([VALID, "certkeeper Test RSA CA"]);

    const updated = await ck.certificates.update(added.id, { alertThresholds: [7, 100] });
    expect(updated).toMatchObject({ id: added.id, alertThresholds: [100, 7], status: "expiring", statusReason: "expiring_soon" });
    expect((await ck.certificates.list({ status: "expiring,expired" })).data.map((c) => c.id)).toEqual([added.id]);

    const checked = await ck.certificates.check(added.id);
    expect(checked.id).toBe(added.id);
    expect(Date.parse(checked.lastCheckedAt)).toBeGreaterThanOrEqual(Date.parse(got.lastCheckedAt));

    expect(await ck.certificates.delete(added.id)).toEqual({ id: added.id, deleted: true });
    expect(await thrown(() => ck.certificates.get(added.id))).toMatchObject({ code: "certificate_not_found", status: 404 });
  });

  test("lists page with the cursor the HTTP API gives", async () => {
    const ck = await embedded();
    const a = await ck.certificates.add({ domain: VALID, port: valid.port });
    const b = await ck.certificates.add({ domain: SOON, port: soon.port });
    const first = await ck.certificates.list({ limit: 1 });
    expect(first.data.map((c) => c.id)).toEqual([b.id]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await ck.certificates.list({ limit: 1, cursor: first.nextCursor! });
    expect(second).toEqual({ data: [expect.objectContaining({ id: a.id })], nextCursor: null });
  });
});

describe("fleets", () => {
  test("tags on add and update, the tag filter, mutedUntil, and an import worked in the background", async () => {
    const ck = await embedded();
    const a = await ck.certificates.add({ domain: VALID, port: valid.port, tags: ["team:web", "env:prod"] });
    expect((await ck.certificates.get(a.id)).tags).toEqual(["env:prod", "team:web"]);
    const muted = await ck.certificates.update(a.id, { tags: ["team:web"], mutedUntil: "2099-01-01T00:00:00.000Z" });
    expect(muted).toMatchObject({ tags: ["team:web"], mutedUntil: "2099-01-01T00:00:00.000Z" });
    expect((await ck.certificates.list({ tag: "team:web" })).data.map((c) => c.id)).toEqual([a.id]);
    expect((await ck.certificates.list({ tag: "team:web,env:prod" })).data).toEqual([]);
    expect(await thrown(() => ck.certificates.update(a.id, { tags: ["Not A Tag"] }))).toMatchObject({ code: "invalid_request", status: 400 });

    await ck.start();
    const started = await ck.imports.create({ certificates: [{ domain: SOON, port: soon.port, tags: ["team:web"] }, { domain: VALID, port: valid.port }] });
    expect(started).toMatchObject({ status: "running", total: 2 });
    let done = await ck.imports.get(started.id);
    for (let i = 0; i < 100 && done.status !== "finished"; i++) {
      await Bun.sleep(50);
      done = await ck.imports.get(started.id);
    }
    expect(done.results?.map((r) => [r.status, r.error?.code ?? null])).toEqual([
      ["created", null],
      ["failed", "duplicate_domain"],
    ]);
    expect((await ck.certificates.list({ tag: "team:web" })).data.length).toBe(2);
  });
});

describe("errors", () => {
  test("a validation error is thrown with the HTTP API's code, status and message", async () => {
    const ck = await embedded();
    expect(await thrown(() => ck.certificates.add({ domain: "https://a.com/" }))).toEqual({
      code: "invalid_domain",
      status: 400,
      message: expect.stringContaining('"https://a.com/"'),
    });
    expect(await thrown(() => ck.certificates.add({ domain: VALID, port: 0 }))).toMatchObject({ code: "invalid_request", status: 400 });
    expect(await thrown(() => ck.certificates.add({ domain: VALID, colour: "red" } as never))).toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining('"colour"'),
    });
    expect(await thrown(() => ck.certificates.list({ status: "bogus" }))).toMatchObject({ code: "invalid_request", status: 400 });
    expect(await thrown(() => ck.certificates.list({ limit: 0 }))).toMatchObject({ code: "invalid_request", status: 400 });
    expect(await thrown(() => ck.certificates.get(42 as never))).toMatchObject({ code: "invalid_request", status: 400 });
    // An id holding U+0000 names nothing, as over HTTP: the not-found, naming it as a URL spells it.
    expect(await thrown(() => ck.certificates.get("cert_\u0000x"))).toMatchObject({ code: "certificate_not_found", status: 404, message: expect.stringContaining('"cert_%00x"') });
    expect(await thrown(() => ck.channels.add({ type: "sms", name: "x", config: { email: "a@b.co" } }))).toMatchObject({
      code: "invalid_channel_type",
      status: 400,
    });
    expect(await thrown(() => ck.channels.add({ type: "webhook", name: "x", config: { url: "ftp://a.com" } }))).toMatchObject({
      code: "invalid_webhook_url",
      status: 400,
    });
  });

  test("existence, conflict, reachability and plan limits are thrown as the HTTP API answers them", async () => {
    const ck = await embedded({ organization: { name: "Small", plan: "free", limits: { certificates: 1 } } });
    const added = await ck.certificates.add({ domain: VALID, port: valid.port });
    expect(await thrown(() => ck.certificates.add({ domain: VALID, port: valid.port }))).toMatchObject({ code: "duplicate_domain", status: 409 });
    expect(await thrown(() => ck.certificates.add({ domain: SOON, port: soon.port }))).toMatchObject({
      code: "certificate_limit_reached",
      status: 402,
    });
    await ck.certificates.delete(added.id);
    const closedPort = await refusedPort();
    const refused = await thrown(() => ck.certificates.add({ domain: VALID, port: closedPort }));
    expect(refused).toMatchObject({ code: "certificate_not_found", status: 422 });
    expect(await ck.certificates.list()).toEqual({ data: [], nextCursor: null });
    expect(await thrown(() => ck.certificates.update("cert_nothere0000000000", { name: "x" }))).toMatchObject({
      code: "certificate_not_found",
      status: 404,
    });
    expect(await thrown(() => ck.channels.test("ch_nothere00000000000"))).toMatchObject({ code: "channel_not_found", status: 404 });
  });
});

describe("a store of the host's", () => {
  test("an unexpected failure is internal_error (500) with the original error as cause, and close() leaves the store open", async () => {
    const store = createMemoryStore();
    const failure = new Error("disk on fire");
    store.certificates.list = async () => {
      throw failure;
    };
    const errors: string[] = [];
    const ck = await createCertkeeper({ database: store, config, logger: { ...silentLogger, error: (message) => errors.push(message) } });
    let caught: unknown;
    await ck.certificates.list().catch((error: unknown) => (caught = error));
    expect(caught).toBeInstanceOf(CertkeeperApiError);
    expect(caught).toMatchObject({ code: "internal_error", status: 500, cause: failure });
    expect((caught as Error).message).not.toContain("disk");
    expect(errors).toEqual(["embedded call failed"]);
    await ck.close();
    expect((await store.organizations.list()).map((org) => org.id)).toEqual([ck.organization.id]);
  });
});

describe("channels and events", () => {
  test("a channel test reaches a local receiver, signed, and is listed with the events", async () => {
    const ck = await embedded();
    const channel = await ck.channels.add({ type: "webhook", name: "Ops", config: { url: `${hook.url}/certkeeper` } });
    const secret = channel.config.signingSecret as string;
    expect(secret).toMatch(/^whsec_/);

    const result = await ck.channels.test(channel.id);
    expect(result).toEqual({ eventId: expect.stringMatching(/^evt_/), channelId: channel.id, status: "delivered", responseStatus: 200, error: null });
    const [request] = hook.requests;
    expect(request!.path).toBe("/certkeeper");
    expect(new Webhook(secret).verify(request!.body, request!.headers)).toMatchObject({ id: result.eventId, type: "test" });

    const events = await ck.events.list();
    expect(events).toEqual({
      data: [
        {
          id: result.eventId,
          type: "test",
          createdAt: expect.any(String),
          certificateId: null,
          data: expect.any(Object),
          deliveries: [{ channelId: channel.id, status: "delivered", attempts: 1, lastError: null }],
        },
      ],
      nextCursor: null,
    });

    expect((await ck.channels.list()).data.map((c) => c.id)).toEqual([channel.id]);
    expect(await ck.channels.get(channel.id)).toMatchObject({ id: channel.id, config: { url: `${hook.url}/certkeeper` } });
    expect(await ck.channels.update(channel.id, { enabled: false, name: "Ops (paused)" })).toMatchObject({ enabled: false, name: "Ops (paused)" });
    expect(await ck.channels.delete(channel.id)).toEqual({ id: channel.id, deleted: true });
    expect(await thrown(() => ck.channels.get(channel.id))).toMatchObject({ code: "channel_not_found", status: 404 });
  });
});

describe("background work", () => {
  test("nothing is checked or delivered before start(); start() runs both; after stop() nothing runs", async () => {
    const ck = await embedded({ config: { checkIntervalMs: 300, deliveryRetryMs: [200] } });
    await ck.channels.add({ type: "webhook", name: "Ops", config: { url: hook.url } });
    const added = await ck.certificates.add({ domain: SOON, port: soon.port });
    expect(added.status).toBe("expiring");

    await Bun.sleep(700);
    expect(hook.requests).toHaveLength(0);
    const [pending] = (await ck.events.list()).data;
    expect(pending).toMatchObject({ type: "certificate.expiring", certificateId: added.id, data: { threshold: 7 } });
    expect(pending!.deliveries).toEqual([expect.objectContaining({ status: "pending", attempts: 0 })]);
    const before = (await ck.certificates.get(added.id)).lastCheckedAt;

    await ck.start();
    const [delivered] = await hook.waitFor(1);
    expect(delivered!.json).toMatchObject({ id: pending!.id, type: "certificate.expiring", data: { threshold: 7 } });
    await waitUntil(async () => (await ck.certificates.get(added.id)).lastCheckedAt !== before);
    await waitUntil(async () => (await ck.events.list()).data[0]!.deliveries[0]!.status === "delivered");

    await ck.stop();
    const stopped = (await ck.certificates.get(added.id)).lastCheckedAt;
    await Bun.sleep(900);
    expect((await ck.certificates.get(added.id)).lastCheckedAt).toBe(stopped);
    expect(hook.requests).toHaveLength(1);
  });
});

describe("organizations and modes", () => {
  test("two embedded certkeepers on one database file act for their own organizations", async () => {
    const database = `file:${join(dir, "shared.db")}`;
    const alpha = await embedded({ database, organization: { name: "Alpha" } });
    const beta = await embedded({ database, organization: { name: "Beta" } });
    expect(alpha.organization).toEqual({ id: expect.stringMatching(/^org_/), name: "Alpha", plan: "enterprise" });
    expect(beta.organization.id).not.toBe(alpha.organization.id);

    const mine = await alpha.certificates.add({ domain: VALID, port: valid.port });
    expect(await beta.certificates.list()).toEqual({ data: [], nextCursor: null });
    expect(await thrown(() => beta.certificates.get(mine.id))).toMatchObject({ code: "certificate_not_found", status: 404 });
    expect(await thrown(() => beta.certificates.delete(mine.id))).toMatchObject({ code: "certificate_not_found", status: 404 });
    const theirs = await beta.certificates.add({ domain: VALID, port: valid.port });
    expect(theirs.id).not.toBe(mine.id);

    const alphaAgain = await embedded({ database, organization: { name: "Alpha" } });
    expect(alphaAgain.organization.id).toBe(alpha.organization.id);
    expect((await alphaAgain.certificates.list()).data.map((c) => c.id)).toEqual([mine.id]);
    const byId = await embedded({ database, organization: { id: beta.organization.id } });
    expect((await byId.certificates.list()).data.map((c) => c.id)).toEqual([theirs.id]);
  });

  test("an empty database gets one default organization; with several, one must be chosen", async () => {
    const database = `file:${join(dir, "default.db")}`;
    const first = await embedded({ database });
    expect(first.organization).toMatchObject({ name: "certkeeper", plan: "enterprise" });
    expect(first.mode).toBe("live");
    expect((await embedded({ database })).organization.id).toBe(first.organization.id);

    await embedded({ database, organization: { name: "Other" } });
    const error = await createCertkeeper({ database, config }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain("2 organizations");
    const missing = await createCertkeeper({ database, config, organization: { id: "org_missing" } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ConfigError);
  });

  test("test mode sees its own data, as ck_test_ keys do", async () => {
    const database = `file:${join(dir, "modes.db")}`;
    const live = await embedded({ database });
    const testMode = await embedded({ database, mode: "test" });
    expect(testMode.organization.id).toBe(live.organization.id);
    await live.certificates.add({ domain: VALID, port: valid.port });
    expect(await testMode.certificates.list()).toEqual({ data: [], nextCursor: null });
    await testMode.certificates.add({ domain: VALID, port: valid.port });
  });
});

describe("limits", () => {
  test("the host's own calls are not rate limited: an organization allowing 2 requests a minute answers 5 in a row", async () => {
    const ck = await embedded({ organization: { name: "Small", plan: "free", limits: { requestsPerMinute: 2 } } });
    for (let i = 0; i < 5; i++) expect(await ck.certificates.list()).toEqual({ data: [], nextCursor: null });
  });
});

describe("the adapter", () => {
  test("has no HTTP in it: no Elysia, no server", () => {
    const folder = join(import.meta.dir, "../adapters/embed");
    for (const file of readdirSync(folder)) {
      const source = readFileSync(join(folder, file), "utf8");
      expect({ file, imports: source.match(/from "[^"]*elysia[^"]*"/g) }).toEqual({ file, imports: null });
      expect(source).not.toContain("Bun.serve");
    }
  });

  test("calls after close() are refused", async () => {
    const ck = await createCertkeeper({ database: ":memory:", config });
    await ck.close();
    await expect(ck.certificates.list()).rejects.toThrow("closed");
  });
});

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(50);
  }
}
