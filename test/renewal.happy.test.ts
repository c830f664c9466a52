/**
 * Renewal, not age (CONTRACT §18), against real TLS servers serving certificates from the test PKI:
 * short lifetimes make renewal deadlines pass during a test; servers swap certificates as a renewing
 * ACME client would. Under `alertPolicy: "renewal"` a certificate is news at its renewal deadline, not
 * at fixed days; under `days` it is Part I exactly.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, SECOND, type EventType } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface World {
  h: Harness;
  clock: FakeClock | null;
  hook: HttpReceiver;
  /** Runs due checks, then due deliveries. */
  settle(): Promise<void>;
}

async function world(config: Partial<Config> = {}, options: { clock?: FakeClock } = {}): Promise<World> {
  const { root } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const full: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 2000,
    deliveryRetryMs: [1000],
    logLevel: "error",
    alertPolicy: "renewal",
    revocation: false,
    ...config,
  };
  const transports = createTransports(full, trust);
  const h = await createHarness({ config: full, clock: options.clock, transports, trust, random: () => 0.5 });
  const hook = await startHttpReceiver();
  cleanups.push(() => hook.close(), () => transports.close(), () => h.close());
  expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Hook", config: { url: `${hook.url}/hook` } } }), 201);
  return {
    h,
    clock: options.clock ?? null,
    hook,
    async settle() {
      await h.core.services.scheduler.runDue();
      await h.core.services.deliveries!.loop.runDue();
    },
  };
}

async function leaf(domain: string, notBefore: number, notAfter: number, serial?: string): Promise<Issued> {
  const { rsaIntermediate } = await testPki();
  return createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notAfter), serial });
}

async function serve(issued: Issued, options: { host?: string; port?: number } = {}): Promise<TlsTestServer> {
  const { rsaIntermediate } = await testPki();
  const server = await startTlsServer({ cert: chainPem(issued, rsaIntermediate), key: issued.keyPem, ...options });
  cleanups.push(() => server.close());
  return server;
}

async function install(server: TlsTestServer, issued: Issued): Promise<void> {
  const { rsaIntermediate } = await testPki();
  server.setCertificate(chainPem(issued, rsaIntermediate), issued.keyPem);
}

/** Every event of the certificate, oldest first: type, when, and the threshold or deadline it names. */
async function events(h: Harness, certificateId: string) {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list
    .filter((e) => e.certificateId === certificateId)
    .reverse()
    .map((e) => ({ type: e.type as EventType, at: Date.parse(e.createdAt), data: e.data, deliveries: e.deliveries }));
}

/**
 * When, in the fake clock's time, `server` was connected to: each check of a one-address name connects
 * once. `sample()` after each step notes the connections made during it.
 */
function connectionLog(server: TlsTestServer, clock: FakeClock) {
  let seen = server.connections();
  const times: number[] = [];
  return {
    times,
    sample() {
      for (const n = server.connections(); seen < n; seen++) times.push(clock.now());
    },
  };
}

/** Whole seconds, as X.509 keeps times. */
const second = (ms: number) => Math.floor(ms / SECOND) * SECOND;
/** The lifetime rule's deadline: three quarters, two thirds under 10 days (CONTRACT §18). */
const lifetimeDeadline = (notBefore: number, notAfter: number) =>
  second(notBefore) + Math.ceil(((second(notAfter) - second(notBefore)) * (second(notAfter) - second(notBefore) < 10 * DAY ? 2 : 3)) / (second(notAfter) - second(notBefore) < 10 * DAY ? 3 : 4));

describe("the contract's examples", () => {
  test("added with 5 days left of a 90-day lifetime: renewal raises exactly one renewal_overdue; days raises §7's one expiring, for 7", async () => {
    const w = await world();
    const now = Date.now();
    const notBefore = now - 85 * DAY;
    const notAfter = now + 5 * DAY + HOUR;
    const server = await serve(await leaf(`five.${TEST_DOMAIN}`, notBefore, notAfter));

    const renewal = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain: `five.${TEST_DOMAIN}`, port: server.port } }), 201);
    const days = expectData(
      await w.h.request("POST", "/v1/certificates", { body: { domain: `five.${TEST_DOMAIN}`, port: server.port, connectTo: "127.0.0.1", alertPolicy: "days" } }),
      201,
    );
    // The add response keeps SPEC.md's 13 fields: no alertPolicy, no renewal.
    expect(Object.keys(renewal).sort()).toEqual(["alertThresholds", "createdAt", "daysUntilExpiry", "domain", "expiresAt", "id", "issuedAt", "issuer", "name", "port", "status", "subject", "updatedAt"]);

    const overdue = await events(w.h, renewal.id);
    expect(overdue.map((e) => e.type)).toEqual(["certificate.renewal_overdue"]);
    const deadline = lifetimeDeadline(notBefore, notAfter);
    expect(overdue[0]!.data).toMatchObject({
      deadline: new Date(deadline).toISOString(),
      source: "lifetime",
      window: null,
      daysUntilExpiry: 5,
      certificate: { id: renewal.id, status: "expiring", statusReason: "renewal_overdue", alertPolicy: "renewal" },
    });
    const expiring = await events(w.h, days.id);
    expect(expiring.map((e) => [e.type, e.data.threshold])).toEqual([["certificate.expiring", 7]]);

    const got = expectData(await w.h.request("GET", `/v1/certificates/${renewal.id}`), 200);
    expect({ status: got.status, statusReason: got.statusReason, alertPolicy: got.alertPolicy, renewal: got.renewal }).toEqual({
      status: "expiring",
      statusReason: "renewal_overdue",
      alertPolicy: "renewal",
      renewal: { deadline: new Date(deadline).toISOString(), source: "lifetime", window: null, explanationUrl: null, state: "overdue", checkedAt: null },
    });
    // The same leaf is overdue under both policies; only the status and the alerts differ.
    const gotDays = expectData(await w.h.request("GET", `/v1/certificates/${days.id}`), 200);
    expect([gotDays.status, gotDays.statusReason, gotDays.renewal.state]).toEqual(["expiring", "expiring_soon", "overdue"]);

    // Delivered, once each, to the webhook.
    await w.settle();
    expect(w.hook.requests.map((r) => r.json.type).sort()).toEqual(["certificate.expiring", "certificate.renewal_overdue"]);
    // Checked again later: nothing more.
    expectData(await w.h.request("POST", `/v1/certificates/${renewal.id}/check`), 200);
    expect((await events(w.h, renewal.id)).length).toBe(1);
  });

  test("a 160-hour certificate replaced on time, every 4 days, for 30 days raises no event but certificate.renewed", async () => {
    const start = Date.now();
    const clock = new FakeClock(start);
    const w = await world({ checkIntervalMs: 6 * HOUR }, { clock });
    const domain = `shortlived.${TEST_DOMAIN}`;
    const lifetime = 160 * HOUR;
    const server = await serve(await leaf(domain, start - HOUR, start - HOUR + lifetime));
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    expect(added.status).toBe("valid");
    const checks = connectionLog(server, clock);

    let renewedAt = start - HOUR;
    let renewals = 0;
    // 30 days of renewals, and half a day more for the last one to be seen.
    for (let at = start; at <= start + 30 * DAY + 12 * HOUR; at += HOUR) {
      clock.set(at);
      // The ACME client renews at half the lifetime (its shortest-lived rule), i.e. every 80 hours.
      if (at - renewedAt >= 80 * HOUR && at <= start + 30 * DAY) {
        renewedAt = at;
        renewals++;
        await install(server, await leaf(domain, at - HOUR, at - HOUR + lifetime));
      }
      await w.settle();
      checks.sample();
    }
    const seen = await events(w.h, added.id);
    expect(new Set(seen.map((e) => e.type))).toEqual(new Set(["certificate.renewed"]));
    expect(seen.length).toBe(renewals);
    expect(renewals).toBe(9);
    // Checked at least every twelfth of the lifetime (13 h 20 min), though the interval is 6 h … and
    // never less often than the interval says: at least every 6 hours.
    const gaps = checks.times.slice(1).map((at, i) => at - checks.times[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(6 * HOUR);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect([got.status, got.renewal.state]).toEqual(["valid", "not_due"]);
  });
});

describe("deadlines that pass during the test", () => {
  test("a 24-hour certificate is checked every 2 hours, whatever CERTKEEPER_CHECK_INTERVAL says, and at its deadline", async () => {
    const start = Date.now();
    const clock = new FakeClock(start);
    const w = await world({ checkIntervalMs: 24 * HOUR }, { clock });
    const domain = `day.${TEST_DOMAIN}`;
    const notBefore = start - 30 * 60_000;
    const server = await serve(await leaf(domain, notBefore, notBefore + DAY));
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const checks = connectionLog(server, clock);
    for (let at = start; at <= start + 20 * HOUR; at += 60_000) {
      clock.set(at);
      await w.settle();
      checks.sample();
    }
    const deadline = lifetimeDeadline(notBefore, notBefore + DAY);
    // Every 2 hours from the add, and one at the deadline itself.
    const before = checks.times.filter((at) => at < deadline);
    expect(before.slice(1).map((at, i) => at - before[i]!)).toEqual(new Array(before.length - 1).fill(2 * HOUR));
    expect(before.length).toBeGreaterThanOrEqual(7);
    expect(checks.times.filter((at) => at >= deadline)[0]).toBeLessThan(deadline + 60_000);
    // Raised by the first check at or after the deadline (the clock moves a minute at a time here).
    const seen = await events(w.h, added.id);
    expect(seen.map((e) => e.type)).toEqual(["certificate.renewal_overdue"]);
    expect(seen[0]!.at - deadline).toBeGreaterThanOrEqual(0);
    expect(seen[0]!.at - deadline).toBeLessThan(60_000);
  });

  test("the twelfth of a lifetime holds for trusted leaves that have not expired: an expired one waits longer as it ages, an untrusted one the interval", async () => {
    const start = Date.now();
    const clock = new FakeClock(start);
    const w = await world({ checkIntervalMs: 6 * HOUR }, { clock });
    const plain = async (issued: Issued) => {
      const server = await startTlsServer({ cert: issued.certPem, key: issued.keyPem });
      cleanups.push(() => server.close());
      return server;
    };
    const watched = async (name: string, issued: Issued, serve_: (i: Issued) => Promise<TlsTestServer> = serve) => {
      const domain = `${name}.${TEST_DOMAIN}`;
      const server = await serve_(issued);
      expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
      return connectionLog(server, clock);
    };
    // Trusted, 24 hours, valid: every 2 hours.
    const fresh = await watched("fresh", await leaf(`fresh.${TEST_DOMAIN}`, start - HOUR, start + 23 * HOUR));
    // The same lifetime, expired 30 hours ago: the twelfth doubled until it is a twelfth of the time
    // since, 4 hours (until 48 hours since, at start + 18 hours, past the 14 hours watched: a check
    // near that moment would move to the interval's phase).
    const lapsed = await watched("lapsed", await leaf(`lapsed.${TEST_DOMAIN}`, start - 54 * HOUR, start - 30 * HOUR));
    // A 12-second leaf that expired a year ago: the interval, not every second.
    const ancient = await watched("ancient", await leaf(`ancient.${TEST_DOMAIN}`, start - 400 * DAY, start - 400 * DAY + 12 * SECOND));
    // A self-signed leaf of 12 seconds, valid now (a server can make one up at every handshake): the interval.
    const madeUp = await watched("made-up", await createLeaf({ dnsNames: [`made-up.${TEST_DOMAIN}`], notBefore: new Date(start - SECOND), notAfter: new Date(start + 11 * SECOND) }), plain);
    const logs = { fresh, lapsed, ancient, madeUp };
    for (let at = start; at <= start + 14 * HOUR; at += 60_000) {
      clock.set(at);
      await w.h.core.services.scheduler.runDue();
      for (const log of Object.values(logs)) log.sample();
    }
    const gaps = (times: number[]) => times.slice(1).map((at, i) => at - times[i]!);
    const freshDeadline = lifetimeDeadline(start - HOUR, start + 23 * HOUR);
    expect(gaps(fresh.times.filter((at) => at < freshDeadline)).slice(1)).toEqual(new Array(fresh.times.filter((at) => at < freshDeadline).length - 2).fill(2 * HOUR));
    expect(gaps(lapsed.times.slice(1))).toEqual(new Array(lapsed.times.length - 2).fill(4 * HOUR));
    expect(lapsed.times.length).toBeGreaterThanOrEqual(3);
    for (const log of [ancient, madeUp]) {
      expect(log.times.length).toBeLessThanOrEqual(4);
      expect(gaps(log.times.slice(1)).every((gap) => gap >= 6 * HOUR - 60_000)).toBe(true);
    }
  });

  test("real time: valid until the deadline, then one renewal_overdue raised by a check made at the deadline and delivered once", async () => {
    const w = await world({ checkIntervalMs: 6 * HOUR });
    w.h.core.start();
    const domain = `deadline.${TEST_DOMAIN}`;
    // A 2-minute certificate whose deadline (two thirds in) comes 6 seconds from now.
    const notBefore = Date.now() - 74 * SECOND;
    const notAfter = notBefore + 120 * SECOND;
    const server = await serve(await leaf(domain, notBefore, notAfter));
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const deadline = lifetimeDeadline(notBefore, notAfter);
    expect(added.status).toBe("valid");
    expect((await events(w.h, added.id)).length).toBe(0);

    const [delivered] = await w.hook.waitFor(1, 30_000);
    expect(delivered!.json.type).toBe("certificate.renewal_overdue");
    const seen = await events(w.h, added.id);
    expect(seen.map((e) => e.type)).toEqual(["certificate.renewal_overdue"]);
    // Raised by a check that the server answered at or after the deadline (never before), and before
    // the next twelfth-of-lifetime check would have come; the event is stamped when that check is saved.
    const checkedAt = Date.parse(seen[0]!.data.certificate.lastCheckedAt);
    expect(checkedAt).toBeGreaterThanOrEqual(deadline);
    expect(checkedAt).toBeLessThanOrEqual(seen[0]!.at);
    expect(seen[0]!.at).toBeLessThan(deadline + 10 * SECOND);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect([got.status, got.statusReason, got.renewal.state]).toEqual(["expiring", "renewal_overdue", "overdue"]);
    expect(w.hook.requests.length).toBe(1);
  });

  test("real time: a renewal made since the last check is seen by the deadline, before any alert: certificate.renewed, no overdue", async () => {
    const w = await world({ checkIntervalMs: 6 * HOUR });
    w.h.core.start();
    const domain = `renewed.${TEST_DOMAIN}`;
    const notBefore = Date.now() - 74 * SECOND;
    const notAfter = notBefore + 120 * SECOND;
    const server = await serve(await leaf(domain, notBefore, notAfter, "0a01"));
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    // Renewed right after the add's check, before the deadline: a check by the deadline (the deadline's
    // own, or the certificate's regular one if its phase comes first) sees it before any alert.
    await install(server, await leaf(domain, Date.now() - SECOND, Date.now() + 120 * SECOND, "0a02"));
    const [delivered] = await w.hook.waitFor(1, 30_000);
    expect(delivered!.json.type).toBe("certificate.renewed");
    const seen = await events(w.h, added.id);
    expect(seen.map((e) => e.type)).toEqual(["certificate.renewed"]);
    expect(seen[0]!.at).toBeLessThan(lifetimeDeadline(notBefore, notAfter) + 5 * SECOND);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect([got.status, got.serialNumber, got.renewal.state]).toEqual(["valid", "0A:02", "not_due"]);
  });

  test("multi-address name: overdue while any answering node still serves the old leaf; renewed once every node serves the new one", async () => {
    const start = Date.now();
    const clock = new FakeClock(start);
    const domain = `pool.${TEST_DOMAIN}`;
    const w = await world({ resolve: [{ pattern: domain, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }] }, { clock });
    const notBefore = start - 60 * DAY;
    const notAfter = start + 30 * DAY;
    const old = await leaf(domain, notBefore, notAfter, "0b01");
    const a = await serve(old);
    const b = await serve(old, { host: "127.0.0.2", port: a.port });
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);
    // Node b is renewed before the deadline (67.5 days in); node a is forgotten.
    await install(b, await leaf(domain, start, start + 90 * DAY, "0b02"));
    const deadline = lifetimeDeadline(notBefore, notAfter);
    for (let at = start; at <= deadline + HOUR; at += HOUR) {
      clock.set(at);
      await w.settle();
    }
    let seen = await events(w.h, added.id);
    expect(seen.map((e) => e.type)).toEqual(["certificate.renewal_overdue"]);
    // At the first hourly step at or after the deadline, never before.
    expect(seen[0]!.at - deadline).toBeGreaterThanOrEqual(0);
    expect(seen[0]!.at - deadline).toBeLessThan(HOUR);
    expect(seen[0]!.data.certificate.endpoints.map((e: any) => e.serialNumber)).toEqual(["0B:01", "0B:02"]);
    // Node a catches up: one renewal, announced once.
    await install(a, await leaf(domain, start, start + 90 * DAY, "0b02"));
    for (let at = deadline + 2 * HOUR; at <= deadline + 14 * HOUR; at += HOUR) {
      clock.set(at);
      await w.settle();
    }
    seen = await events(w.h, added.id);
    expect(seen.map((e) => e.type)).toEqual(["certificate.renewal_overdue", "certificate.renewed"]);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect([got.status, got.serialNumber, got.renewal.state]).toEqual(["valid", "0B:02", "not_due"]);
  });

  test("after the overdue alert, later thresholds are raised as certificate.expiring; thresholds crossed before it are covered", async () => {
    const start = Date.now();
    const clock = new FakeClock(start);
    const w = await world({}, { clock });
    const domain = `late.${TEST_DOMAIN}`;
    // 90 days, 20 left: past the 30-day threshold and the deadline (22.5 days left), which covers it.
    const notBefore = start - 70 * DAY;
    const notAfter = start + 20 * DAY;
    const server = await serve(await leaf(domain, notBefore, notAfter));
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    for (let at = start; at <= notAfter + HOUR; at += 3 * HOUR) {
      clock.set(at);
      await w.settle();
    }
    const seen = await events(w.h, added.id);
    expect(seen.map((e) => [e.type, e.data.threshold ?? null])).toEqual([
      ["certificate.renewal_overdue", null],
      ["certificate.expiring", 14],
      ["certificate.expiring", 7],
      ["certificate.expiring", 3],
      ["certificate.expiring", 1],
      ["certificate.expired", null],
    ]);
  });
});

describe("alertPolicy", () => {
  test("CERTKEEPER_ALERT_POLICY sets the default; get and list return it; add, patch and import items take it", async () => {
    const w = await world({ alertPolicy: "days" });
    const domain = `policy.${TEST_DOMAIN}`;
    const now = Date.now();
    const server = await serve(await leaf(domain, now - 10 * DAY, now + 80 * DAY));
    const byDefault = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const given = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, connectTo: "127.0.0.1", alertPolicy: "renewal" } }), 201);
    expect(expectData(await w.h.request("GET", `/v1/certificates/${byDefault.id}`), 200).alertPolicy).toBe("days");
    const listed = expectData(await w.h.request("GET", "/v1/certificates"), 200) as any[];
    expect(Object.fromEntries(listed.map((c) => [c.id, c.alertPolicy]))).toEqual({ [byDefault.id]: "days", [given.id]: "renewal" });
    const patched = expectData(await w.h.request("PATCH", `/v1/certificates/${byDefault.id}`, { body: { alertPolicy: "renewal" } }), 200);
    expect(patched.alertPolicy).toBe("renewal");

    const imported = expectData(
      await w.h.request("POST", "/v1/imports", {
        body: { certificates: [{ domain: `policy-import.${TEST_DOMAIN}`, port: server.port, alertPolicy: "renewal" }, { domain: `other.${TEST_DOMAIN}`, alertPolicy: "weekly" }] },
      }),
      202,
    );
    await w.h.core.services.imports!.loop.runDue();
    const finished = expectData(await w.h.request("GET", `/v1/imports/${imported.id}`), 200);
    expect(finished.results.map((r: any) => [r.status, r.error?.code ?? null])).toEqual([
      ["created", null],
      ["failed", "invalid_request"],
    ]);
    expect(finished.results[1].error.message).toContain("alertPolicy");
    expect(expectData(await w.h.request("GET", `/v1/certificates/${finished.results[0].certificateId}`), 200).alertPolicy).toBe("renewal");
  });

  test("a PATCH to days raises the lowest crossed threshold at the check it makes due; back to renewal, nothing before the deadline", async () => {
    const start = Date.now();
    const clock = new FakeClock(start);
    const w = await world({ checkIntervalMs: 6 * HOUR }, { clock });
    const domain = `switch.${TEST_DOMAIN}`;
    // 45 days, 13 left: the 14-day threshold is crossed; the deadline (33.75 days in) is 1.75 days away.
    const notAfter = start + 13 * DAY + HOUR;
    const notBefore = notAfter - 45 * DAY;
    const server = await serve(await leaf(domain, notBefore, notAfter));
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    expect(added.status).toBe("valid");
    expect(await events(w.h, added.id)).toEqual([]);

    const patched = expectData(await w.h.request("PATCH", `/v1/certificates/${added.id}`, { body: { alertPolicy: "days" } }), 200);
    // The status follows the new policy at once; the alert comes from the next check, made now.
    expect([patched.status, patched.statusReason]).toEqual(["expiring", "expiring_soon"]);
    clock.advance(SECOND);
    await w.settle();
    expect((await events(w.h, added.id)).map((e) => [e.type, e.data.threshold])).toEqual([["certificate.expiring", 14]]);

    expectData(await w.h.request("PATCH", `/v1/certificates/${added.id}`, { body: { alertPolicy: "renewal" } }), 200);
    const deadline = lifetimeDeadline(notBefore, notAfter);
    for (let at = start + 2 * SECOND; at < deadline; at += HOUR) {
      clock.set(at);
      await w.settle();
    }
    expect((await events(w.h, added.id)).map((e) => e.type)).toEqual(["certificate.expiring"]);
    // The check the deadline scheduled raises the alert.
    clock.set(deadline);
    await w.settle();
    expect((await events(w.h, added.id)).map((e) => e.type)).toEqual(["certificate.expiring", "certificate.renewal_overdue"]);
  });
});

describe("finding what needs a human", () => {
  test("?renewal= filters by renewal state; the summary counts renewal states", async () => {
    const w = await world();
    const now = Date.now();
    const fresh = await serve(await leaf(`fresh.${TEST_DOMAIN}`, now - DAY, now + 89 * DAY));
    const stale = await serve(await leaf(`stale.${TEST_DOMAIN}`, now - 80 * DAY, now + 10 * DAY));
    const a = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain: `fresh.${TEST_DOMAIN}`, port: fresh.port } }), 201);
    const b = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain: `stale.${TEST_DOMAIN}`, port: stale.port, alertPolicy: "days" } }), 201);
    const ids = async (query: string) => (expectData(await w.h.request("GET", `/v1/certificates?${query}`), 200) as any[]).map((c) => c.id);
    expect(await ids("renewal=overdue")).toEqual([b.id]);
    expect(await ids("renewal=not_due")).toEqual([a.id]);
    expect((await ids("renewal=overdue,requested,not_due")).sort()).toEqual([a.id, b.id].sort());
    const summary = expectData(await w.h.request("GET", "/v1/certificates/summary"), 200);
    expect(summary.byRenewal).toEqual({ not_due: 1, overdue: 1, requested: 0 });
    const bad = await w.h.request("GET", "/v1/certificates?renewal=late");
    expect([bad.status, bad.body.error.code]).toEqual([400, "invalid_request"]);
  });
});

describe("where the new kinds are accepted", () => {
  test("a channel filtered to certificate.renewal_overdue receives it and nothing else; /metrics shows each renewal deadline", async () => {
    const w = await world();
    const filtered = await startHttpReceiver();
    cleanups.push(() => filtered.close());
    expectData(
      await w.h.request("POST", "/v1/channels", {
        body: { type: "webhook", name: "Renewals only", config: { url: `${filtered.url}/hook` }, filter: { events: ["certificate.renewal_overdue", "certificate.renewal_requested"] } },
      }),
      201,
    );
    const now = Date.now();
    const stale = await serve(await leaf(`filtered.${TEST_DOMAIN}`, now - 80 * DAY, now + 10 * DAY));
    const overdue = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain: `filtered.${TEST_DOMAIN}`, port: stale.port } }), 201);
    const expiring = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain: `filtered.${TEST_DOMAIN}`, port: stale.port, connectTo: "127.0.0.1", alertPolicy: "days" } }), 201);
    await w.settle();
    expect(w.hook.requests.map((r) => r.json.type).sort()).toEqual(["certificate.expiring", "certificate.renewal_overdue"]);
    expect(filtered.requests.map((r) => [r.json.type, r.json.data.certificate.id])).toEqual([["certificate.renewal_overdue", overdue.id]]);

    const { scrapeMetrics } = await import("../core/metrics/mod.ts");
    let text = "";
    for await (const chunk of scrapeMetrics({ store: w.h.store, metrics: w.h.core.services.metrics, now: Date.now() })) text += chunk;
    for (const id of [overdue.id, expiring.id]) {
      const got = expectData(await w.h.request("GET", `/v1/certificates/${id}`), 200);
      const line = text.split("\n").find((l) => l.startsWith("certkeeper_certificate_renewal_deadline_timestamp_seconds{") && l.includes(`status="${got.status}"`) && l.includes(`port="${got.port}"`));
      expect(line).toBeDefined();
      expect(line).toContain('source="lifetime"');
      expect(Number(line!.split(" ").at(-1))).toBe(Date.parse(got.renewal.deadline) / 1000);
    }
  });
});
