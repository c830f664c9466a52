/**
 * CONTRACT §15, autoMonitor: "a name that cannot be added ... is recorded in lastError and tried again
 * at the next poll" — with autoMonitor. A watch whose autoMonitor is turned off adds nothing more: a
 * name left waiting from a failed add is not added at the next poll, and no lastError speaks of it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { CtClient, WatchPoller } from "../core/watches/mod.ts";
import type { Store } from "../core/store/ports.ts";
import type { Scope, WatchRecord } from "../core/base/records.ts";
import { createLogger } from "../core/base/log.ts";
import { systemClock } from "../core/base/time.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";

const DAY = 86_400_000;
let script: Array<() => string> = [];
let server: ReturnType<typeof Bun.serve>;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch() {
      const next = script.shift();
      return new Response(next ? next() : "[]", { headers: { "content-type": "application/json" } });
    },
  });
});
afterAll(async () => {
  server.stop(true);
  await fetcher.close();
});

function issuance(id: string, names: string[]) {
  return {
    id,
    dns_names: names,
    not_before: new Date(Date.now() - DAY).toISOString(),
    not_after: new Date(Date.now() + 60 * DAY).toISOString(),
    cert_sha256: "ab".repeat(32),
    issuer: { friendly_name: "Let's Encrypt", name: "C=US, O=Let's Encrypt, CN=R11" },
  };
}
const page = (...items: unknown[]) => () => JSON.stringify(items);

describe("autoMonitor turned off", () => {
  test("a name whose add failed is not added at the next poll once autoMonitor is off, and lastError is cleared", async () => {
    const store: Store = createMemoryStore();
    const org = organizationRecord();
    await store.organizations.create(org);
    const scope: Scope = { organizationId: org.id, mode: "live" };
    const tried: string[] = [];
    let refuse = true;
    const poller = new WatchPoller({
      store,
      clock: systemClock,
      logger: createLogger("error"),
      client: new CtClient({ fetcher, baseUrl: `http://127.0.0.1:${server.port}`, timeoutMs: 2_000 }),
      intervalMs: 3_600_000,
      owner: "proc_a",
      leaseMs: 60_000,
      pollMs: 1_000,
      addCertificate: async (_w: WatchRecord, name: string) => {
        tried.push(name);
        if (refuse) throw new Error("no certificate could be retrieved");
        return true;
      },
    });
    const w = watchRecord(scope, { nextPollAt: 0, domain: "off.test", autoMonitor: true });
    expect(await store.watches.insert(w, { limit: 10 })).toBe("created");
    const pollOnce = async () => {
      await store.watches.update(scope, w.id, { updatedAt: Date.now() });
      const claimed = (await store.watches.claimDue({ owner: "proc_a", now: Number.MAX_SAFE_INTEGER - 1, leaseUntil: Number.MAX_SAFE_INTEGER, limit: 1000 })).find((x) => x.id === w.id);
      if (!claimed) throw new Error("not due");
      return poller.poll(claimed);
    };

    script = [page(issuance("1", ["off.test"])), page()];
    expect(await pollOnce()).toBe("ok");
    expect(tried).toEqual(["off.test"]);
    expect((await store.watches.get(scope, w.id))!.lastError).toContain("off.test");

    // The user turns autoMonitor off: the name that waited is not added any more.
    await store.watches.update(scope, w.id, { autoMonitor: false, updatedAt: Date.now() });
    refuse = false;
    tried.length = 0;
    script = [page()];
    expect(await pollOnce()).toBe("ok");
    expect(tried).toEqual([]);
    expect((await store.watches.get(scope, w.id))!.lastError).toBeNull();
  });
});
