/**
 * A CA's renewal information answers that certkeeper must not use (CONTRACT §19, docs/renewal.md "A CA
 * that misbehaves" and "The CA's explanationURL"), each inside the leaf's lifetime so that only the rule
 * under test refuses them: times that are no real RFC 3339 date-times, answers that are not HTTP 200,
 * answers over 64 KiB, a window ending at the expiry, a directory that is not HTTP 200, and
 * explanation URLs that are not http(s) or too long.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import "reflect-metadata";
import { DAY, SECOND } from "../core/base/mod.ts";
import { expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { certIdOf, rfc3339, type AriServer } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";

setDefaultTimeout(60_000);

const worlds = ariWorlds();
const { world, served } = worlds;
let ari: AriServer;
beforeAll(() => {
  ari = worlds.ari();
});

async function add(h: Harness, domain: string, port: number): Promise<any> {
  return expectData(await h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
}
async function get(h: Harness, id: string): Promise<any> {
  return expectData(await h.request("GET", `/v1/certificates/${id}`), 200);
}
async function eventTypes(h: Harness, id: string): Promise<string[]> {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === id).map((e) => e.type);
}
const asked = (certId: string) => ari.requests.filter((r) => r.certId === certId).length;
const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe("times that are no RFC 3339 date-time, inside the leaf's lifetime, make the answer malformed", () => {
  test("February 30th, hour 24 and a time without its offset: the lifetime rule, no event", async () => {
    const w = await world();
    const now = whole(Date.now());
    // A lifetime long enough to hold next year's February 30th (read by Date.parse as March 1st or 2nd).
    const notBefore = now - 10 * DAY;
    const notAfter = now + 420 * DAY;
    const nextYear = new Date(now).getUTCFullYear() + 1;
    for (const [label, start, end] of [
      ["feb30", `${nextYear}-02-30T00:00:00Z`, `${nextYear}-03-05T00:00:00Z`],
      ["hour24", `${day(now + 60 * DAY)}T24:00:00Z`, rfc3339(now + 65 * DAY)],
      ["no-offset", `${day(now + 60 * DAY)}T00:00:00`, `${day(now + 62 * DAY)}T00:00:00`],
    ] as const) {
      const domain = `bad-time-${label}.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain, { notBefore, notAfter });
      ari.answer(certIdOf(leaf), { kind: "raw", contentType: "application/json", body: JSON.stringify({ suggestedWindow: { start, end } }) });
      const added = await add(w.h, domain, server.port);
      expect(asked(certIdOf(leaf))).toBe(1);
      const renewal = (await get(w.h, added.id)).renewal;
      expect({ label, source: renewal.source, window: renewal.window, status: added.status }).toEqual({ label, source: "lifetime", window: null, status: "valid" });
      expect(await eventTypes(w.h, added.id)).toEqual([]);
    }
  });

  test("control: the same shapes written as real RFC 3339 times are a window", async () => {
    const w = await world();
    const now = whole(Date.now());
    const domain = `good-time.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain, { notBefore: now - 10 * DAY, notAfter: now + 420 * DAY });
    const start = `${day(now + 300 * DAY)}T00:00:00Z`;
    const end = `${day(now + 302 * DAY)}T00:00:00+00:00`;
    ari.answer(certIdOf(leaf), { kind: "raw", contentType: "application/json", body: JSON.stringify({ suggestedWindow: { start, end } }) });
    const added = await add(w.h, domain, server.port);
    expect((await get(w.h, added.id)).renewal).toMatchObject({ source: "ari", deadline: new Date(Date.parse(end)).toISOString() });
  });
});

describe("answers that are not the CA's HTTP 200 RenewalInfo", () => {
  test("a 302 or a 203 carrying a good window in its body is not read (no redirect followed): the lifetime rule", async () => {
    const w = await world();
    const now = whole(Date.now());
    for (const status of [302, 203]) {
      const domain = `status-${status}.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain);
      const body = JSON.stringify({ suggestedWindow: { start: rfc3339(now + 50 * DAY), end: rfc3339(now + 52 * DAY) } });
      ari.answer(certIdOf(leaf), { kind: "status", status, body });
      const added = await add(w.h, domain, server.port);
      expect(asked(certIdOf(leaf))).toBe(1);
      expect({ status, renewal: (await get(w.h, added.id)).renewal }).toMatchObject({ status, renewal: { source: "lifetime", window: null } });
    }
  });

  test("an answer over 64 KiB is an error, even when it is a good window followed by blanks: the lifetime rule", async () => {
    const w = await world();
    const now = whole(Date.now());
    for (const [label, body] of [
      ["blanks-after", JSON.stringify({ suggestedWindow: { start: rfc3339(now + 50 * DAY), end: rfc3339(now + 52 * DAY) } }) + " ".repeat(80 * 1024)],
      ["blanks-inside", `{"suggestedWindow":${" ".repeat(80 * 1024)}{"start":"${rfc3339(now + 50 * DAY)}","end":"${rfc3339(now + 52 * DAY)}"}}`],
    ] as const) {
      const domain = `oversized-${label}.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain);
      ari.answer(certIdOf(leaf), { kind: "raw", contentType: "application/json", body });
      const added = await add(w.h, domain, server.port);
      expect(asked(certIdOf(leaf))).toBe(1);
      expect({ label, renewal: (await get(w.h, added.id)).renewal }).toMatchObject({ label, renewal: { source: "lifetime", window: null } });
    }
  });

  test("a window ending at the very moment the leaf expires names no deadline: the lifetime rule", async () => {
    const w = await world();
    const now = whole(Date.now());
    const notBefore = now - 10 * DAY;
    const notAfter = now + 80 * DAY;
    const domain = `end-at-expiry.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain, { notBefore, notAfter });
    ari.answer(certIdOf(leaf), { kind: "window", start: notAfter - 2 * DAY, end: notAfter });
    const added = await add(w.h, domain, server.port);
    expect(asked(certIdOf(leaf))).toBe(1);
    expect((await get(w.h, added.id)).renewal).toMatchObject({
      source: "lifetime",
      window: null,
      deadline: new Date(notBefore + Math.ceil((notAfter - notBefore) * 0.75)).toISOString(),
    });
  });

  test("a directory that answers HTTP 500 with a directory's body is not used: no renewal information asked", async () => {
    ari.directory(JSON.stringify({ newNonce: "https://ca.example/nonce", renewalInfo: ari.renewalInfoUrl }), 500);
    try {
      const w = await world();
      const now = whole(Date.now());
      const domain = `directory-500.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain);
      ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY });
      const added = await add(w.h, domain, server.port);
      expect([(await get(w.h, added.id)).renewal.source, asked(certIdOf(leaf))]).toEqual(["lifetime", 0]);
    } finally {
      ari.directory(null);
    }
  });
});

describe("the CA's explanationURL (docs/renewal.md: only http and https, at most 2,048 characters)", () => {
  test("a javascript: or data: URL, or an https URL over 2,048 characters, is no explanation; the window still counts", async () => {
    const w = await world();
    const now = whole(Date.now());
    const long = `https://ca.example/${"a".repeat(2100)}`;
    for (const [label, explanationUrl] of [
      ["javascript", "javascript:alert(document.cookie)"],
      ["data", "data:text/html,<script>alert(1)</script>"],
      ["long", long],
    ] as const) {
      const domain = `explanation-${label}.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain);
      ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY, explanationUrl });
      const added = await add(w.h, domain, server.port);
      expect({ label, renewal: (await get(w.h, added.id)).renewal }).toMatchObject({ label, renewal: { source: "ari", explanationUrl: null } });
    }
  });

  test("control: an https URL of 2,048 characters is kept as written", async () => {
    const w = await world();
    const now = whole(Date.now());
    const url = `https://ca.example/${"b".repeat(2048 - "https://ca.example/".length)}`;
    const domain = `explanation-2048.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain);
    ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY, explanationUrl: url });
    const added = await add(w.h, domain, server.port);
    expect((await get(w.h, added.id)).renewal).toMatchObject({ source: "ari", explanationUrl: url });
  });
});
