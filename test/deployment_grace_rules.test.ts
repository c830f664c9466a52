/**
 * Issued but not deployed (CONTRACT §20), rules no other test held: an issuance every endpoint serves
 * before its grace ends is never announced; with three issuances in a row, the first one's grace still
 * decides when a node left behind is named; and the names compared are DNS names as DNS compares them
 * (case, a trailing dot, duplicates, and IP addresses left out).
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, SECOND } from "../core/base/mod.ts";
import { namesKey } from "../core/deployment/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

type Event = { type: string; createdAt: string; data: { certificate?: { id: string }; deployment?: { issuedAt: string; seenAt: string }; lagging?: string[] } };

async function world(label: string) {
  const domain = `${label}.${TEST_DOMAIN}`;
  const { rsaIntermediate } = await testPki();
  const clock = new FakeClock(Date.now());
  const h = await createHarness({ clock, config: { alertPolicy: "renewal", revocation: false, ari: false, tlsTimeoutMs: 1000 } });
  cleanups.push(() => h.close());
  clock.set(Math.floor(clock.now() / 1000) * 1000);
  const start = clock.now();
  const old = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(start - 10 * DAY), notAfter: new Date(start + 80 * DAY) });
  const server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem });
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201) as { id: string };
  const scope = { organizationId: h.org.id, mode: "live" as const };
  /** What a watch notes for an issuance of these names, 90 days long: a 24-hour grace from now. */
  const issue = async (issuedAt: number) => {
    const deployment = { issuedAt, notAfter: issuedAt + 90 * DAY, fingerprintSha256: null, issuer: "certkeeper intermediates", seenAt: clock.now(), announced: false };
    expect(await h.store.certificates.noteIssuance(scope, { namesKey: namesKey([domain]), deployment })).toBe(1);
  };
  const runUntil = async (until: number) => {
    while (clock.now() < until) {
      clock.set(Math.min(until, clock.now() + 10 * 60 * SECOND));
      await h.core.services.scheduler.runDue();
    }
  };
  const notDeployed = async () => {
    const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as Event[];
    return list.filter((e) => e.type === "certificate.not_deployed" && e.data.certificate?.id === added.id).reverse();
  };
  return { h, clock, start, domain, rsaIntermediate, server, added, issue, runUntil, notDeployed };
}

test("an issuance every endpoint serves before its grace ends is never announced, even once the grace has passed", async () => {
  const w = await world("served-in-time");
  const issuedAt = w.start - HOUR;
  await w.issue(issuedAt);
  await w.runUntil(w.start + 2 * HOUR);
  expect(expectData(await w.h.request("GET", `/v1/certificates/${w.added.id}`), 200).deployment).not.toBeNull();
  // The host now serves the new certificate, well within the grace.
  const port = w.server.port;
  await w.server.close();
  const fresh = await createLeaf({ issuer: w.rsaIntermediate, dnsNames: [w.domain], notBefore: new Date(issuedAt), notAfter: new Date(issuedAt + 90 * DAY) });
  const rolled = await startTlsServer({ cert: chainPem(fresh, w.rsaIntermediate), key: fresh.keyPem, port });
  cleanups.push(() => rolled.close());
  // Checked now (as "Check now" does), within the grace: every endpoint serves it.
  expect(expectData(await w.h.request("POST", `/v1/certificates/${w.added.id}/check`), 200).deployment).toBeNull();
  expect(expectData(await w.h.request("GET", `/v1/certificates/${w.added.id}`), 200).deployment).toBeNull();
  // Past the grace: nothing to announce, nobody lags.
  await w.runUntil(w.start + 30 * HOUR);
  expect(await w.notDeployed()).toEqual([]);
  expect(expectData(await w.h.request("GET", `/v1/certificates/${w.added.id}`), 200).deployment).toBeNull();
});

test("three issuances in a row: the node still behind is named when the first one's grace ends, not a grace after the second", async () => {
  const w = await world("three-in-a-row");
  cleanups.push(() => w.server.close());
  const first = w.start - HOUR;
  await w.issue(first);
  await w.runUntil(w.start + 2 * HOUR);
  await w.issue(w.clock.now() - HOUR);
  await w.runUntil(w.start + 4 * HOUR);
  await w.issue(w.clock.now() - HOUR);
  // The first issuance was recorded at `start`: its grace (24 hours) ends at start + 24h.
  await w.runUntil(w.start + 25 * HOUR);
  const early = await w.notDeployed();
  expect(early.map((e) => Date.parse(e.data.deployment!.issuedAt))).toEqual([first]);
  expect(early[0]!.data.lagging).toEqual(["127.0.0.1"]);
  expect(Date.parse(early[0]!.createdAt)).toBeGreaterThanOrEqual(w.start + 24 * HOUR);
});

test("the names compared are DNS names as DNS compares them: case, a trailing dot and duplicates do not matter; IP addresses are left out", () => {
  const issued = namesKey(["example.com", "www.example.com"]);
  expect(namesKey(["WWW.Example.COM", "example.com"])).toBe(issued);
  expect(namesKey(["www.example.com.", "example.com."])).toBe(issued);
  expect(namesKey(["example.com", "www.example.com", "WWW.example.com"])).toBe(issued);
  expect(namesKey(["example.com", "192.0.2.10", "www.example.com"])).toBe(issued);
  expect(namesKey(["example.com", "2001:db8::1", "www.example.com"])).toBe(issued);
  // Another set of names is another key.
  expect(namesKey(["example.com"])).not.toBe(issued);
});
