/**
 * What a CA's renewal information may say (CONTRACT §19, RFC 9773 §4.2): a window that ends when the
 * certificate has already expired names no deadline, and a time that is no real RFC 3339 date-time
 * (February 30th, hour 24) makes the answer malformed. Either is an error: the deadline follows the
 * lifetime rule, with no alert of its own.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, SECOND } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { certIdOf, startAriServer, type AriServer } from "./support/ari_server.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);
let ari: AriServer;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
beforeAll(async () => {
  ari = await startAriServer({ tlsIssuer: (await testPki()).rsaIntermediate });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await ari.close();
});

async function world(config: Partial<Config> = {}): Promise<{ h: Harness; clock: FakeClock }> {
  const { root } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const clock = new FakeClock(Date.now());
  const full: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 1500,
    logLevel: "error",
    alertPolicy: "renewal",
    revocation: false,
    acmeDirectories: [{ issuer: "certkeeper Test RSA CA", url: ari.directoryUrl }],
    ...config,
  };
  const transports = createTransports(full, trust);
  const h = await createHarness({ config: full, clock, transports, trust });
  cleanups.push(() => transports.close(), () => h.core.stop());
  return { h, clock };
}

async function served(domain: string, notBefore: number, notAfter: number): Promise<{ leaf: Issued; server: TlsTestServer }> {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notAfter) });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cleanups.push(() => server.close());
  return { leaf, server };
}

async function eventTypes(h: Harness, id: string): Promise<string[]> {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === id).reverse().map((e) => e.type);
}
const iso = (ms: number) => new Date(ms).toISOString();
const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;

test("a suggested window ending after notAfter is an error: the lifetime's deadline, one renewal_overdue then, one expired at expiry", async () => {
  const w = await world();
  const domain = `late-window.${TEST_DOMAIN}`;
  const now = whole(Date.now());
  const notBefore = now - 10 * DAY;
  const notAfter = now + 80 * DAY;
  const { leaf, server } = await served(domain, notBefore, notAfter);
  ari.answer(certIdOf(leaf), { kind: "window", start: notAfter - DAY, end: notAfter + 5 * DAY, retryAfter: "86400" });
  const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
  const lifetimeDeadline = notBefore + Math.ceil((notAfter - notBefore) * 0.75);
  expect(got.renewal).toMatchObject({ source: "lifetime", window: null, deadline: iso(lifetimeDeadline), state: "not_due" });
  w.clock.set(lifetimeDeadline);
  await w.h.core.services.scheduler.runDue();
  w.clock.set(notAfter + SECOND);
  await w.h.core.services.scheduler.runDue();
  expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(await eventTypes(w.h, added.id)).toEqual(["certificate.renewal_overdue", "certificate.expired"]);
});

test("an answer whose times are not real RFC 3339 date-times (February 30th, hour 24) is malformed: an error, the lifetime rule", async () => {
  const w = await world();
  for (const [label, start, end] of [
    ["feb30", "2030-02-30T00:00:00Z", "2030-03-05T00:00:00Z"],
    ["hour24", "2030-01-01T24:00:00Z", "2030-01-03T00:00:00Z"],
  ] as const) {
    const domain = `bad-date-${label}.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain, Date.now() - 10 * DAY, Date.now() + 80 * DAY);
    ari.answer(certIdOf(leaf), { kind: "raw", contentType: "application/json", body: JSON.stringify({ suggestedWindow: { start, end } }) });
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect({ label, source: got.renewal.source, window: got.renewal.window }).toEqual({ label, source: "lifetime", window: null });
  }
});

test("a CA whose directory stops publishing renewalInfo gives no window any more: the lifetime rule", async () => {
  const w = await world();
  const domain = `dropped-ari.${TEST_DOMAIN}`;
  const now = whole(Date.now());
  const { leaf, server } = await served(domain, now - 10 * DAY, now + 80 * DAY);
  ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY, retryAfter: "3600" });
  const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  expect(expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200).renewal).toMatchObject({ source: "ari", deadline: iso(now + 52 * DAY) });
  ari.directory(JSON.stringify({ newNonce: "https://ca.example/nonce", newAccount: "https://ca.example/account", newOrder: "https://ca.example/order" }));
  try {
    w.clock.set(now + 2 * DAY); // past the answer's Retry-After and the directory's day in memory
    const checked = expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
    expect(checked.renewal).toMatchObject({ source: "lifetime", window: null, checkedAt: null });
  } finally {
    ari.directory(null);
  }
});

test("a renewalInfo URL with a query string: the certID goes into its path, the query stays", async () => {
  const w = await world();
  const domain = `query-ari.${TEST_DOMAIN}`;
  const now = whole(Date.now());
  const { leaf, server } = await served(domain, now - 10 * DAY, now + 80 * DAY);
  ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY, retryAfter: "3600" });
  ari.directory(JSON.stringify({ newNonce: "https://ca.example/nonce", renewalInfo: `${ari.renewalInfoUrl}/?tenant=a` }));
  try {
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    expect(expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200).renewal).toMatchObject({ source: "ari", deadline: iso(now + 52 * DAY) });
  } finally {
    ari.directory(null);
  }
});
