/**
 * Issued but not deployed (CONTRACT §20), end to end: a Certificate Transparency search service
 * (Cert Spotter's issuances API, test/support/ct_server.ts) announces certificates the test PKI issued;
 * real TLS servers on several loopback addresses serve the old and the new one and are swapped one by
 * one, as a load balancer's pools or a CDN's nodes are. The clock is a FakeClock started at the real
 * time (the grace is hours); one test runs in real time with a certificate whose grace is seconds.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, MINUTE, SECOND } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);

let ct: CtServer;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
beforeAll(async () => {
  ct = await startCtServer();
  ct.pageSize = 50;
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await ct.close();
});

const ADDRESSES = ["127.0.0.1", "127.0.0.2", "127.0.0.3"];

interface World {
  h: Harness;
  clock: FakeClock | null;
  hook: HttpReceiver;
  settle(): Promise<void>;
  /** Polls every watch now, as CERTKEEPER_CT_INTERVAL would. */
  poll(): Promise<void>;
}

async function world(domain: string, config: Partial<Config> = {}, clock: FakeClock | null = new FakeClock(Date.now())): Promise<World> {
  const { root } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const full: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [
      { pattern: domain, address: ADDRESSES[0]!, addresses: ADDRESSES },
      { pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1", addresses: ["127.0.0.1"] },
    ],
    tlsTimeoutMs: 2000,
    deliveryRetryMs: [1000],
    logLevel: "error",
    revocation: false,
    ctUrl: ct.url,
    ctIntervalMs: HOUR,
    ...config,
  };
  const transports = createTransports(full, trust);
  const h = await createHarness({ config: full, transports, trust, ...(clock ? { clock } : {}), random: () => 0.5 });
  const hook = await startHttpReceiver();
  cleanups.push(() => hook.close(), () => transports.close(), () => h.close());
  expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Hook", config: { url: `${hook.url}/hook` } } }), 201);
  return {
    h,
    clock,
    hook,
    async settle() {
      await h.core.services.scheduler.runDue();
      await h.core.services.deliveries!.loop.runDue();
    },
    async poll() {
      for (const watch of expectData(await h.request("GET", "/v1/watches?limit=100"), 200) as any[]) {
        expectData(await h.request("POST", `/v1/watches/${watch.id}/poll`), 200);
      }
      await runWatches(h);
    },
  };
}

/** A leaf for `names` from the test PKI's RSA intermediate, valid from `notBefore` for `lifetime`. */
async function leaf(names: string[], notBefore: number, lifetime = 90 * DAY, serial?: string): Promise<Issued> {
  const { rsaIntermediate } = await testPki();
  return createLeaf({ issuer: rsaIntermediate, dnsNames: names, notBefore: new Date(notBefore), notAfter: new Date(notBefore + lifetime), serial });
}

/** The same certificate served on every address, on one port. */
async function pool(issued: Issued): Promise<TlsTestServer[]> {
  const { rsaIntermediate } = await testPki();
  const first = await startTlsServer({ cert: chainPem(issued, rsaIntermediate), key: issued.keyPem, host: ADDRESSES[0] });
  const servers = [first];
  for (const host of ADDRESSES.slice(1)) servers.push(await startTlsServer({ cert: chainPem(issued, rsaIntermediate), key: issued.keyPem, host, port: first.port }));
  cleanups.push(() => Promise.all(servers.map((s) => s.close())));
  return servers;
}

/** Polls the watches that are due now (the poller is a work loop behind the services' face). */
function runWatches(h: Harness): Promise<number> {
  return (h.core.services.watches as unknown as { runDue(): Promise<number> }).runDue();
}

async function install(server: TlsTestServer, issued: Issued): Promise<void> {
  const { rsaIntermediate } = await testPki();
  server.setCertificate(chainPem(issued, rsaIntermediate), issued.keyPem);
}

async function logged(issued: Issued): Promise<void> {
  const { rsaIntermediate } = await testPki();
  ct.log(issued, rsaIntermediate);
}

async function events(h: Harness, certificateId: string) {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === certificateId).reverse();
}

const fingerprint = (issued: Issued) =>
  new Bun.CryptoHasher("sha256").update(new Uint8Array(issued.cert.rawData)).digest("hex").toUpperCase().match(/../g)!.join(":");
const iso = (ms: number) => new Date(Math.floor(ms / SECOND) * SECOND).toISOString();

describe("an issuance not yet served everywhere", () => {
  for (const alertPolicy of ["renewal", "days"] as const) {
    test(`${alertPolicy} policy: deployment shows what serves it; one not_deployed after the grace names the lagging addresses; gone once all serve it`, async () => {
      const domain = `lb-${alertPolicy}.deploy.${TEST_DOMAIN}`;
      const w = await world(domain, { alertPolicy });
      const now = w.clock!.now();
      const names = [domain, `www.${domain}`];
      const old = await leaf(names, now - 30 * DAY, 90 * DAY, "0d01");
      const servers = await pool(old);
      const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: servers[0]!.port } }), 201);
      expect(Object.keys(added)).not.toContain("deployment");
      expectData(await w.h.request("POST", "/v1/watches", { body: { domain: `deploy.${TEST_DOMAIN}` } }), 201);
      await w.poll();

      // The ACME client renews: the CA logs it; one pool of three is updated.
      const fresh = await leaf([`www.${domain}`, domain], now - HOUR, 90 * DAY, "0d02");
      await logged(fresh);
      w.clock!.advance(MINUTE);
      await w.poll();
      const seenAt = w.clock!.now();
      const pending = {
        issuedAt: iso(now - HOUR),
        fingerprintSha256: fingerprint(fresh),
        notAfter: iso(now - HOUR + 90 * DAY),
        issuer: "certkeeper intermediates",
        seenAt: new Date(seenAt).toISOString(),
        servedBy: 0,
        endpoints: 3,
      };
      expect(expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200).deployment).toEqual(pending);
      await install(servers[0]!, fresh);
      const checked = expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
      expect(checked.deployment).toEqual({ ...pending, servedBy: 1 });
      // The old certificate is still what the certificate-level fields describe: no renewal yet.
      expect([checked.serialNumber, checked.status]).toEqual(["0D:01", "valid"]);
      const listed = (expectData(await w.h.request("GET", "/v1/certificates"), 200) as any[]).find((c) => c.id === added.id);
      expect(listed.deployment).toEqual({ ...pending, servedBy: 1 });

      // The grace (24 hours for a 90-day certificate) passes: the check it scheduled raises one event.
      for (let at = seenAt + HOUR; at <= seenAt + 30 * HOUR; at += HOUR) {
        w.clock!.set(at);
        await w.settle();
      }
      let seen = await events(w.h, added.id);
      expect(seen.map((e) => e.type)).toEqual(["certificate.not_deployed"]);
      expect(seen[0].data).toMatchObject({ deployment: { ...pending, servedBy: 1 }, lagging: ["127.0.0.2", "127.0.0.3"] });
      expect(Date.parse(seen[0].createdAt) - (seenAt + 24 * HOUR)).toBeLessThan(HOUR);
      expect(Date.parse(seen[0].createdAt)).toBeGreaterThanOrEqual(seenAt + 24 * HOUR);
      expect(w.hook.requests.map((r) => r.json.type).filter((type) => type !== "certificate.issued")).toEqual(["certificate.not_deployed"]);
      // The status still describes what is served.
      expect(expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200).status).toBe("valid");

      // The other pools catch up: the deployment is done, one renewal.
      await install(servers[1]!, fresh);
      await install(servers[2]!, fresh);
      const done = expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
      expect([done.deployment, done.serialNumber]).toEqual([null, "0D:02"]);
      seen = await events(w.h, added.id);
      expect(seen.map((e) => e.type)).toEqual(["certificate.not_deployed", "certificate.renewed"]);
    });
  }

  test("a move to shorter-lived certificates: pending while nodes serve the older leaf, though the new one, expiring first, is already the certificate's", async () => {
    const domain = `shortswitch.deploy.${TEST_DOMAIN}`;
    const w = await world(domain, { alertPolicy: "renewal" });
    const now = w.clock!.now();
    // 90 days, 10 days in; its replacement lasts 6 days, so a tenth of that (14.4 hours) is the grace.
    const old = await leaf([domain], now - 10 * DAY, 90 * DAY, "1a01");
    const servers = await pool(old);
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: servers[0]!.port } }), 201);
    expectData(await w.h.request("POST", "/v1/watches", { body: { domain, includeSubdomains: false } }), 201);
    await w.poll();

    // One node is switched, and checked, before the watch's next poll records the issuance.
    const fresh = await leaf([domain], now - HOUR, 6 * DAY, "1a02");
    await install(servers[0]!, fresh);
    w.clock!.advance(MINUTE);
    const checked = expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
    expect(checked.serialNumber).toBe("1A:02");
    await logged(fresh);
    w.clock!.advance(MINUTE);
    await w.poll();
    const seenAt = w.clock!.now();
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect(got.endpoints.map((e: any) => e.serialNumber)).toEqual(["1A:02", "1A:01", "1A:01"]);
    const pending = {
      issuedAt: iso(now - HOUR),
      fingerprintSha256: fingerprint(fresh),
      notAfter: iso(now - HOUR + 6 * DAY),
      issuer: "certkeeper intermediates",
      seenAt: new Date(seenAt).toISOString(),
      servedBy: 1,
      endpoints: 3,
    };
    expect(got.deployment).toEqual(pending);

    // The grace passes: one not_deployed, from the check it scheduled, naming the two lagging nodes.
    for (let at = seenAt + HOUR; at <= seenAt + 20 * HOUR; at += HOUR) {
      w.clock!.set(at);
      await w.settle();
    }
    let seen = await events(w.h, added.id);
    expect(seen.map((e) => e.type)).toEqual(["certificate.not_deployed"]);
    expect(seen[0].data).toMatchObject({ deployment: pending, lagging: ["127.0.0.2", "127.0.0.3"] });
    expect(Date.parse(seen[0].createdAt)).toBeGreaterThanOrEqual(seenAt + 14.4 * HOUR);
    expect(Date.parse(seen[0].createdAt) - (seenAt + 14.4 * HOUR)).toBeLessThan(HOUR);

    // The others catch up: nothing pending, one renewal.
    await install(servers[1]!, fresh);
    await install(servers[2]!, fresh);
    const done = expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
    expect([done.deployment, done.serialNumber]).toEqual([null, "1A:02"]);
    seen = await events(w.h, added.id);
    expect(seen.map((e) => e.type)).toEqual(["certificate.not_deployed", "certificate.renewed"]);
  });

  test("real time: a short-lived issuance's grace is a tenth of its lifetime; the alert comes from a check made when it ends", async () => {
    const domain = `fast.deploy.${TEST_DOMAIN}`;
    const w = await world(domain, { checkIntervalMs: 6 * HOUR }, null);
    w.h.core.start();
    const now = Date.now();
    // An old certificate that expires in 30 s (its renewal is overdue already) and a new one of 60 s.
    const old = await leaf([domain], now - 120 * SECOND, 150 * SECOND, "0e01");
    const servers = await pool(old);
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: servers[0]!.port } }), 201);
    expectData(await w.h.request("POST", "/v1/watches", { body: { domain: `fast.deploy.${TEST_DOMAIN}`, includeSubdomains: false } }), 201);
    await w.poll();
    // A 60-second certificate: its grace is 6 seconds.
    const fresh = await leaf([domain], Date.now() - SECOND, 60 * SECOND, "0e02");
    await logged(fresh);
    await install(servers[0]!, fresh);
    await w.poll();
    const seenAt = Date.parse(expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200).deployment.seenAt);
    // Other news arrives too (the watch's certificate.issued, the old certificate's renewal_overdue).
    let delivered: (typeof w.hook.requests)[number] | undefined;
    for (let n = 1; !delivered && n < 10; n++) delivered = (await w.hook.waitFor(n, 20_000)).find((r) => r.json.type === "certificate.not_deployed");
    expect(delivered!.json.type).toBe("certificate.not_deployed");
    expect(delivered!.json.data.lagging).toEqual(["127.0.0.2", "127.0.0.3"]);
    expect(Date.parse(delivered!.json.createdAt)).toBeGreaterThanOrEqual(seenAt + 6 * SECOND);
  });
});

describe("which issuances count", () => {
  test("never another organization's or mode's issuance, an older one, or another set of names (a superset, a wildcard, another name)", async () => {
    const domain = `exact.deploy.${TEST_DOMAIN}`;
    const w = await world(domain);
    const now = w.clock!.now();
    const names = [domain, `api.${domain}`];
    const servers = await pool(await leaf(names, now - 10 * DAY, 90 * DAY));
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: servers[0]!.port } }), 201);

    // Watches in another organization and in test mode see a newer issuance of another of its names;
    // this organization's live mode does not watch that name.
    const isolated = `isolated.${TEST_DOMAIN}`;
    const isolatedServer = (await pool(await leaf([isolated], now - 10 * DAY, 90 * DAY)))[0]!;
    const mine = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain: isolated, port: isolatedServer.port } }), 201);
    const other = await w.h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
    const otherKey = await w.h.makeKey("owner", "live", other.id);
    expectData(await w.h.request("POST", "/v1/watches", { key: otherKey.key, body: { domain: isolated } }), 201);
    expectData(await w.h.request("POST", "/v1/watches", { key: w.h.keys.test.key, body: { domain: isolated } }), 201);
    await runWatches(w.h);
    await logged(await leaf([isolated], now - HOUR));
    w.clock!.advance(2 * HOUR);
    await runWatches(w.h);
    expect((expectData(await w.h.request("GET", "/v1/watches", { key: otherKey.key }), 200) as any[])[0].issuancesSeen).toBeGreaterThan(0);
    expect(expectData(await w.h.request("GET", `/v1/certificates/${mine.id}`), 200).deployment).toBeNull();

    // Its own watch: an older issuance, a superset, a wildcard and another name do not count.
    expectData(await w.h.request("POST", "/v1/watches", { body: { domain: `exact.deploy.${TEST_DOMAIN}` } }), 201);
    await w.poll();
    await logged(await leaf(names, now - 20 * DAY));
    await logged(await leaf([...names, `www.${domain}`], now - HOUR));
    await logged(await leaf([`*.${domain}`, domain], now - HOUR));
    await logged(await leaf([`api.${domain}`], now - HOUR));
    w.clock!.advance(MINUTE);
    await w.poll();
    expect(expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200).deployment).toBeNull();
    // The same names in another order and case do.
    await logged(await leaf([`API.${domain}`, domain], now - HOUR));
    w.clock!.advance(MINUTE);
    await w.poll();
    expect(expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200).deployment).toMatchObject({ servedBy: 0, endpoints: 3 });
    // Another organization never sees it.
    expect(expectData(await w.h.request("GET", "/v1/certificates", { key: otherKey.key }), 200)).toEqual([]);
  });
});

describe("rollouts that never flap", () => {
  test("an endpoint alternating between the old and the new certificate from check to check: one renewed, once all serve the new one; nothing of the old one raised again", async () => {
    const domain = `cdn.deploy.${TEST_DOMAIN}`;
    const w = await world(domain, { alertPolicy: "renewal" });
    const now = w.clock!.now();
    // Past its deadline: one renewal_overdue at the add.
    const old = await leaf([domain], now - 80 * DAY, 90 * DAY, "0f01");
    const servers = await pool(old);
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: servers[0]!.port } }), 201);
    const fresh = await leaf([domain], now - HOUR, 90 * DAY, "0f02");
    await install(servers[0]!, fresh);
    await install(servers[1]!, fresh);
    // The third node flips at every check; then settles on the new one.
    for (let i = 0; i < 8; i++) {
      await install(servers[2]!, i % 2 === 0 ? fresh : old);
      w.clock!.advance(3 * HOUR);
      expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
    }
    await install(servers[2]!, fresh);
    for (let i = 0; i < 3; i++) {
      w.clock!.advance(3 * HOUR);
      expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
    }
    const seen = (await events(w.h, added.id)).map((e) => e.type);
    expect(seen).toEqual(["certificate.renewal_overdue", "certificate.renewed"]);
  });

  test("a replacement that expires before the certificate it replaces (200 days by 45): renewed once the last node serves it, not at the first; none while the rollout is undone", async () => {
    const domain = `shorter.deploy.${TEST_DOMAIN}`;
    const w = await world(domain, { alertPolicy: "renewal" });
    const now = w.clock!.now();
    const old = await leaf([domain], now - 20 * DAY, 200 * DAY, "0e01");
    const servers = await pool(old);
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: servers[0]!.port } }), 201);
    const check = async () => {
      w.clock!.advance(HOUR);
      return expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
    };
    const fresh = await leaf([domain], now - HOUR, 45 * DAY, "0e02");
    // One node, then two: the new leaf expires first, so it is the certificate's at once, but the
    // renewal is not done while a node serves the old one.
    await install(servers[0]!, fresh);
    expect((await check()).serialNumber).toBe(serialOf(fresh));
    await install(servers[1]!, fresh);
    await check();
    expect((await events(w.h, added.id)).map((e) => e.type)).toEqual([]);
    // Undone: every node back on the old certificate; no renewal happened.
    await install(servers[0]!, old);
    await install(servers[1]!, old);
    expect((await check()).serialNumber).toBe(serialOf(old));
    expect((await events(w.h, added.id)).map((e) => e.type)).toEqual([]);
    // Rolled out again, to every node this time: one renewed, naming the replaced certificate.
    for (const server of servers) {
      await install(server, fresh);
      await check();
    }
    await check();
    const seen = await events(w.h, added.id);
    expect(seen.map((e) => [e.type, e.data.previous?.serialNumber])).toEqual([["certificate.renewed", serialOf(old)]]);
  });
});

/** The serial as the API shows it: upper-case colon hex. */
const serialOf = (issued: Issued) => issued.cert.serialNumber.toUpperCase().match(/../g)!.join(":");
