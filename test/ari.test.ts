/**
 * ACME Renewal Information (RFC 9773, CONTRACT §19) against a CA's ARI service that follows the RFC
 * (test/support/ari_server.ts): the certID, the deadline from the suggested window, answers shared by
 * certificates, organizations and processes, Retry-After, a CA asking for early replacement, and CAs
 * that misbehave. The clock is a FakeClock started at the real time, so the TLS servers' real
 * certificates stay valid while the test moves time to see when the CA is asked again.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { DAY, HOUR, MINUTE, SECOND } from "../core/base/mod.ts";
import { ariCertId, retryDelay } from "../core/ari/mod.ts";
import { Certificate } from "../core/tls/x509.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { certIdOf, type AriServer } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);

const worlds = ariWorlds();
const { world, served, cleanups } = worlds;
let ari: AriServer;
beforeAll(() => {
  ari = worlds.ari();
});

async function add(h: Harness, domain: string, port: number, extra: Record<string, unknown> = {}): Promise<any> {
  return expectData(await h.request("POST", "/v1/certificates", { body: { domain, port, ...extra } }), 201);
}

async function get(h: Harness, id: string): Promise<any> {
  return expectData(await h.request("GET", `/v1/certificates/${id}`), 200);
}

async function check(h: Harness, id: string): Promise<any> {
  return expectData(await h.request("POST", `/v1/certificates/${id}/check`), 200);
}

async function eventTypes(h: Harness, id: string): Promise<string[]> {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === id).reverse().map((e) => e.type);
}

const asked = (certId: string) => ari.requests.filter((r) => r.certId === certId).length;
const iso = (ms: number) => new Date(ms).toISOString();
/** RFC 3339 times are whole seconds here. */
const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;

describe("RFC 9773 certID", () => {
  test("is the RFC's own example: AKI 69:88:5B:…:C8:D4 and serial 00:87:65:43:21 give aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE", async () => {
    x509.cryptoProvider.set(globalThis.crypto);
    const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: "0087654321",
      subject: "CN=rfc9773.example",
      issuer: "CN=Example CA",
      notBefore: new Date(),
      notAfter: new Date(Date.now() + DAY),
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      publicKey: keys.publicKey,
      signingKey: keys.privateKey,
      extensions: [new x509.AuthorityKeyIdentifierExtension("69885B6B87464041E1B37B847BA0AE2CDE01C8D4")],
    });
    expect(ariCertId(new Certificate(new Uint8Array(cert.rawData)))).toBe("aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE");
  });

  test("keeps a serial's leading zero byte and agrees with an independent computation; a leaf without AKI has none", async () => {
    const { rsaIntermediate } = await testPki();
    const high = await createLeaf({ issuer: rsaIntermediate, dnsNames: ["high.example"], serial: "00f1e2d3c4" });
    expect(ariCertId(new Certificate(new Uint8Array(high.cert.rawData)))).toBe(certIdOf(high));
    expect(certIdOf(high).split(".")[1]).toBe(Buffer.from([0x00, 0xf1, 0xe2, 0xd3, 0xc4]).toString("base64url"));
    const selfSigned = await createLeaf({ dnsNames: ["self.example"] });
    expect(ariCertId(new Certificate(new Uint8Array(selfSigned.cert.rawData)))).toBeNull();
  });

  test("Retry-After is clamped to 1 minute-24 hours, and 6 hours when absent or unreadable", () => {
    const now = Date.now();
    expect(retryDelay("0", now)).toBe(MINUTE);
    expect(retryDelay("1000000000", now)).toBe(24 * HOUR);
    expect(retryDelay("3600", now)).toBe(HOUR);
    expect(retryDelay(undefined, now)).toBe(6 * HOUR);
    expect(retryDelay("soon", now)).toBe(6 * HOUR);
    expect(retryDelay(new Date(now + 2 * HOUR).toUTCString(), now)).toBeGreaterThan(HOUR);
    expect(retryDelay(new Date(now - HOUR).toUTCString(), now)).toBe(MINUTE);
    // delta-seconds of any length is read (more than a day is a day); what is neither it nor an HTTP-date is unreadable.
    expect(retryDelay("99999999999999", now)).toBe(24 * HOUR);
    for (const unreadable of ["-1", "1.5", "+60", "1 2", "-3600", "2026-12-01", "tomorrow 10am"]) expect({ unreadable, delay: retryDelay(unreadable, now) }).toEqual({ unreadable, delay: 6 * HOUR });
    // The other two forms of an HTTP-date (RFC 9110 §5.6.7).
    const later = new Date(now + 3 * HOUR);
    const [day, date, month, year, time] = later.toUTCString().replace(",", "").split(" ");
    const weekday = { Mon: "Monday", Tue: "Tuesday", Wed: "Wednesday", Thu: "Thursday", Fri: "Friday", Sat: "Saturday", Sun: "Sunday" }[day as "Mon"];
    for (const form of [`${weekday}, ${date}-${month}-${year!.slice(2)} ${time} GMT`, `${day} ${month} ${String(Number(date)).padStart(2, " ")} ${time} ${year}`]) {
      expect({ form, hours: Math.round(retryDelay(form, now) / HOUR) }).toEqual({ form, hours: 3 });
    }
  });
});

describe("the CA's suggested window", () => {
  test("sets the renewal deadline: source ari, window, explanationUrl, checkedAt; the status follows it", async () => {
    const w = await world();
    const { leaf, server } = await served(`window.${TEST_DOMAIN}`);
    // A usual window: about two thirds into the 90-day lifetime (its midpoint is 35 days from now).
    const start = whole(Date.now() + 48 * DAY);
    ari.answer(certIdOf(leaf), { kind: "window", start, end: start + 2 * DAY, explanationUrl: "https://ca.example/why" });
    const added = await add(w.h, `window.${TEST_DOMAIN}`, server.port);
    const got = await get(w.h, added.id);
    expect(got.renewal).toEqual({
      deadline: iso(start + 2 * DAY),
      source: "ari",
      window: { start: iso(start), end: iso(start + 2 * DAY) },
      explanationUrl: "https://ca.example/why",
      state: "not_due",
      checkedAt: iso(w.clock.now()),
    });
    expect(asked(certIdOf(leaf))).toBe(1);
    // At the window's end the certificate is overdue (the lifetime rule would say 57.5 days from now).
    w.clock.set(start + 2 * DAY);
    const later = await check(w.h, added.id);
    expect([later.status, later.statusReason, later.renewal.state]).toEqual(["expiring", "renewal_overdue", "overdue"]);
    expect(await eventTypes(w.h, added.id)).toEqual(["certificate.renewal_overdue"]);
  });

  test("one answer serves every certificate and organization that serves the leaf, and every process of the database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "certkeeper-ari-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const url = `file:${join(dir, "shared.db")}`;
    const storeA = await openLibsqlStore({ url });
    const storeB = await openLibsqlStore({ url });
    cleanups.push(() => storeA.close(), () => storeB.close());
    const clock = new FakeClock(Date.now());
    const a = await world({}, { store: storeA, clock });
    const { leaf, server } = await served(`shared.${TEST_DOMAIN}`);
    const start = whole(Date.now() + 45 * DAY);
    ari.answer(certIdOf(leaf), { kind: "window", start, end: start + DAY });
    const first = await add(a.h, `shared.${TEST_DOMAIN}`, server.port);
    const otherOrg = await a.h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
    const otherKey = await a.h.makeKey("owner", "live", otherOrg.id);
    const second = expectData(await a.h.request("POST", "/v1/certificates", { key: otherKey.key, body: { domain: `shared.${TEST_DOMAIN}`, port: server.port } }), 201);
    // Another process on the same database, with nothing in memory.
    const b = await world({}, { store: storeB, clock });
    const third = await add(b.h, `shared.${TEST_DOMAIN}`, server.port, { connectTo: "127.0.0.1" });
    expect(asked(certIdOf(leaf))).toBe(1);
    for (const [h, id, key] of [[a.h, first.id, undefined], [b.h, third.id, undefined], [a.h, second.id, otherKey.key]] as const) {
      const got = expectData(await h.request("GET", `/v1/certificates/${id}`, key ? { key } : {}), 200);
      expect([got.renewal.source, got.renewal.deadline]).toEqual(["ari", iso(start + DAY)]);
    }
  });

  test("asked again only after Retry-After (clamped: 0 waits 1 minute, 10^9 waits 24 hours; none waits 6 hours)", async () => {
    for (const [retryAfter, wait] of [["0", MINUTE], ["1000000000", 24 * HOUR], [null, 6 * HOUR], ["7200", 2 * HOUR]] as const) {
      const w = await world();
      const { leaf, server } = await served(`retry-${String(retryAfter)}.${TEST_DOMAIN}`.replace("null", "none"));
      const start = whole(Date.now() + 45 * DAY);
      ari.answer(certIdOf(leaf), { kind: "window", start, end: start + DAY, retryAfter });
      const added = await add(w.h, `retry-${String(retryAfter)}.${TEST_DOMAIN}`.replace("null", "none"), server.port);
      const t0 = w.clock.now();
      expect(asked(certIdOf(leaf))).toBe(1);
      w.clock.set(t0 + wait - SECOND);
      await check(w.h, added.id);
      expect({ retryAfter, asked: asked(certIdOf(leaf)) }).toEqual({ retryAfter, asked: 1 });
      w.clock.set(t0 + wait);
      await check(w.h, added.id);
      expect({ retryAfter, asked: asked(certIdOf(leaf)) }).toEqual({ retryAfter, asked: 2 });
    }
  });

  test("nothing is asked about an expired leaf, a leaf no longer served, with CERTKEEPER_ARI=off, or for an issuer without a directory", async () => {
    const expired = await served(`expired-ari.${TEST_DOMAIN}`, { notBefore: Date.now() - 90 * DAY, notAfter: Date.now() - DAY });
    ari.answer(certIdOf(expired.leaf), { kind: "window", start: Date.now(), end: Date.now() + DAY });
    const w = await world();
    await add(w.h, `expired-ari.${TEST_DOMAIN}`, expired.server.port);
    expect(asked(certIdOf(expired.leaf))).toBe(0);

    // Renewed: the old leaf's certID is never asked again, the new one's is.
    const { rsaIntermediate } = await testPki();
    const renewing = await served(`rotating.${TEST_DOMAIN}`);
    ari.answer(certIdOf(renewing.leaf), { kind: "window", start: Date.now() + 50 * DAY, end: Date.now() + 51 * DAY, retryAfter: "60" });
    const rotating = await add(w.h, `rotating.${TEST_DOMAIN}`, renewing.server.port);
    const next = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`rotating.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 90 * DAY) });
    ari.answer(certIdOf(next), { kind: "window", start: Date.now() + 60 * DAY, end: Date.now() + 61 * DAY });
    renewing.server.setCertificate(chainPem(next, rsaIntermediate), next.keyPem);
    w.clock.advance(2 * MINUTE);
    await check(w.h, rotating.id);
    w.clock.advance(2 * MINUTE);
    await check(w.h, rotating.id);
    expect([asked(certIdOf(renewing.leaf)), asked(certIdOf(next))]).toEqual([1, 1]);

    const off = await world({ ari: false });
    const quiet = await served(`off.${TEST_DOMAIN}`);
    ari.answer(certIdOf(quiet.leaf), { kind: "window", start: Date.now(), end: Date.now() + DAY });
    const offAdded = await add(off.h, `off.${TEST_DOMAIN}`, quiet.server.port);
    expect([asked(certIdOf(quiet.leaf)), (await get(off.h, offAdded.id)).renewal.source]).toEqual([0, "lifetime"]);

    const elsewhere = await world({ acmeDirectories: [{ issuer: "Some Other CA", url: ari.directoryUrl }] });
    const other = await served(`other-ca.${TEST_DOMAIN}`);
    ari.answer(certIdOf(other.leaf), { kind: "window", start: Date.now(), end: Date.now() + DAY });
    await add(elsewhere.h, `other-ca.${TEST_DOMAIN}`, other.server.port);
    expect(asked(certIdOf(other.leaf))).toBe(0);
  });
});

describe("a CA asking for early replacement", () => {
  test("a window moved into the past: one renewal_requested per serial and window end, status expiring (renewal_requested) under both policies, until a new leaf is served", async () => {
    const w = await world();
    const { rsaIntermediate } = await testPki();
    const { leaf, server } = await served(`revoking.${TEST_DOMAIN}`);
    const certId = certIdOf(leaf);
    const normal = whole(Date.now() + 40 * DAY);
    ari.answer(certId, { kind: "window", start: normal, end: normal + 2 * DAY, retryAfter: "60" });
    const renewalPolicy = await add(w.h, `revoking.${TEST_DOMAIN}`, server.port);
    const daysPolicy = await add(w.h, `revoking.${TEST_DOMAIN}`, server.port, { connectTo: "127.0.0.1", alertPolicy: "days" });
    expect((await get(w.h, renewalPolicy.id)).status).toBe("valid");

    // Before a mass revocation, the CA moves the window into the past.
    const past = whole(w.clock.now() - HOUR);
    ari.answer(certId, { kind: "window", start: past - HOUR, end: past, explanationUrl: "https://ca.example/incident" });
    w.clock.advance(2 * MINUTE);
    for (const id of [renewalPolicy.id, daysPolicy.id]) {
      const checked = await check(w.h, id);
      expect([checked.status, checked.statusReason, checked.renewal.state, checked.renewal.explanationUrl]).toEqual([
        "expiring",
        "renewal_requested",
        "requested",
        "https://ca.example/incident",
      ]);
      // The window had already ended: the request covers the overdue alert.
      expect(await eventTypes(w.h, id)).toEqual(["certificate.renewal_requested"]);
    }
    const list = expectData(await w.h.request("GET", "/v1/events?limit=10"), 200) as any[];
    expect(list.find((e) => e.certificateId === renewalPolicy.id).data).toMatchObject({
      window: { start: iso(past - HOUR), end: iso(past) },
      explanationUrl: "https://ca.example/incident",
    });
    // The same window again: no second event.
    w.clock.advance(2 * MINUTE);
    await check(w.h, renewalPolicy.id);
    expect(await eventTypes(w.h, renewalPolicy.id)).toEqual(["certificate.renewal_requested"]);
    expect(expectData(await w.h.request("GET", "/v1/certificates?renewal=requested"), 200).length).toBe(2);

    // Replaced: renewed, not_due again.
    const next = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`revoking.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 90 * DAY) });
    server.setCertificate(chainPem(next, rsaIntermediate), next.keyPem);
    const replaced = await check(w.h, renewalPolicy.id);
    expect([replaced.status, replaced.renewal.state]).toEqual(["valid", "not_due"]);
    expect(await eventTypes(w.h, renewalPolicy.id)).toEqual(["certificate.renewal_requested", "certificate.renewed"]);
  });

  test("a first window ending before the lifetime's midpoint is a request; a window ending in the future is announced, then overdue at its end", async () => {
    const w = await world();
    const { leaf, server } = await served(`early.${TEST_DOMAIN}`, { notBefore: Date.now() - 10 * DAY, notAfter: Date.now() + 80 * DAY });
    // Midpoint: 35 days from now. The CA asks for replacement within 3 days.
    const end = whole(Date.now() + 3 * DAY);
    ari.answer(certIdOf(leaf), { kind: "window", start: end - DAY, end });
    const added = await add(w.h, `early.${TEST_DOMAIN}`, server.port);
    expect(await eventTypes(w.h, added.id)).toEqual(["certificate.renewal_requested"]);
    w.clock.set(end);
    await check(w.h, added.id);
    // Still served at the window's end under the renewal policy: overdue too, still `requested` in state.
    expect(await eventTypes(w.h, added.id)).toEqual(["certificate.renewal_requested", "certificate.renewal_overdue"]);
    expect((await get(w.h, added.id)).renewal.state).toBe("requested");
  });
});

describe("a CA that misbehaves costs at most the time limit and 64 KiB, never changes a status, never raises an event", () => {
  const hostile = [
    ["trickles its answer a byte at a time", { kind: "trickle", everyMs: 200 }],
    ["never answers", { kind: "hang" }],
    ["floods 100 MB", { kind: "flood", bytes: 100 * 1024 * 1024 }],
    ["redirects", { kind: "redirect", location: "https://127.0.0.1:1/elsewhere" }],
    ["gives a window that ends before it starts", { kind: "raw", contentType: "application/json", body: JSON.stringify({ suggestedWindow: { start: "2030-01-02T00:00:00Z", end: "2030-01-01T00:00:00Z" } }) }],
    ["answers non-JSON", { kind: "raw", contentType: "text/html", body: "<html>maintenance</html>" }],
    ["answers a window without times", { kind: "raw", contentType: "application/json", body: JSON.stringify({ suggestedWindow: { start: "soon" } }) }],
    ["answers 500", { kind: "status", status: 500, body: "{}" }],
  ] as const;

  test.each(hostile)("a CA that %s", async (label, behaviour) => {
    const w = await world();
    const domain = `hostile-${label.split(" ")[0]}.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain);
    ari.answer(certIdOf(leaf), behaviour as never);
    const added = await add(w.h, domain, server.port);
    const got = await get(w.h, added.id);
    expect({ status: got.status, source: got.renewal.source, state: got.renewal.state, events: await eventTypes(w.h, added.id) }).toEqual({
      status: "valid",
      source: "lifetime",
      state: "not_due",
      events: [],
    });
    expect(asked(certIdOf(leaf))).toBe(1);
    // Not asked again at the next checks: 6 hours after an error.
    w.clock.advance(5 * HOUR);
    await check(w.h, added.id);
    expect(asked(certIdOf(leaf))).toBe(1);
    w.clock.advance(HOUR);
    await check(w.h, added.id);
    expect(asked(certIdOf(leaf))).toBe(2);
    const metrics = await scrape(w.h);
    expect(metrics).toMatch(/^certkeeper_ari_requests_total\{result="error"\} 2$/m);
  });

  test("a CA that runs out of time is not asked about its other leaves for a minute (their checks do not wait it out); each is asked at its first check after that", async () => {
    const w = await world();
    const slow = await served(`silent-slow.${TEST_DOMAIN}`);
    const other = await served(`silent-other.${TEST_DOMAIN}`);
    const start = whole(Date.now() + 48 * DAY);
    ari.answer(certIdOf(slow.leaf), { kind: "hang" });
    ari.answer(certIdOf(other.leaf), { kind: "window", start, end: start + 2 * DAY });
    await add(w.h, `silent-slow.${TEST_DOMAIN}`, slow.server.port);
    expect(asked(certIdOf(slow.leaf))).toBe(1);
    // Within the minute: the other leaf's check does not ask (the lifetime rule meanwhile).
    w.clock.advance(59 * SECOND);
    const added = await add(w.h, `silent-other.${TEST_DOMAIN}`, other.server.port);
    expect([(await get(w.h, added.id)).renewal.source, asked(certIdOf(other.leaf))]).toEqual(["lifetime", 0]);
    // Its next check after the minute asks, and the window counts.
    w.clock.advance(2 * SECOND);
    const later = await check(w.h, added.id);
    expect([later.renewal.source, later.renewal.deadline, asked(certIdOf(other.leaf))]).toEqual(["ari", iso(start + 2 * DAY), 1]);
    // Only requests made are counted: the hang, then the answer.
    const metrics = await scrape(w.h);
    expect(metrics).toMatch(/^certkeeper_ari_requests_total\{result="error"\} 1$/m);
    expect(metrics).toMatch(/^certkeeper_ari_requests_total\{result="ok"\} 1$/m);
  });

  test("an error after a good answer keeps the good window", async () => {
    const w = await world();
    const { leaf, server } = await served(`flaky-ca.${TEST_DOMAIN}`);
    const start = whole(Date.now() + 45 * DAY);
    ari.answer(certIdOf(leaf), { kind: "window", start, end: start + DAY, retryAfter: "60" });
    const added = await add(w.h, `flaky-ca.${TEST_DOMAIN}`, server.port);
    ari.answer(certIdOf(leaf), { kind: "status", status: 503, body: "" });
    w.clock.advance(2 * MINUTE);
    const checked = await check(w.h, added.id);
    expect([asked(certIdOf(leaf)), checked.renewal.source, checked.renewal.deadline, checked.status]).toEqual([2, "ari", iso(start + DAY), "valid"]);
    expect(await eventTypes(w.h, added.id)).toEqual([]);
  });

  test("a directory that is not JSON, or names no renewalInfo: the lifetime rule, no renewal information asked", async () => {
    for (const body of ["not json", JSON.stringify({ newNonce: "https://x/nonce" })]) {
      ari.directory(body);
      try {
        const w = await world();
        const domain = `directory-${body.length}.${TEST_DOMAIN}`;
        const { leaf, server } = await served(domain);
        ari.answer(certIdOf(leaf), { kind: "window", start: Date.now(), end: Date.now() + DAY });
        const added = await add(w.h, domain, server.port);
        expect([(await get(w.h, added.id)).renewal.source, asked(certIdOf(leaf))]).toEqual(["lifetime", 0]);
      } finally {
        ari.directory(null);
      }
    }
  });

  test("a window ending after notAfter is an error: the lifetime's deadline, one renewal_overdue then, one expired at expiry", async () => {
    const w = await world();
    const domain = `late-window.${TEST_DOMAIN}`;
    const now = whole(Date.now());
    const notBefore = now - 10 * DAY;
    const notAfter = now + 80 * DAY;
    const { leaf, server } = await served(domain, { notBefore, notAfter });
    ari.answer(certIdOf(leaf), { kind: "window", start: notAfter - DAY, end: notAfter + 5 * DAY, retryAfter: "86400" });
    const added = await add(w.h, domain, server.port);
    const lifetimeDeadline = notBefore + Math.ceil((notAfter - notBefore) * 0.75);
    expect((await get(w.h, added.id)).renewal).toMatchObject({ source: "lifetime", window: null, deadline: iso(lifetimeDeadline), state: "not_due" });
    w.clock.set(lifetimeDeadline);
    await w.h.core.services.scheduler.runDue();
    w.clock.set(notAfter + SECOND);
    await w.h.core.services.scheduler.runDue();
    await check(w.h, added.id);
    expect(await eventTypes(w.h, added.id)).toEqual(["certificate.renewal_overdue", "certificate.expired"]);
  });

  // February 30th, hour 24 and a time without its offset, inside the leaf's lifetime: ari_hostile_answers.test.ts.
  test("a time that is no real RFC 3339 date-time (a year before 0000 once in UTC) makes the answer malformed: the lifetime rule", async () => {
    const w = await world();
    for (const [label, start, end] of [
      // Year 0000 an hour east of UTC is a time of year -1, which no RFC 3339 date-time shows.
      ["year0", "0000-01-01T00:00:00+01:00", iso(whole(Date.now() + 60 * DAY))],
    ] as const) {
      const domain = `bad-date-${label}.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain);
      ari.answer(certIdOf(leaf), { kind: "raw", contentType: "application/json", body: JSON.stringify({ suggestedWindow: { start, end } }) });
      const added = await add(w.h, domain, server.port);
      expect({ label, renewal: (await get(w.h, added.id)).renewal }).toMatchObject({ label, renewal: { source: "lifetime", window: null } });
    }
  });

  test("a directory that stops publishing renewalInfo gives no window any more: the lifetime rule", async () => {
    const w = await world();
    const domain = `dropped-ari.${TEST_DOMAIN}`;
    const now = whole(Date.now());
    const { leaf, server } = await served(domain);
    ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY, retryAfter: "3600" });
    const added = await add(w.h, domain, server.port);
    expect((await get(w.h, added.id)).renewal).toMatchObject({ source: "ari", deadline: iso(now + 52 * DAY) });
    ari.directory(JSON.stringify({ newNonce: "https://ca.example/nonce", newAccount: "https://ca.example/account", newOrder: "https://ca.example/order" }));
    try {
      w.clock.set(now + 2 * DAY); // past the answer's Retry-After and the directory's day in memory
      expect((await check(w.h, added.id)).renewal).toMatchObject({ source: "lifetime", window: null, checkedAt: null });
    } finally {
      ari.directory(null);
    }
  });

  test("a renewalInfo URL with a query string: the certID goes into its path, the query stays", async () => {
    const w = await world();
    const domain = `query-ari.${TEST_DOMAIN}`;
    const now = whole(Date.now());
    const { leaf, server } = await served(domain);
    ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY, retryAfter: "3600" });
    ari.directory(JSON.stringify({ newNonce: "https://ca.example/nonce", renewalInfo: `${ari.renewalInfoUrl}/?tenant=a` }));
    try {
      const added = await add(w.h, domain, server.port);
      expect((await get(w.h, added.id)).renewal).toMatchObject({ source: "ari", deadline: iso(now + 52 * DAY) });
    } finally {
      ari.directory(null);
    }
  });
});

async function scrape(h: Harness): Promise<string> {
  const { scrapeMetrics } = await import("../core/metrics/mod.ts");
  let text = "";
  for await (const chunk of scrapeMetrics({ store: h.store, metrics: h.core.services.metrics, now: Date.now() })) text += chunk;
  return text;
}
