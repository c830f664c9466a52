/**
 * Hostile search service answers (CONTRACT §15, CERTKEEPER_CT_SOURCE=search): a poll never hangs on a
 * service that does not answer (it fails within the time limit, lastError says so), a page far larger
 * than any real one (over 8 MiB) is not read, and an issuance id longer than 100 characters is no id:
 * its page is refused whole. Each time nothing is announced and the cursor does not move. Likewise an
 * issuance without valid dates, JSON that is no list, a redirect (a status other than 200); an issuance's
 * names are bounded (1,000); autoMonitor's names pass ends when the service ignores `after`, and honours
 * a 429's Retry-After as every request does.
 *
 * And certificate.issued's `authorizedIssuer`: null when the watch's allowedIssuers is empty (not
 * false: nothing was judged), else whether the issuer's O or CN in its `name`, or its friendly_name,
 * equals one of them. A CN written by its OID (`2.5.4.3=`), as RFC 4514 writers do for attribute types
 * they do not name, is the CN; attribute types are case-insensitive; spaces around a value (OpenSSL's
 * `O = X`) are not part of it.
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
type Answer = { body: string; status?: number; headers?: Record<string, string> } | "hang";
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
      return new Response(answer.body, { status: answer.status ?? 200, headers: { "content-type": "application/json", ...(answer.headers ?? {}) } });
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

describe("a hostile CT search service", () => {
  test("a service that accepts the request and never answers: the poll fails within its time limit, lastError says so", async () => {
    const s = await setup(300);
    const w = await s.watch({ domain: "hang.test" });
    script = [page(issuance("1", ["hang.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = ["hang" as const].map((a) => () => a);
    const started = performance.now();
    expect(await s.pollOnce(w)).toBe("failed");
    expect(performance.now() - started).toBeLessThan(5_000);
    const after = await s.stored(w);
    expect(after.lastError).toContain("did not answer");
    expect(after.issuancesSeen).toBe(1);
  }, 20_000);

  test("a page of more than 8 MiB is not read: lastError, nothing recorded or announced", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "huge.test" });
    script = [page(issuance("1", ["huge.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    // A well-formed page, padded past 8 MiB with a field nobody reads.
    script = [page(issuance("2", ["www.huge.test"], { pad: "x".repeat(9 * 1024 * 1024) })), page()];
    expect(await s.pollOnce(w)).toBe("failed");
    const after = await s.stored(w);
    expect(after.lastError).toContain("bytes");
    expect(after.issuancesSeen).toBe(1);
    expect(await s.issued()).toEqual([]);
  }, 20_000);

  test("an issuance id of 101 characters is no id: the page is refused whole, nothing announced", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "longid.test" });
    script = [page(issuance("1", ["longid.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [page(issuance("9".repeat(101), ["a.longid.test"])), page()];
    expect(await s.pollOnce(w)).toBe("failed");
    const after = await s.stored(w);
    expect(after.lastError).toContain("lacks an id");
    expect(after.issuancesSeen).toBe(1);
    expect(await s.issued()).toEqual([]);
    // 100 characters is an id.
    script = [page(issuance("9".repeat(100), ["b.longid.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    expect((await s.issued()).map((e) => (e.data as any).dnsNames)).toEqual([["b.longid.test"]]);
  });
  test("an issuance whose not_after is no date is refused with its page: lastError, nothing announced", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "baddate.test" });
    script = [page(issuance("1", ["baddate.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [page(issuance("2", ["a.baddate.test"], { not_after: "next year" })), page()];
    expect(await s.pollOnce(w)).toBe("failed");
    const after = await s.stored(w);
    expect(after.lastError).toContain("validity dates");
    expect(after.issuancesSeen).toBe(1);
    expect(await s.issued()).toEqual([]);
  });

  test("an issuance naming 1,500 DNS names: its event carries the first 1,000", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "many.test" });
    script = [page(issuance("1", ["many.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    const names = Array.from({ length: 1_500 }, (_, i) => `n${i}.many.test`);
    script = [page(issuance("2", names)), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    const events = await s.issued();
    expect(events.length).toBe(1);
    expect((events[0]!.data as any).dnsNames).toEqual(names.slice(0, 1_000));
  });
  test("an answer that is JSON but no list (an error object): the poll fails with lastError, nothing announced", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "object.test" });
    script = [page(issuance("1", ["object.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    script = [() => ({ body: JSON.stringify({ issuances: [issuance("2", ["a.object.test"])] }) })];
    expect(await s.pollOnce(w)).toBe("failed");
    const after = await s.stored(w);
    expect(after.lastError).toContain("not a list of issuances");
    expect(after.issuancesSeen).toBe(1);
    expect(await s.issued()).toEqual([]);
  });
  test("a redirect (not followed) whose body reads as an empty list is no answer: lastError names the status", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "moved.test" });
    script = [() => ({ status: 302, body: "[]", headers: { location: "http://127.0.0.1:1/login" } })];
    expect(await s.pollOnce(w)).toBe("failed");
    const after = await s.stored(w);
    expect(after.lastError).toContain("HTTP 302");
    expect(after.baselineDone).toBe(false);
  });
  test("a service ignoring `after` during autoMonitor's names pass: the pass ends at the page that does not move on", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "stuck.test", autoMonitor: false });
    script = [page(issuance("1", ["stuck.test"]), issuance("2", ["www.stuck.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    await s.store.watches.update(s.scope, w.id, { autoMonitor: true, updatedAt: Date.now() });
    requests.length = 0;
    // Nothing new after 2; then the names pass from the start, whose service answers issuance 1 whatever `after` says.
    script = [page(), ...Array.from({ length: 6 }, () => page(issuance("1", ["stuck.test"])))];
    expect(await s.pollOnce(w)).toBe("ok");
    expect(requests.map((url) => url.searchParams.get("after"))).toEqual(["2", null, "1"]);
    script = [];
  });
  test("a 429 with Retry-After during autoMonitor's names pass is honoured for the watch's next request", async () => {
    const s = await setup();
    const w = await s.watch({ domain: "slowpass.test", autoMonitor: false });
    script = [page(issuance("1", ["slowpass.test"])), page()];
    expect(await s.pollOnce(w)).toBe("ok");
    await s.store.watches.update(s.scope, w.id, { autoMonitor: true, updatedAt: Date.now() });
    const before = Date.now();
    // Nothing new after 1; the names pass's first request is told to wait two hours.
    script = [page(), () => ({ status: 429, body: "slow down", headers: { "retry-after": "7200" } })];
    expect(await s.pollOnce(w)).toBe("rate_limited");
    const after = await s.stored(w);
    expect(after.lastError).toContain("429");
    // Two hours, not the hour of the interval.
    expect(after.nextPollAt).toBeGreaterThanOrEqual(before + 7_200_000);
  });
});

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
