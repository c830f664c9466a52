/**
 * CONTRACT §15, certificate.issued's `authorizedIssuer`: null when the watch's allowedIssuers is empty
 * (not false: nothing was judged), else whether the issuer's O or CN in its `name`, or its
 * friendly_name, equals one of them. A CN written by its OID (`2.5.4.3=`), as RFC 4514 writers do for
 * attribute types they do not name, is the CN; attribute types are case-insensitive; spaces around a
 * value (OpenSSL's `O = X`) are not part of it.
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
type Answer = { body: string } | "hang";
let script: Array<() => Answer> = [];
const requests: URL[] = [];
let server: ReturnType<typeof Bun.serve>;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch(req) {
      requests.push(new URL(req.url));
      const next = script.shift();
      const answer = next ? next() : { body: "[]" };
      // Accepts the request and never answers (until the test server stops).
      if (answer === "hang") return new Promise<Response>(() => {});
      return new Response(answer.body, { headers: { "content-type": "application/json" } });
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

async function setup(timeoutMs = 2_000) {
  const store: Store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const poller = new WatchPoller({
    store,
    clock: systemClock,
    logger: createLogger("error"),
    client: new CtClient({ fetcher, baseUrl: `http://127.0.0.1:${server.port}`, timeoutMs }),
    intervalMs: 3_600_000,
    owner: "proc_a",
    leaseMs: 60_000,
    pollMs: 1_000,
    addCertificate: async () => true,
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
  const issued = async (): Promise<EventRecord[]> => (await store.events.list(scope, { limit: 100 })).filter((e) => e.type === "certificate.issued");
  const stored = async (w: WatchRecord) => (await store.watches.get(scope, w.id))!;
  return { store, scope, watch, pollOnce, issued, stored };
}

describe("certificate.issued's authorizedIssuer", () => {
  test("a watch without allowedIssuers: authorizedIssuer is null, not false", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "noallow.test", allowedIssuers: [] });
    script = [page(issuance("1", ["noallow.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [page(issuance("2", ["www.noallow.test"], { issuer: { friendly_name: "Shady", name: "O=Shady Certs Ltd, CN=Shady CA" } })), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    const events = await s.issued();
    expect(events.map((e) => (e.data as any).authorizedIssuer)).toEqual([null]);
  });

  test("the issuer's CN written by its OID (2.5.4.3=R99) matches an allowed issuer R99", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "oid.test", allowedIssuers: ["r99"] });
    script = [page(issuance("1", ["oid.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [
      page(
        issuance("2", ["a.oid.test"], { issuer: { name: "C=US, O=Example Trust, 2.5.4.3=R99" } }),
        issuance("3", ["b.oid.test"], { issuer: { name: "C=US, O=Example Trust, 2.5.4.3=R98" } }),
      ),
      page(),
    ];
    expect(await s.pollOnce(w)).toBe("ok");
    const events = (await s.issued()).sort((a, b) => ((a.data as any).dnsNames[0] < (b.data as any).dnsNames[0] ? -1 : 1));
    expect(events.map((e) => [(e.data as any).dnsNames[0], (e.data as any).authorizedIssuer])).toEqual([
      ["a.oid.test", true],
      ["b.oid.test", false],
    ]);
  });
  test("attribute types in lower case (o=, cn=) are the O and CN: RFC 4514 types are case-insensitive", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "lower.test", allowedIssuers: ["Example Trust"] });
    script = [page(issuance("1", ["lower.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [page(issuance("2", ["a.lower.test"], { issuer: { name: "c=US, o=Example Trust, cn=R5" } })), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect((await s.issued()).map((e) => (e.data as any).authorizedIssuer)).toEqual([true]);
  });
  test("a name written with spaces around '=' (OpenSSL's oneline form) still matches: C = US, O = Example Trust, CN = R6", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "spaced.test", allowedIssuers: ["example trust"] });
    script = [page(issuance("1", ["spaced.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [page(issuance("2", ["a.spaced.test"], { issuer: { name: "C = US, O = Example Trust, CN = R6" } })), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect((await s.issued()).map((e) => (e.data as any).authorizedIssuer)).toEqual([true]);
  });
});
