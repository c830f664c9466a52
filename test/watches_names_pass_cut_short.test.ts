/**
 * A names pass (autoMonitor turned on later) that ends its poll early, at a 429 or at the page budget,
 * keeps the baseline done: that poll's main loop had read every issuance already, so the next poll
 * announces what is new (CONTRACT §15: each issuance first returned by a later poll raises
 * certificate.issued).
 */
import { describe, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { CtFailure, WatchPoller, type Issuance } from "../core/watches/mod.ts";
import type { Store } from "../core/store/ports.ts";
import type { Scope, WatchRecord } from "../core/base/records.ts";
import { createLogger } from "../core/base/log.ts";
import { systemClock } from "../core/base/time.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";

const DAY = 86_400_000;
const issuance = (id: string, name: string): Issuance => ({
  id,
  dnsNames: [name],
  issuerFriendlyName: "Let's Encrypt",
  issuerName: "C=US, O=Let's Encrypt, CN=R11",
  notBefore: Date.now() - DAY,
  notAfter: Date.now() + 60 * DAY,
  certSha256: "ab".repeat(32),
  tbsSha256: null,
});

/** A CT service holding `items` in order; `fail(after)` may throw for a request. */
function source(items: Issuance[], perPage: number, fail: (after: string | null) => CtFailure | null = () => null) {
  return {
    async page({ after }: { after: string | null }) {
      const f = fail(after);
      if (f) throw f;
      const start = after === null ? 0 : items.findIndex((i) => i.id === after) + 1;
      return items.slice(start, start + perPage);
    },
  };
}

async function setup() {
  const store: Store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const w = watchRecord(scope, { domain: "baseline.test", autoMonitor: false, nextPollAt: 0 });
  expect(await store.watches.insert(w, { limit: 10 })).toBe("created");
  const poll = async (client: { page(q: { after: string | null }): Promise<Issuance[]> }) => {
    const poller = new WatchPoller({
      store, clock: systemClock, logger: createLogger("error"), client: client as any, intervalMs: 3_600_000,
      owner: "proc_a", leaseMs: 60_000, pollMs: 1_000, addCertificate: async () => true,
    });
    await store.watches.update(scope, w.id, { updatedAt: Date.now() });
    const claimed = (await store.watches.claimDue({ owner: "proc_a", now: Number.MAX_SAFE_INTEGER - 1, leaseUntil: Number.MAX_SAFE_INTEGER, limit: 1000 })).find((x) => x.id === w.id)!;
    return poller.poll(claimed as WatchRecord);
  };
  const issued = async () => (await store.events.list(scope, { limit: 1000 })).filter((e) => e.type === "certificate.issued").map((e) => (e.data as any).dnsNames[0]);
  return { store, scope, w, poll, issued };
}

describe("a names pass cut short keeps the baseline done", () => {
  test("a 429 during the names pass: the next poll's new issuance is still announced", async () => {
    const s = await setup();
    const history = [issuance("1", "a.baseline.test")];
    // First poll: one page, then the service fails (no wait asked): the baseline stays open, cursor at 1.
    expect(await s.poll(source(history, 1, (after) => (after === "1" ? new CtFailure("HTTP 503") : null)))).toBe("failed");
    await s.store.watches.update(s.scope, s.w.id, { autoMonitor: true, updatedAt: Date.now() });
    // Second poll: nothing new after 1 (the baseline is caught up), then the names pass meets a 429.
    expect(await s.poll(source(history, 1, (after) => (after === null ? new CtFailure("HTTP 429", 1000) : null)))).toBe("rate_limited");
    // Third poll: a new issuance, first returned by a later poll than the baseline's.
    history.push(issuance("2", "new.baseline.test"));
    expect(await s.poll(source(history, 1))).toBe("ok");
    expect(await s.issued()).toEqual(["new.baseline.test"]);
  });

  test("the names pass runs out of pages: the next poll's new issuance is still announced", async () => {
    const s = await setup();
    const history = Array.from({ length: 250 }, (_, i) => issuance(String(i + 1), `n${i + 1}.baseline.test`));
    // First poll: 200 pages of 250 (a long history): baseline open, cursor at 200.
    expect(await s.poll(source(history, 1))).toBe("ok");
    // Second poll, autoMonitor off still: the rest of the baseline; baseline done.
    expect(await s.poll(source(history, 1))).toBe("ok");
    expect((await s.store.watches.get(s.scope, s.w.id))!.baselineDone).toBe(true);
    expect(await s.issued()).toEqual([]);
  });

  test("baseline reached, then names pass cut by the page budget: the new issuance is announced", async () => {
    const s = await setup();
    const history = Array.from({ length: 210 }, (_, i) => issuance(String(i + 1), `m${i + 1}.baseline.test`));
    // First poll (autoMonitor off): 200 pages, baseline still open, cursor at 200.
    expect(await s.poll(source(history, 1))).toBe("ok");
    await s.store.watches.update(s.scope, s.w.id, { autoMonitor: true, updatedAt: Date.now() });
    // Second poll: 10 more pages and an empty one end the baseline; the names pass (up to 200) then
    // runs out of this poll's 200 pages.
    expect(await s.poll(source(history, 1))).toBe("ok");
    history.push(issuance("211", "fresh.baseline.test"));
    expect(await s.poll(source(history, 1))).toBe("ok");
    expect(await s.issued()).toEqual(["fresh.baseline.test"]);
  });
});
