/**
 * CONTRACT §15 and §21: with autoMonitor, every DNS name of a currently valid issuance is added, from
 * either source. A watch whose cursor was kept under the search service, polled after switching to
 * CERTKEEPER_CT_SOURCE=logs, reads the follower's records from their start; that first pass raises no
 * event (the follower raised them), but autoMonitor still adds the names it reads.
 */
import { expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { WatchPoller, type IssuanceSource } from "../core/watches/mod.ts";
import type { Issuance } from "../core/watches/issuance.ts";
import type { Store } from "../core/store/ports.ts";
import type { Scope, WatchRecord } from "../core/base/records.ts";
import { createLogger } from "../core/base/log.ts";
import { systemClock } from "../core/base/time.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";

const DAY = 86_400_000;

function issuance(id: string, names: string[]): Issuance {
  return {
    id,
    dnsNames: names,
    issuerFriendlyName: "Let's Encrypt",
    issuerName: "C=US, O=Let's Encrypt, CN=R11",
    notBefore: Date.now() - DAY,
    notAfter: Date.now() + 60 * DAY,
    certSha256: "ab".repeat(32),
    tbsSha256: "cd".repeat(32),
  };
}

test("switched from the search service to the logs: the names of the follower's records are added", async () => {
  const store: Store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const recorded = [issuance("1", ["switch.test"]), issuance("2", ["www.switch.test"])];
  // The follower's records, a page at a time, as RecordedIssuances reads them.
  const source: IssuanceSource = {
    page: async ({ after }) => recorded.filter((i) => after === null || Number(i.id) > Number(after)),
  };
  const added: string[] = [];
  const poller = new WatchPoller({
    store,
    clock: systemClock,
    logger: createLogger("error"),
    client: source,
    recordsIssuances: false,
    intervalMs: 3_600_000,
    owner: "proc_a",
    leaseMs: 60_000,
    pollMs: 1_000,
    addCertificate: async (_w: WatchRecord, name: string) => {
      added.push(name);
      return true;
    },
  });
  // Polled under the search service before: its cursor names that source.
  const w = watchRecord(scope, { nextPollAt: 0, domain: "switch.test", autoMonitor: true, cursor: "search:900", baselineDone: true });
  expect(await store.watches.insert(w, { limit: 10 })).toBe("created");
  const claimed = (await store.watches.claimDue({ owner: "proc_a", now: Number.MAX_SAFE_INTEGER - 1, leaseUntil: Number.MAX_SAFE_INTEGER, limit: 10 })).find((x) => x.id === w.id)!;
  expect(await poller.poll(claimed)).toBe("ok");
  expect(added.sort()).toEqual(["switch.test", "www.switch.test"]);
  const after = (await store.watches.get(scope, w.id))!;
  expect(after.lastError).toBeNull();
  expect((await store.events.list(scope, { limit: 10 })).filter((e) => e.type === "certificate.issued")).toEqual([]);
});
