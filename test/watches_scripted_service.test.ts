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
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { CtClient, WatchPoller } from "../core/watches/mod.ts";
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
  const poller = new WatchPoller({
    store,
    clock: systemClock,
    logger: createLogger("error"),
    client: new CtClient({ fetcher, baseUrl: `http://127.0.0.1:${server.port}`, timeoutMs: 2_000 }),
    intervalMs: 3_600_000,
    owner: "proc_a",
    leaseMs: 60_000,
    pollMs: 1_000,
    addCertificate: async (_w, name) => {
      added.push(name);
      return true;
    },
  });
  const watch = async (overrides: Partial<WatchRecord> = {}) => {
    const w = watchRecord(scope, { nextPollAt: 0, ...overrides });
    expect(await store.watches.insert(w, { limit: 10 })).toBe("created");
    return w;
  };
  const pollOnce = async (w: WatchRecord) => {
    await store.watches.update(scope, w.id, { updatedAt: Date.now() });
    const claimed = (await store.watches.claimDue({ owner: "proc_a", now: Number.MAX_SAFE_INTEGER - 1, leaseUntil: Number.MAX_SAFE_INTEGER, limit: 1000 })).find((x) => x.id === w.id);
    if (!claimed) throw new Error("not due");
    return poller.poll(claimed);
  };
  const issued = async (): Promise<EventRecord[]> => (await store.events.list(scope, { limit: 100 })).filter((e) => e.type === "certificate.issued").reverse();
  return { store, scope, watch, pollOnce, issued, added };
}

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
