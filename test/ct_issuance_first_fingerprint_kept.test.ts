/**
 * One issuance per watch, whatever its logs and its precertificate or certificates (CONTRACT §21): the
 * fingerprint recorded is the first final certificate's seen; a second certificate of the same
 * TBSCertificate (another set of embedded SCTs) seen later does not replace it. Both stores alike.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import type { CtBatch, CtIssuanceRecord, Store } from "../core/store/ports.ts";
import { hex, NOW } from "./support/store_conformance/factories.ts";
import { newOrganization } from "./support/store_conformance/_helpers.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const stores: Record<string, () => Promise<Store>> = {
  memory: async () => {
    const store = createMemoryStore();
    closers.push(() => store.close());
    return store;
  },
  libsql: async () => {
    const dir = mkdtempSync(join(tmpdir(), "certkeeper-ct-fingerprint-"));
    const store = await openLibsqlStore({ url: `file:${join(dir, "certkeeper.db")}` });
    closers.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return store;
  },
};

for (const [name, open] of Object.entries(stores)) {
  describe(name, () => {
    test("a second certificate of a recorded issuance does not replace the fingerprint of the first one seen", async () => {
      const store = await open();
      const owner = "proc_follower";
      expect(await store.ctLogs.leaseFollower({ owner, now: NOW, leaseUntil: NOW + 60_000 })).toBe(true);
      const { live } = await newOrganization(store);
      const watch = watchRecord(live);
      expect(await store.watches.insert(watch, { limit: 10 })).toBe("created");
      const url = "https://ct.example/log/";
      await store.ctLogs.setListed(owner, [{ url, kind: "tiled" }], NOW);
      await store.ctLogs.startLog(owner, url, { position: 0, compactRange: [], updatedAt: NOW });
      const pre: CtIssuanceRecord = {
        watchId: watch.id,
        issuanceKey: hex(32),
        dnsNames: ["www.example.com"],
        issuerOrganization: "Let's Encrypt",
        issuerCommonName: "E7",
        notBefore: NOW - 86_400_000,
        notAfter: NOW + 89 * 86_400_000,
        fingerprint: null,
        loggedAt: NOW,
      };
      const commit = (from: number, issuance: CtIssuanceRecord) => {
        const batch: CtBatch = { owner, url, from, position: from + 1, compactRange: [hex(32)], matches: [{ issuance, event: null }], updatedAt: NOW + from };
        return store.ctLogs.commit(batch);
      };
      expect((await commit(0, pre)).saved).toBe(true);
      expect((await commit(1, { ...pre, fingerprint: "ab".repeat(32) })).saved).toBe(true);
      expect((await commit(2, { ...pre, fingerprint: "cd".repeat(32) })).saved).toBe(true);
      expect((await store.ctLogs.issuances(watch.id, 0, 10)).map((i) => i.fingerprint)).toEqual(["ab".repeat(32)]);
    });
  });
}
