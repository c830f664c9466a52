/**
 * A pending deployment (CONTRACT §20) replaced by a later issuance before it was judged: an endpoint
 * still serving a leaf older than the first issuance when the first one's grace ends is announced
 * then, for the first issuance, not a whole grace later for the second. A later issuance recorded
 * during an outage that spanned the first one's grace (or soon after the first) must not put off
 * naming a node left behind. Each issuance is announced once; one every endpoint serves is forgotten.
 * An issuance every endpoint serves before its grace ends is never announced; with three issuances in a
 * row, the first one's grace still decides when a node left behind is named; and the names compared
 * are DNS names as DNS compares them (case, a trailing dot, duplicates, and IP addresses left out).
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
  // Whole seconds, as X.509 times and the API's are.
  clock.set(Math.floor(clock.now() / 1000) * 1000);
  const start = clock.now();
  const old = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(start - 10 * DAY), notAfter: new Date(start + 80 * DAY) });
  const server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem });
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201) as { id: string };
  const scope = { organizationId: h.org.id, mode: "live" as const };
  /** What a watch notes for an issuance of these names (as the CT poller does), 90 days long: a 24-hour grace. */
  const issue = async (issuedAt: number) => {
    const deployment = { issuedAt, notAfter: issuedAt + 90 * DAY, fingerprintSha256: null, issuer: "certkeeper intermediates", seenAt: clock.now(), announced: false };
    expect(await h.store.certificates.noteIssuance(scope, { namesKey: namesKey([domain]), deployment })).toBe(1);
  };
  /** Runs the scheduler every 10 minutes up to `until`. */
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
  return { h, clock, start, domain, old, rsaIntermediate, server, added, issue, runUntil, notDeployed };
}

test("a later issuance recorded during an outage that spanned the first one's grace: the node still behind is announced for the first at the first check back", async () => {
  const w = await world("superseded-outage");
  const first = w.start - HOUR;
  await w.issue(first);
  const port = w.server.port;
  await w.server.close();
  await w.runUntil(w.start + 30 * HOUR);
  expect(await w.notDeployed()).toHaveLength(0);
  // A second issuance is recorded while the host is still silent.
  const second = w.clock.now() - HOUR;
  await w.issue(second);
  const secondSeenAt = w.clock.now();

  // The host answers again, still with the old leaf: the first issuance's grace is long past.
  const back = await startTlsServer({ cert: chainPem(w.old, w.rsaIntermediate), key: w.old.keyPem, port });
  cleanups.push(() => back.close());
  const answeredFrom = w.clock.now();
  await w.runUntil(answeredFrom + 2 * HOUR);
  const early = await w.notDeployed();
  expect(early.map((e) => Date.parse(e.data.deployment!.issuedAt))).toEqual([first]);
  expect(early[0]!.data.lagging).toEqual(["127.0.0.1"]);
  expect(Date.parse(early[0]!.createdAt)).toBeLessThanOrEqual(answeredFrom + 2 * HOUR);

  // The second issuance is announced in its turn, a grace after it was recorded; each once.
  await w.runUntil(secondSeenAt + 26 * HOUR);
  const all = await w.notDeployed();
  expect(all.map((e) => Date.parse(e.data.deployment!.issuedAt))).toEqual([first, second]);
  expect(Date.parse(all[1]!.createdAt)).toBeGreaterThanOrEqual(secondSeenAt + 24 * HOUR);
  const deployment = expectData(await w.h.request("GET", `/v1/certificates/${w.added.id}`), 200).deployment;
  expect(Date.parse(deployment.issuedAt)).toBe(second);
});

test("a later issuance recorded within the first one's grace, the host answering: the first is announced when its own grace ends", async () => {
  const w = await world("superseded-soon");
  cleanups.push(() => w.server.close());
  const first = w.start - HOUR;
  await w.issue(first);
  await w.runUntil(w.start + 6 * HOUR);
  const second = w.clock.now() - HOUR;
  await w.issue(second);
  const secondSeenAt = w.clock.now();

  await w.runUntil(w.start + 25 * HOUR);
  const early = await w.notDeployed();
  expect(early).toHaveLength(1);
  expect(Date.parse(early[0]!.data.deployment!.issuedAt)).toBe(first);
  expect(Date.parse(early[0]!.createdAt)).toBeGreaterThanOrEqual(w.start + 24 * HOUR);

  await w.runUntil(secondSeenAt + 26 * HOUR);
  const all = await w.notDeployed();
  expect(all.map((e) => Date.parse(e.data.deployment!.issuedAt))).toEqual([first, second]);
});

test("the replaced issuance served everywhere before its grace ends is forgotten without a word; the later one is announced in its turn", async () => {
  const w = await world("superseded-served");
  const first = w.start - HOUR;
  await w.issue(first);
  await w.runUntil(w.start + 2 * HOUR);
  const second = w.clock.now() - 30 * 60 * SECOND;
  await w.issue(second);
  const secondSeenAt = w.clock.now();
  // The host now serves a leaf of the first issuance (issued at `first`): behind the second only.
  const port = w.server.port;
  await w.server.close();
  const domain = `superseded-served.${TEST_DOMAIN}`;
  const mid = await createLeaf({ issuer: w.rsaIntermediate, dnsNames: [domain], notBefore: new Date(first), notAfter: new Date(first + 90 * DAY) });
  const rolled = await startTlsServer({ cert: chainPem(mid, w.rsaIntermediate), key: mid.keyPem, port });
  cleanups.push(() => rolled.close());

  await w.runUntil(w.start + 25 * HOUR);
  expect(await w.notDeployed()).toHaveLength(0);
  await w.runUntil(secondSeenAt + 26 * HOUR);
  const all = await w.notDeployed();
  expect(all.map((e) => Date.parse(e.data.deployment!.issuedAt))).toEqual([second]);
});

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
