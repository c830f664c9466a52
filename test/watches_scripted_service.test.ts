/**
 * Watches against a scripted search service (Cert Spotter's issuances API, as a test server answering
 * each request from a script), CONTRACT §15:
 * - each issuance is seen once: a service whose ids go back within a page (105, then 103) would leave
 *   the cursor at 103, behind an issuance announced, and the next poll would bring 105 (and announce
 *   it) again: such a page is not taken; the watch shows why in lastError;
 * - with autoMonitor, every DNS name of a currently valid issuance not yet monitored is added: a watch
 *   whose autoMonitor is turned on after its issuances were read gets their names too (a names pass
 *   over what was read before, raising nothing and counting nothing), besides those of issuances found
 *   from then on; issuances found meanwhile are announced once, as ever.
 * - an issuance is announced once even when the service's ids are not decimal and it answers `after=X`
 *   with X itself;
 * - issuancesSeen counts each issuance once: a silent baseline after switching back to the search
 *   service counts nothing again, and a poll under the logs (whose follower counts) counts nothing;
 * - allowedIssuers matches the issuer's friendly_name too, not only its O and CN;
 * - autoMonitor adds only names of a currently valid issuance (not one valid from tomorrow), only the
 *   watched domain and names under it (not a name that merely ends with it), and no subdomain when the
 *   watch does not include subdomains.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { CtClient, WatchPoller } from "../core/watches/mod.ts";
import type { Issuance } from "../core/watches/issuance.ts";
import type { Store } from "../core/store/ports.ts";
import type { EventRecord, Scope, WatchRecord } from "../core/base/records.ts";
import { createLogger } from "../core/base/log.ts";
import { systemClock } from "../core/base/time.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";

const DAY = 86_400_000;
type Answer = { status?: number; body: string; headers?: Record<string, string> };
let script: Array<(url: URL) => Answer> = [];
const requests: URL[] = [];
let server: ReturnType<typeof Bun.serve>;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const url = new URL(req.url);
      requests.push(url);
      const next = script.shift();
      const a = next ? next(url) : { body: "[]" };
      return new Response(a.body, { status: a.status ?? 200, headers: { "content-type": "application/json", ...(a.headers ?? {}) } });
    },
  });
});
afterAll(async () => {
  server.stop(true);
  await fetcher.close();
});

function issuance(id: string, names: string[], extra: Record<string, unknown> = {}) {
  return {
    id,
    dns_names: names,
    not_before: new Date(Date.now() - DAY).toISOString(),
    not_after: new Date(Date.now() + 60 * DAY).toISOString(),
    cert_sha256: "ab".repeat(32),
    issuer: { friendly_name: "Let's Encrypt", name: "C=US, O=Let's Encrypt, CN=R11" },
    ...extra,
  };
}
const page = (...items: unknown[]) => () => ({ body: JSON.stringify(items) });

async function setup() {
  const store: Store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const added: string[] = [];
  const options = {
    store,
    clock: systemClock,
    logger: createLogger("error"),
    client: new CtClient({ fetcher, baseUrl: `http://127.0.0.1:${server.port}`, timeoutMs: 2_000 }),
    intervalMs: 3_600_000,
    owner: "proc_a",
    leaseMs: 60_000,
    pollMs: 1_000,
    addCertificate: async (_w: WatchRecord, name: string) => {
      added.push(name);
      return true;
    },
  };
  const poller = new WatchPoller(options);
  const watch = async (overrides: Partial<WatchRecord> = {}) => {
    const w = watchRecord(scope, { nextPollAt: 0, ...overrides });
    expect(await store.watches.insert(w, { limit: 10 })).toBe("created");
    return w;
  };
  const pollOnce = async (w: WatchRecord, with_: WatchPoller = poller) => {
    await store.watches.update(scope, w.id, { updatedAt: Date.now() });
    const claimed = (await store.watches.claimDue({ owner: "proc_a", now: Number.MAX_SAFE_INTEGER - 1, leaseUntil: Number.MAX_SAFE_INTEGER, limit: 1000 })).find((x) => x.id === w.id);
    if (!claimed) throw new Error("not due");
    return with_.poll(claimed);
  };
  const issued = async (): Promise<EventRecord[]> => (await store.events.list(scope, { limit: 100 })).filter((e) => e.type === "certificate.issued").reverse();
  const issuancesSeen = async (w: WatchRecord) => (await store.watches.get(scope, w.id))!.issuancesSeen;
  return { store, scope, options, watch, pollOnce, issued, added, issuancesSeen };
}

describe("each issuance announced and counted once", () => {
  test("a service with non-decimal ids that answers after=X with X again: X is not announced a second time", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "opaque.test" });
    script = [page(issuance("aaa", ["opaque.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok"); // baseline
    script = [page(issuance("bbb", ["new.opaque.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect((await s.issued()).map((e) => (e.data as any).dnsNames)).toEqual([["new.opaque.test"]]);
    // The next poll asks after=bbb; the service (inclusive) answers bbb again.
    script = [page(issuance("bbb", ["new.opaque.test"])), page()];
    await s.pollOnce(w);
    expect(requests.at(-1)!.searchParams.get("after")).toBe("bbb");
    expect((await s.issued()).map((e) => (e.data as any).dnsNames)).toEqual([["new.opaque.test"]]);
    expect(await s.issuancesSeen(w)).toBe(2);
  });

  test("switching to the logs and back to the search service: the silent baseline counts nothing again", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "recount.test" });
    script = [page(issuance("10", ["recount.test"]), issuance("11", ["www.recount.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(await s.issuancesSeen(w)).toBe(2);

    // Under the logs the follower records and counts issuances; the poll itself counts nothing.
    const now = Date.now();
    const recorded: Issuance = { id: "1", dnsNames: ["api.recount.test"], issuerFriendlyName: null, issuerName: "C=US, O=Let's Encrypt, CN=R11", notBefore: now - DAY, notAfter: now + 60 * DAY, certSha256: null, tbsSha256: null };
    const logs = new WatchPoller({
      ...s.options,
      recordsIssuances: false,
      client: { page: async ({ after }: { after: string | null }) => (after === null ? [recorded] : []) },
    });
    expect(await s.pollOnce(w, logs)).toBe("ok");
    expect(await s.issuancesSeen(w)).toBe(2);

    // Back on the search service: its whole history again, as a silent baseline.
    script = [page(issuance("10", ["recount.test"]), issuance("11", ["www.recount.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(await s.issued()).toEqual([]);
    expect(await s.issuancesSeen(w)).toBe(2);
  });
});

describe("allowedIssuers", () => {
  test("the issuer's friendly_name counts, besides its O and CN", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "friendly.test", allowedIssuers: ["sectigo dv (friendly)"] });
    script = [page(issuance("1", ["friendly.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    const issuer = { friendly_name: "Sectigo DV (friendly)", name: "C=GB, O=Sectigo Limited, CN=Sectigo RSA Domain Validation Secure Server CA" };
    script = [page(issuance("2", ["www.friendly.test"], { issuer })), page(issuance("3", ["api.friendly.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    const events = await s.issued();
    expect(events.map((e) => [(e.data as any).issuer, (e.data as any).authorizedIssuer])).toEqual([
      ["Sectigo DV (friendly)", true],
      ["Let's Encrypt", false],
    ]);
  });
});

describe("autoMonitor's names", () => {
  test("an issuance valid only from tomorrow adds no name yet", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "future.test", autoMonitor: true });
    const tomorrow = new Date(Date.now() + DAY).toISOString();
    script = [page(issuance("1", ["soon.future.test"], { not_before: tomorrow }), issuance("2", ["now.future.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(s.added).toEqual(["now.future.test"]);
  });

  test("a name that merely ends with the watched domain is not under it", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "shop.test", autoMonitor: true });
    script = [page(issuance("1", ["shop.test", "www.shop.test", "evilshop.test", "www.myshop.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(s.added.sort()).toEqual(["shop.test", "www.shop.test"]);
  });

  test("a watch without subdomains adds only the watched domain itself", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "apex.test", autoMonitor: true, includeSubdomains: false });
    script = [page(issuance("1", ["apex.test", "www.apex.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(requests.at(-1)!.searchParams.get("include_subdomains")).toBe("false");
    expect(s.added).toEqual(["apex.test"]);
  });
});

describe("what an issuance's fields become", () => {
  test("an empty friendly_name falls back to the issuer's name; a cert_sha256 that is no SHA-256 is no fingerprint", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "fields.test" });
    script = [page(issuance("1", ["fields.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [
      page(
        issuance("2", ["a.fields.test"], { issuer: { friendly_name: "", name: "C=US, O=Example CA, CN=Example R1" } }),
        issuance("3", ["b.fields.test"], { cert_sha256: "abc" }),
      ),
      page(),
    ];
    expect(await s.pollOnce(w)).toBe("ok");
    const events = await s.issued();
    expect(events.map((e) => (e.data as any).issuer)).toEqual(["C=US, O=Example CA, CN=Example R1", "Let's Encrypt"]);
    expect(events.map((e) => (e.data as any).fingerprintSha256)).toEqual([`AB${":AB".repeat(31)}`, null]);
  });

  test("a page holding an issuance without an id is refused whole: nothing announced, lastError says why", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "noid.test" });
    script = [page(issuance("1", ["noid.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [page(issuance("", ["a.noid.test"])), page()];
    expect(await s.pollOnce(w)).toBe("failed");
    expect(await s.issued()).toEqual([]);
    expect((await s.store.watches.get(s.scope, w.id))!.lastError).toContain("lacks an id");
  });

  test("a 503 with Retry-After is honoured for the watch's next request, as a 429's is", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "busy.test" });
    const before = Date.now();
    script = [() => ({ status: 503, body: "busy", headers: { "retry-after": "7200" } })];
    expect(await s.pollOnce(w)).toBe("rate_limited");
    const stored = (await s.store.watches.get(s.scope, w.id))!;
    expect(stored.lastError).toContain("503");
    // Two hours, not the hour of the interval.
    expect(stored.nextPollAt).toBeGreaterThanOrEqual(before + 7_200_000);
  });
});

describe("ids going backwards within a page", () => {
  test("a page whose ids go backwards never leads to one issuance announced twice", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "back.test" });
    script = [page(issuance("100", ["back.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok"); // baseline
    // A later poll: a page whose ids go backwards (105 then 103), then the end.
    script = [page(issuance("105", ["a.back.test"]), issuance("103", ["b.back.test"])), page()];
    await s.pollOnce(w);
    // Next poll: after=103, the service (ordering by id) returns 105 again.
    script = [page(issuance("105", ["a.back.test"])), page()];
    await s.pollOnce(w);
    const names = (await s.issued()).map((e) => (e.data as any).dnsNames[0]);
    expect(names.filter((n: string) => n === "a.back.test").length).toBe(1);
    expect(names).toEqual(["a.back.test"]);
    // The page out of order was refused, and said so; the next one in order was taken.
    script = [page(issuance("110", ["c.back.test"]), issuance("107", ["d.back.test"]))];
    expect(await s.pollOnce(w)).toBe("failed");
    expect((await s.store.watches.get(s.scope, w.id))!.lastError).toBe("The CT service returned a page whose issuance ids do not increase");
  });
});

describe("autoMonitor switched on later", () => {
  test("PATCH autoMonitor true after the baseline adds the names of currently valid issuances", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "later-auto.test", autoMonitor: false });
    script = [page(issuance("200", ["later-auto.test", "www.later-auto.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    await s.store.watches.update(s.scope, w.id, { autoMonitor: true, updatedAt: Date.now() });
    // The next poll: one new issuance (announced), then the names pass over what was read before.
    script = [page(issuance("201", ["api.later-auto.test"])), page(), page(issuance("200", ["later-auto.test", "www.later-auto.test"]), issuance("201", ["api.later-auto.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(s.added.sort()).toEqual(["api.later-auto.test", "later-auto.test", "www.later-auto.test"]);
    expect((await s.issued()).map((e) => (e.data as any).dnsNames)).toEqual([["api.later-auto.test"]]);
    const after = (await s.store.watches.get(s.scope, w.id))!;
    expect(after.issuancesSeen).toBe(2);
    // Done: the next poll reads on from the cursor, and adds nothing again.
    s.added.length = 0;
    requests.length = 0;
    script = [page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(requests.map((url) => url.searchParams.get("after"))).toEqual(["201"]);
    expect(s.added).toEqual([]);
  });

  test("turned off, then on again: a names pass up to where the cursor was, ending with the page that holds it", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "toggle.test", autoMonitor: true });
    script = [page(issuance("300", ["toggle.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(s.added).toEqual(["toggle.test"]);
    await s.store.watches.update(s.scope, w.id, { autoMonitor: false, updatedAt: Date.now() });
    script = [page(issuance("301", ["a.toggle.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    await s.store.watches.update(s.scope, w.id, { autoMonitor: true, updatedAt: Date.now() });
    s.added.length = 0;
    requests.length = 0;
    script = [page(), page(issuance("300", ["toggle.test"]), issuance("301", ["a.toggle.test"]))];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(requests.map((url) => url.searchParams.get("after"))).toEqual(["301", null]);
    expect(s.added.sort()).toEqual(["a.toggle.test", "toggle.test"]);
  });
});
