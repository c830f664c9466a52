/**
 * The Certificate Transparency poller against a test service speaking Cert Spotter's issuances API
 * over real test-PKI certificates: paging, the first poll's baseline, events, allowed issuers,
 * autoMonitor, 429 Retry-After, 500s, a token that never shows, and restarts that see each issuance once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { CtClient, WatchPoller } from "../core/watches/mod.ts";
import type { Store } from "../core/store/ports.ts";
import type { EventRecord, Scope, WatchRecord } from "../core/base/records.ts";
import { createLogger } from "../core/base/log.ts";
import { systemClock } from "../core/base/time.ts";
import { createIntermediateCa, createLeaf, createRootCa, DAY, type Issued } from "./support/pki.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";
import { startSqld } from "./support/sqld.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";

let root: Issued;
let ca: Issued;
let otherCa: Issued;
let ct: CtServer;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });

beforeAll(async () => {
  root = await createRootCa();
  ca = await createIntermediateCa(root, { name: "CN=R11, O=Let's Encrypt, C=US" });
  otherCa = await createIntermediateCa(root, { name: "CN=Shady Issuing CA, O=Shady Certs Ltd" });
  ct = await startCtServer();
});
afterAll(async () => {
  await ct.close();
  await fetcher.close();
});

interface Setup {
  store: Store;
  scope: Scope;
  poller: (options?: { token?: string; owner?: string; added?: string[]; failAdd?: (name: string) => string | null }) => WatchPoller;
  watch: (overrides?: Partial<WatchRecord>) => Promise<WatchRecord>;
  /** Claims the watch (as the scheduler would) and polls it. */
  pollOnce: (poller: WatchPoller, watch: WatchRecord) => Promise<string>;
  issued: () => Promise<EventRecord[]>;
}

async function setup(store: Store = createMemoryStore()): Promise<Setup> {
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const logger = createLogger("error");
  return {
    store,
    scope,
    poller: (options = {}) =>
      new WatchPoller({
        store,
        clock: systemClock,
        logger,
        client: new CtClient({ fetcher, baseUrl: ct.url, token: options.token, timeoutMs: 2_000 }),
        intervalMs: 3_600_000,
        owner: options.owner ?? "proc_a",
        leaseMs: 60_000,
        pollMs: 1_000,
        addCertificate: async (_watch, name) => {
          const refusal = options.failAdd?.(name);
          if (refusal) throw new Error(refusal);
          options.added?.push(name);
          return true;
        },
      }),
    watch: async (overrides = {}) => {
      const watch = watchRecord(scope, { nextPollAt: 0, ...overrides });
      expect(await store.watches.insert(watch, { limit: 10 })).toBe("created");
      return watch;
    },
    pollOnce: async (poller, watch) => {
      await store.watches.update(scope, watch.id, { updatedAt: Date.now() });
      const claimed = (await store.watches.claimDue({ owner: (poller as any).options.owner, now: Number.MAX_SAFE_INTEGER - 1, leaseUntil: Number.MAX_SAFE_INTEGER, limit: 1000 })).find((w) => w.id === watch.id);
      if (!claimed) throw new Error("watch not due");
      return poller.poll(claimed);
    },
    issued: async () => (await store.events.list(scope, { limit: 100 })).filter((e) => e.type === "certificate.issued").reverse(),
  };
}

async function leaf(names: string[], issuer: Issued = ca, days = 60) {
  return createLeaf({ issuer, dnsNames: names, daysLeft: days });
}

describe("CT watches: polling Cert Spotter's issuances API", () => {
  test("the first poll records every issuance (paging until an empty page) and raises no event", async () => {
    const s = await setup();
    for (const name of ["first.test", "www.first.test", "api.first.test"]) ct.log(await leaf([name]), ca);
    const watch = await s.watch({ domain: "first.test" });
    const before = ct.requests.length;
    expect(await s.pollOnce(s.poller(), watch)).toBe("ok");
    const requests = ct.requests.slice(before);
    // 3 issuances at 2 per page: two pages, then the empty one.
    expect(requests.length).toBe(3);
    expect(requests[0]!.params.get("domain")).toBe("first.test");
    expect(requests[0]!.params.get("include_subdomains")).toBe("true");
    expect(requests[0]!.params.getAll("expand")).toEqual(["dns_names", "issuer"]);
    expect(requests[0]!.params.has("after")).toBe(false);
    expect(requests[1]!.params.get("after")).toBeTruthy();
    const stored = (await s.store.watches.get(s.scope, watch.id))!;
    expect(stored).toMatchObject({ issuancesSeen: 3, baselineDone: true, lastError: null });
    expect(stored.lastPolledAt).toBeNumber();
    expect(await s.issued()).toEqual([]);
  });

  test("a later poll raises certificate.issued once per new issuance, with CONTRACT §15's data", async () => {
    const s = await setup();
    ct.log(await leaf(["later.test"]), ca);
    const watch = await s.watch({ domain: "later.test", allowedIssuers: ["let's encrypt"] });
    const poller = s.poller();
    await s.pollOnce(poller, watch);
    const fresh = await leaf(["later.test", "www.later.test"]);
    ct.log(fresh, ca);
    const shady = await leaf(["shop.later.test"], otherCa);
    ct.log(shady, otherCa, { precertificateOnly: true });
    await s.pollOnce(poller, watch);
    await s.pollOnce(poller, watch); // nothing new: nothing raised
    const events = await s.issued();
    expect(events.map((e) => e.data)).toEqual([
      {
        watchId: watch.id,
        domain: "later.test",
        dnsNames: ["later.test", "www.later.test"],
        issuer: "Let's Encrypt",
        notBefore: fresh.cert.notBefore.toISOString(),
        notAfter: fresh.cert.notAfter.toISOString(),
        fingerprintSha256: Buffer.from(await crypto.subtle.digest("SHA-256", fresh.cert.rawData)).toString("hex").toUpperCase().match(/../g)!.join(":"),
        authorizedIssuer: true,
      },
      {
        watchId: watch.id,
        domain: "later.test",
        dnsNames: ["shop.later.test"],
        issuer: "Shady Certs Ltd",
        notBefore: shady.cert.notBefore.toISOString(),
        notAfter: shady.cert.notAfter.toISOString(),
        fingerprintSha256: null,
        authorizedIssuer: false,
      },
    ]);
    expect(events.every((e) => e.certificateId === null)).toBe(true);
    expect((await s.store.watches.get(s.scope, watch.id))!.issuancesSeen).toBe(3);
  });

  test("a CT service that ignores `after` (the same page again and again) raises nothing twice and ends the poll at once", async () => {
    const s = await setup();
    for (const name of ["loop.test", "www.loop.test", "api.loop.test"]) ct.log(await leaf([name]), ca);
    const watch = await s.watch({ domain: "loop.test" });
    const poller = s.poller();
    await s.pollOnce(poller, watch); // the baseline: three issuances, no event
    const fresh = await leaf(["new.loop.test"]);
    ct.log(fresh, ca);
    ct.ignoreAfter = true;
    try {
      const before = ct.requests.length;
      expect(await s.pollOnce(poller, watch)).toBe("failed");
      // One page (the first two issuances, already seen) shows the service went back: no second request.
      expect(ct.requests.length - before).toBe(1);
      const stored = (await s.store.watches.get(s.scope, watch.id))!;
      expect(stored.lastError).toBe("The CT service returned issuances it had already returned (it ignored `after`)");
      expect(stored.issuancesSeen).toBe(3);
      expect(stored.nextPollAt).toBeGreaterThanOrEqual(Date.now() + 3_000_000); // next interval, not at once
      expect(await s.issued()).toEqual([]); // no issuance announced again
    } finally {
      ct.ignoreAfter = false;
    }
    // Once the service behaves again, the new issuance is announced once.
    expect(await s.pollOnce(poller, watch)).toBe("ok");
    expect((await s.issued()).map((e) => e.data.dnsNames)).toEqual([["new.loop.test"]]);
  });

  test("includeSubdomains false asks for the domain alone", async () => {
    const s = await setup();
    const watch = await s.watch({ domain: "exact.test", includeSubdomains: false });
    const before = ct.requests.length;
    await s.pollOnce(s.poller(), watch);
    expect(ct.requests[before]!.params.get("include_subdomains")).toBe("false");
  });

  test("a 429 is honoured through Retry-After: lastError, the next poll not before it, no event", async () => {
    const s = await setup();
    const watch = await s.watch({ domain: "limited.test" });
    ct.fail(429, 1, "120");
    const started = Date.now();
    expect(await s.pollOnce(s.poller(), watch)).toBe("rate_limited");
    const stored = (await s.store.watches.get(s.scope, watch.id))!;
    expect(stored.lastError).toBe("The CT service asked to slow down (HTTP 429)");
    expect(stored.nextPollAt).toBeGreaterThanOrEqual(started + 120_000);
    expect(stored.nextPollAt).toBeLessThan(started + 130_000);
    expect(stored.baselineDone).toBe(false);
  });

  test("a CT service that fails (500, down) is lastError, retried at the next interval; the next success clears it", async () => {
    const s = await setup();
    ct.log(await leaf(["flaky.test"]), ca);
    const watch = await s.watch({ domain: "flaky.test" });
    const poller = s.poller();
    await s.pollOnce(poller, watch);
    ct.log(await leaf(["a.flaky.test"]), ca);
    ct.fail(500, 3);
    const started = Date.now();
    for (let i = 0; i < 3; i++) expect(await s.pollOnce(poller, watch)).toBe("failed");
    let stored = (await s.store.watches.get(s.scope, watch.id))!;
    expect(stored.lastError).toBe("The CT service answered HTTP 500");
    expect(stored.nextPollAt).toBeGreaterThanOrEqual(started + 3_600_000);
    expect(await s.issued()).toEqual([]); // a failing service raises no alert
    expect(await s.pollOnce(poller, watch)).toBe("ok");
    stored = (await s.store.watches.get(s.scope, watch.id))!;
    expect(stored.lastError).toBeNull();
    expect((await s.issued()).length).toBe(1);

    const down = new WatchPoller({ ...(poller as any).options, client: new CtClient({ fetcher, baseUrl: "http://127.0.0.1:1", timeoutMs: 1_000 }) });
    expect(await s.pollOnce(down, watch)).toBe("failed");
    expect((await s.store.watches.get(s.scope, watch.id))!.lastError).toMatch(/^The CT service did not answer/);
  });

  test("autoMonitor adds that outlast the lease renew it: no other process takes the watch over meanwhile", async () => {
    const s = await setup();
    const names = ["a.slowadd.test", "b.slowadd.test", "c.slowadd.test", "d.slowadd.test"];
    for (const name of names) ct.log(await leaf([name]), ca);
    const watch = await s.watch({ domain: "slowadd.test", autoMonitor: true });
    const leaseMs = 300;
    const added: string[] = [];
    // Each add takes half the lease (a slow TLS handshake): four of them outlast it.
    const slow = new WatchPoller({
      ...(s.poller() as any).options,
      leaseMs,
      addCertificate: async (_watch: WatchRecord, name: string) => {
        await Bun.sleep(leaseMs / 2);
        added.push(name);
        return true;
      },
    });
    const [claimed] = await s.store.watches.claimDue({ owner: "proc_a", now: Date.now(), leaseUntil: Date.now() + leaseMs, limit: 10 });
    expect(claimed!.id).toBe(watch.id);
    const polling = slow.poll(claimed!);
    // While the adds go on, another process finds nothing due.
    const takenOver: string[] = [];
    while (added.length < names.length) {
      await Bun.sleep(50);
      for (const other of await s.store.watches.claimDue({ owner: "proc_b", now: Date.now(), leaseUntil: Date.now() + leaseMs, limit: 10 })) takenOver.push(other.id);
    }
    expect(await polling).toBe("ok");
    expect(takenOver).toEqual([]);
    expect(added.sort()).toEqual(names);
    const stored = (await s.store.watches.get(s.scope, watch.id))!;
    expect(stored.pendingNames).toEqual([]);
    expect(stored.nextPollAt).toBeGreaterThan(Date.now() + 3_000_000); // released until the next interval
  });

  test("CERTKEEPER_CT_TOKEN is sent as a bearer token and never appears in lastError", async () => {
    const s = await setup();
    const watch = await s.watch({ domain: "token.test" });
    ct.token = "ct-secret-token-123";
    try {
      expect(await s.pollOnce(s.poller(), watch)).toBe("failed");
      expect((await s.store.watches.get(s.scope, watch.id))!.lastError).toBe("The CT service answered HTTP 401");
      const before = ct.requests.length;
      expect(await s.pollOnce(s.poller({ token: "ct-secret-token-123" }), watch)).toBe("ok");
      expect(ct.requests[before]!.authorization).toBe("Bearer ct-secret-token-123");
      expect(JSON.stringify(await s.store.watches.get(s.scope, watch.id))).not.toContain("ct-secret");
    } finally {
      ct.token = null;
    }
  });

  test("autoMonitor adds each currently valid, non-wildcard name under the domain, the first poll included; failures wait for the next poll", async () => {
    const s = await setup();
    ct.log(await leaf(["auto.test", "www.auto.test", "*.auto.test", "other.example"]), ca);
    ct.log(await createLeaf({ issuer: ca, dnsNames: ["old.auto.test"], notBefore: new Date(Date.now() - 100 * DAY), notAfter: new Date(Date.now() - DAY) }), ca);
    const watch = await s.watch({ domain: "auto.test", autoMonitor: true });
    const added: string[] = [];
    let refuse = true;
    const poller = s.poller({ added, failAdd: (name) => (refuse && name === "www.auto.test" ? "Your plan allows 25 certificates and all are in use" : null) });
    await s.pollOnce(poller, watch);
    expect(added).toEqual(["auto.test"]);
    let stored = (await s.store.watches.get(s.scope, watch.id))!;
    expect(stored.lastError).toBe('Could not monitor "www.auto.test": Your plan allows 25 certificates and all are in use');
    refuse = false;
    await s.pollOnce(poller, watch);
    expect(added).toEqual(["auto.test", "www.auto.test"]);
    stored = (await s.store.watches.get(s.scope, watch.id))!;
    expect(stored.lastError).toBeNull();
    expect(stored.pendingNames).toEqual([]);
  });
});

describe("CT watches: each issuance seen once across restarts and processes", () => {
  test("two processes polling one libSQL server, and a restart, announce each issuance exactly once", async () => {
    const sqld = await startSqld();
    const url = sqld.url;
    const storeA = await openLibsqlStore({ url });
    const a = await setup(storeA);
    ct.log(await leaf(["restart.test"]), ca);
    const watch = await a.watch({ domain: "restart.test" });
    await a.pollOnce(a.poller({ owner: "proc_a" }), watch);
    const logged = [];
    for (let i = 0; i < 5; i++) logged.push(ct.log(await leaf([`n${i}.restart.test`]), ca));
    // Process B opens the same database; both race for the watch: only the lease holder polls.
    const storeB = await openLibsqlStore({ url });
    const pollerA = a.poller({ owner: "proc_a" });
    const pollerB = new WatchPoller({ ...(a.poller() as any).options, store: storeB, owner: "proc_b" });
    await storeA.watches.update(a.scope, watch.id, { updatedAt: Date.now() });
    const now = Date.now() + 7_200_000;
    const [claimedA, claimedB] = await Promise.all([
      storeA.watches.claimDue({ owner: "proc_a", now, leaseUntil: now + 60_000, limit: 100 }),
      storeB.watches.claimDue({ owner: "proc_b", now, leaseUntil: now + 60_000, limit: 100 }),
    ]);
    const mineA = claimedA.filter((w) => w.id === watch.id);
    const mineB = claimedB.filter((w) => w.id === watch.id);
    expect(mineA.length + mineB.length).toBe(1);
    await Promise.all([...mineA.map((w) => pollerA.poll(w)), ...mineB.map((w) => pollerB.poll(w))]);
    // "Restart": close both, reopen, poll again: nothing new.
    await storeA.close();
    await storeB.close();
    const reopened = await openLibsqlStore({ url });
    const again = new WatchPoller({ ...(a.poller() as any).options, store: reopened, owner: "proc_c" });
    const claimed = (await reopened.watches.claimDue({ owner: "proc_c", now: now + 7_200_000, leaseUntil: now + 7_300_000, limit: 100 })).find((w) => w.id === watch.id)!;
    await again.poll(claimed);
    const events = (await reopened.events.list(a.scope, { limit: 100 })).filter((e) => e.type === "certificate.issued");
    expect(events.map((e) => (e.data.dnsNames as string[])[0]).sort()).toEqual(["n0.restart.test", "n1.restart.test", "n2.restart.test", "n3.restart.test", "n4.restart.test"]);
    expect((await reopened.watches.get(a.scope, watch.id))!.issuancesSeen).toBe(6);
    await reopened.close();
    await sqld.close();
  });
});

describe("switching CERTKEEPER_CT_SOURCE with watches in place", () => {
  test("search to logs reads the logs' records from their start; back to search, past issuances are not announced again", async () => {
    const s = await setup();
    for (const name of ["a.switch.test", "b.switch.test"]) ct.log(await leaf([name]), ca);
    const watch = await s.watch({ domain: "switch.test", autoMonitor: true });
    const added: string[] = [];
    const search = s.poller({ added });
    expect(await s.pollOnce(search, watch)).toBe("ok"); // the baseline
    ct.log(await leaf(["c.switch.test"]), ca);
    expect(await s.pollOnce(search, watch)).toBe("ok");
    expect((await s.issued()).map((e) => (e.data.dnsNames as string[])[0])).toEqual(["c.switch.test"]);

    // The logs: their follower raised the events; the poll adds autoMonitor's names from its records,
    // asked from their start, not after the search service's id.
    const asked: Array<string | null> = [];
    const now = Date.now();
    const recorded = { id: "1", dnsNames: ["d.switch.test"], issuerFriendlyName: null, issuerName: "C=US, O=Let's Encrypt, CN=R11", notBefore: now - DAY, notAfter: now + 60 * DAY, certSha256: null, tbsSha256: null };
    const logs = new WatchPoller({
      ...(search as any).options,
      recordsIssuances: false,
      client: { page: async ({ after }: { after: string | null }) => (asked.push(after), after === null ? [recorded] : []) },
    });
    added.length = 0;
    expect(await s.pollOnce(logs, watch)).toBe("ok");
    expect(asked[0]).toBeNull();
    expect(added).toEqual(["d.switch.test"]);
    expect(await s.pollOnce(logs, watch)).toBe("ok");
    expect(asked.at(-1)).toBe("1");

    // Back on the search service: its whole history is read again as a baseline, silently.
    added.length = 0;
    expect(await s.pollOnce(search, watch)).toBe("ok");
    expect((await s.issued()).map((e) => (e.data.dnsNames as string[])[0])).toEqual(["c.switch.test"]);
    expect(added).toEqual([]);
    ct.log(await leaf(["e.switch.test"]), ca);
    expect(await s.pollOnce(search, watch)).toBe("ok");
    expect((await s.issued()).map((e) => (e.data.dnsNames as string[])[0])).toEqual(["c.switch.test", "e.switch.test"]);
  });
});
