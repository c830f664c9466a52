/**
 * The ACME directory a CA's renewal information is found through (CONTRACT §19): its `renewalInfo` URL
 * is kept up to 24 hours (not read again for every leaf), a failing directory is not kept (the leaf is
 * asked again 6 hours later, and then the directory is read again), and a `renewalInfo` that is no URL
 * at all is the CA's error like any other: the lifetime rule, the certificate added and checked as usual.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import "reflect-metadata";
import { DAY, HOUR, MINUTE, SECOND } from "../core/base/mod.ts";
import { expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { certIdOf, type AriServer } from "./support/ari_server.ts";
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
async function check(h: Harness, id: string): Promise<any> {
  return expectData(await h.request("POST", `/v1/certificates/${id}/check`), 200);
}
const asked = (certId: string) => ari.requests.filter((r) => r.certId === certId).length;
const directoryReads = () => ari.requests.filter((r) => r.path === "/acme/directory").length;
const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;

describe("the ACME directory (CONTRACT §19)", () => {
  test("its renewalInfo URL is kept: three leaves of the CA, asked about within the day, read the directory once", async () => {
    const w = await world();
    const now = whole(Date.now());
    const before = directoryReads();
    for (const n of [1, 2, 3]) {
      const domain = `dir-kept-${n}.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain);
      ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY });
      const added = await add(w.h, domain, server.port);
      expect([(await get(w.h, added.id)).renewal.source, asked(certIdOf(leaf))]).toEqual(["ari", 1]);
      w.clock.advance(HOUR);
    }
    expect(directoryReads() - before).toBe(1);
  });

  test("a directory that failed is not kept: once it answers again, the leaf's next question (6 hours on) reads it and gets the window", async () => {
    const w = await world();
    const now = whole(Date.now());
    const domain = `dir-recovers.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain);
    ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY });
    ari.directory("temporarily unavailable", 503);
    let added: any;
    try {
      added = await add(w.h, domain, server.port);
      expect([(await get(w.h, added.id)).renewal.source, asked(certIdOf(leaf))]).toEqual(["lifetime", 0]);
    } finally {
      ari.directory(null);
    }
    w.clock.advance(6 * HOUR + MINUTE);
    const checked = await check(w.h, added.id);
    expect([checked.renewal.source, checked.renewal.deadline, asked(certIdOf(leaf))]).toEqual(["ari", new Date(now + 52 * DAY).toISOString(), 1]);
  });

  test("a renewalInfo that is no URL is the CA's error: the certificate is added and valid, the lifetime rule, no event", async () => {
    ari.directory(JSON.stringify({ newNonce: "https://ca.example/nonce", renewalInfo: "not a url at all" }));
    try {
      const w = await world();
      const now = whole(Date.now());
      const domain = `dir-not-url.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain);
      ari.answer(certIdOf(leaf), { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY });
      const added = await add(w.h, domain, server.port);
      expect(added.status).toBe("valid");
      expect([(await get(w.h, added.id)).renewal.source, asked(certIdOf(leaf))]).toEqual(["lifetime", 0]);
      const events = expectData(await w.h.request("GET", "/v1/events?limit=100"), 200) as any[];
      expect(events.filter((e) => e.certificateId === added.id)).toEqual([]);
    } finally {
      ari.directory(null);
    }
  });
});
