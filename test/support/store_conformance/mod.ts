/**
 * The store conformance suite (STYLE §5, after Lucia's `adapter-test`): every behaviour that
 * core/store/ports.ts documents, registered as bun:test blocks and run against any {@link Store}.
 *
 * One store serves the whole suite, as one database serves every process in production, so tests
 * keep to organizations of their own and never assume they are alone. Only the operations that span
 * all organizations (leases, next-due times, listAll) see other tests' data: their tests first park
 * every leftover lease far in the future (`parkLeftovers()` in _helpers.ts) and then use times
 * before it. One file per area registers its part; factories.ts builds the records.
 *
 * @example
 * describeStoreConformance("memory", async () => {
 *   const store = createMemoryStore();
 *   return { store, close: () => store.close() };
 * });
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Store } from "../../../core/store/ports.ts";
import { describeAccounts } from "./accounts.ts";
import { describeCertificateWrites } from "./certificate_writes.ts";
import { describeCertificateReads } from "./certificate_reads.ts";
import { describeCertificateLeases } from "./certificate_leases.ts";
import { describeCertificateTargets } from "./certificate_targets.ts";
import { describeCertificateDns } from "./certificate_dns.ts";
import { describeCertificateDeployment } from "./certificate_deployment.ts";
import { describeChannels } from "./channels.ts";
import { describeEvents } from "./events.ts";
import { describeDeliveries } from "./deliveries.ts";
import { describeRateLimits } from "./rate_limits.ts";
import { describeSettingsConformance } from "./sessions.ts";
import { describeChangeToken } from "./change_token.ts";
import { describeWatches } from "./watches.ts";
import { describeFleet } from "./fleet.ts";
import { describeImports } from "./imports.ts";
import { describeCtLogs } from "./ct_logs.ts";

export * from "./factories.ts";

export interface OpenedStore {
  store: Store;
  close(): Promise<void>;
}

export interface ConformanceOptions {
  /** Whether the store offers `changeToken()` (default true); a store that cannot tell must not. */
  changeToken?: boolean;
}

/**
 * Registers the suite for one store. `open` must give an empty store; it is opened once, before the
 * suite, and closed after it.
 */
export function describeStoreConformance(name: string, open: () => Promise<OpenedStore>, options: ConformanceOptions = {}): void {
  describe(`${name} store`, () => {
    let opened: OpenedStore | undefined;
    let store: Store;
    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    test("a new store is empty and answers ping()", async () => {
      await store.ping();
      expect(await store.certificates.nextDueAt()).toBeNull();
      expect(await store.events.nextDeliveryAt()).toBeNull();
      expect(await store.certificates.listAll({ limit: 10 })).toEqual([]);
      expect(await store.organizations.list()).toEqual([]);
    });

    describeAccounts(() => store);
    describeCertificateWrites(() => store);
    describeCertificateReads(() => store);
    describeCertificateLeases(() => store);
    describeCertificateTargets(() => store);
    describeCertificateDns(() => store);
    describeCertificateDeployment(() => store);
    describeChannels(() => store);
    describeEvents(() => store);
    describeDeliveries(() => store);
    describeRateLimits(() => store);
    describeSettingsConformance(() => store);
    describeWatches(() => store);
    describeChangeToken(() => store, options.changeToken ?? true);
    describeFleet(() => store);
    describeImports(() => store);
    describeCtLogs(() => store);
  });
}
