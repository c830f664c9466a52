/**
 * Every store certkeeper ships, held to core/store/ports.ts by one suite: the in-memory store, and the
 * SQL store over libSQL as an embedded file, in memory, and on a real libSQL server. Then what only
 * shows with two clients of one database (two processes): races between them, and the change token.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import type { Store } from "../core/store/ports.ts";
import type { CertificateRecord, Scope } from "../core/base/records.ts";
import { HOUR, MINUTE } from "../core/base/time.ts";
import {
  apiKeyRecord,
  certificateRecord,
  channelRecord,
  deliveryRecord,
  describeStoreConformance,
  eventRecord,
  NOW,
  organizationRecord,
  userRecord,
} from "./support/store_conformance/mod.ts";
import { startSqld } from "./support/sqld.ts";

function tempDatabase() {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-store-"));
  return { url: `file:${join(dir, "certkeeper.db")}`, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describeStoreConformance("memory", async () => {
  const store = createMemoryStore();
  return { store, close: () => store.close() };
});

describeStoreConformance("libSQL file", async () => {
  const database = tempDatabase();
  const store = await openLibsqlStore({ url: database.url });
  return {
    store,
    async close() {
      await store.close();
      database.remove();
    },
  };
});

describeStoreConformance("libSQL :memory:", async () => {
  const store = await openLibsqlStore({ url: ":memory:" });
  return { store, close: () => store.close() };
});

describeStoreConformance(
  "libSQL server (sqld)",
  async () => {
    const sqld = await startSqld();
    const store = await openLibsqlStore({ url: sqld.url });
    return {
      store,
      async close() {
        await store.close();
        await sqld.close();
      },
    };
  },
  // Other processes write to a server unseen: the store cannot offer a change token.
  { changeToken: false },
);

describe("libSQL file shared with another client", () => {
  test("a write by a second client (another process, such as the CLI) changes the first store's changeToken()", async () => {
    const database = tempDatabase();
    const api = await openLibsqlStore({ url: database.url });
    const cli = await openLibsqlStore({ url: database.url });
    try {
      const org = organizationRecord();
      const user = userRecord(org.id);
      const key = apiKeyRecord(user);
      await api.organizations.create(org);
      await api.users.create(user);
      await api.apiKeys.create(key);

      const before = api.changeToken!();
      expect(api.changeToken!()).toBe(before);
      expect(await cli.apiKeys.revoke(key.id, NOW)).toEqual({ ...key, revokedAt: NOW });
      const after = api.changeToken!();
      expect(after).not.toBe(before);
      expect((await api.apiKeys.findByHash(key.hash))?.key.revokedAt).toBe(NOW);

      // And again: every commit of the other client moves it, not only the first one seen.
      await cli.apiKeys.touch([{ id: key.id, at: NOW + 1 }]);
      expect(api.changeToken!()).not.toBe(after);
    } finally {
      await cli.close();
      await api.close();
      database.remove();
    }
  });
});

/** Races between two clients of one database, as between two certkeeper processes. */
function describeTwoClients(name: string, database: () => Promise<{ url: string; close(): Promise<void> }>) {
  describe(`two clients of one ${name}`, () => {
    let url: string;
    let closeDatabase: (() => Promise<void>) | undefined;
    let a: Store;
    let b: Store;
    beforeAll(async () => {
      ({ url, close: closeDatabase } = await database());
      a = await openLibsqlStore({ url });
      b = await openLibsqlStore({ url });
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await closeDatabase?.();
    });

    async function scope(): Promise<Scope> {
      const org = organizationRecord();
      await a.organizations.create(org);
      return { organizationId: org.id, mode: "live" };
    }

    test("claimDue() of both at once lease disjoint sets", async () => {
      const live = await scope();
      const due = Array.from({ length: 12 }, (_, i) => certificateRecord(live, { nextCheckAt: NOW - i }));
      for (const record of due) await a.certificates.insert(record, { limit: 100, events: [] });
      const lease = { now: NOW, leaseUntil: NOW + HOUR, limit: 8 };
      const [fromA, fromB] = await Promise.all([
        a.certificates.claimDue({ ...lease, owner: "a" }),
        b.certificates.claimDue({ ...lease, owner: "b" }),
      ]);
      expect(fromA.length + fromB.length).toBe(12);
      expect([...fromA, ...fromB].map((r) => r.id).sort()).toEqual(due.map((r) => r.id).sort());
    });

    test("claimDueDeliveries() of both at once lease disjoint sets", async () => {
      const live = await scope();
      const channels = Array.from({ length: 3 }, () => channelRecord(live));
      for (const channel of channels) await a.channels.insert(channel, { limit: 10 });
      const keys: string[] = [];
      for (let i = 0; i < 4; i++) {
        const event = eventRecord(live);
        await a.events.insert(event, channels.map((channel) => deliveryRecord(event.id, channel.id, { nextAttemptAt: NOW - i })));
        keys.push(...channels.map((channel) => `${event.id} ${channel.id}`));
      }
      const lease = { now: NOW, leaseUntil: NOW + HOUR, limit: 8 };
      const [fromA, fromB] = await Promise.all([
        a.events.claimDueDeliveries({ ...lease, owner: "a" }),
        b.events.claimDueDeliveries({ ...lease, owner: "b" }),
      ]);
      const claimed = [...fromA, ...fromB].map((job) => `${job.delivery.eventId} ${job.delivery.channelId}`);
      expect(claimed.sort()).toEqual(keys.sort());
    });

    test("inserts of one domain by both at once: exactly one is created", async () => {
      const live = await scope();
      const domain = "race.example.com";
      const results = await Promise.all(
        [a, b, a, b, a, b].map((store) => store.certificates.insert(certificateRecord(live, { domain }), { limit: 100, events: [] })),
      );
      expect(results.sort()).toEqual(["created", "duplicate", "duplicate", "duplicate", "duplicate", "duplicate"]);
    });

    test("claimDue() hands out the other client's save of a certificate this one saved last", async () => {
      const live = await scope();
      const record = certificateRecord(live, { nextCheckAt: NOW - MINUTE });
      await a.certificates.insert(record, { limit: 100, events: [] });
      const saved = { ...record, lastCheckedAt: NOW, nextCheckAt: NOW - 1, failureCount: 1 };
      expect(await a.certificates.saveCheck(saved, [], { detailsChanged: false })).toBe(true);
      expect(await b.certificates.saveCheck({ ...saved, version: 1, failureCount: 2 }, [], { detailsChanged: false })).toBe(true);
      const claimed = await a.certificates.claimDue({ owner: "a", now: NOW, leaseUntil: NOW + HOUR, limit: 100 });
      expect(claimed.find((r) => r.id === record.id)).toMatchObject({ version: 2, failureCount: 2 });
    });

    test("claimDue() hands out certificates as stored whether this client saved them last, the other did, or both in turn", async () => {
      const live = await scope();
      const records = Array.from({ length: 4 }, (_, i) => certificateRecord(live, { nextCheckAt: NOW - HOUR + i }));
      for (const record of records) await a.certificates.insert(record, { limit: 100, events: [] });
      let at = NOW;
      let current = records;
      /** Saves the first `count` through `store` as unchanged re-checks due again at once. */
      const save = async (store: Store, failureCount: number, count = current.length) => {
        const saved = current.slice(0, count).map((r) => ({ ...r, lastCheckedAt: at, nextCheckAt: at, failureCount }));
        expect(await Promise.all(saved.map((r) => store.certificates.saveCheck(r, [], { detailsChanged: false })))).toEqual(saved.map(() => true));
        current = [...saved.map((r) => ({ ...r, version: r.version + 1 })), ...current.slice(count)];
      };
      /** Claims them with `a`: exactly as a read gives them just before. */
      const claimAll = async () => {
        const byId = (x: CertificateRecord, y: CertificateRecord) => x.id.localeCompare(y.id);
        const stored = (await Promise.all(current.map((r) => b.certificates.get(live, r.id)))) as CertificateRecord[];
        const claimed = await a.certificates.claimDue({ owner: "a", now: at, leaseUntil: at + MINUTE, limit: 100 });
        expect([...claimed].sort(byId)).toEqual(stored.sort(byId));
        at += 2 * MINUTE;
        current = [...claimed].sort(byId);
      };
      await claimAll();
      // Saved by this client, claimed twice.
      await save(a, 1);
      await claimAll();
      await save(a, 2);
      await claimAll();
      // Saved by this client, then all again by the other: none as this one kept them.
      await save(a, 3);
      await save(b, 4);
      await claimAll();
      await save(a, 5);
      await claimAll();
      // Half of them saved again by the other.
      await save(a, 6);
      await save(b, 7, 2);
      await claimAll();
      expect(current.map((r) => r.failureCount)).toEqual([7, 7, 6, 6]);
    });

    test("saveCheck() by both from one version: exactly one wins", async () => {
      const live = await scope();
      const record = certificateRecord(live);
      await a.certificates.insert(record, { limit: 100, events: [] });
      const [byA, byB] = await Promise.all([
        a.certificates.saveCheck({ ...record, lastCheckedAt: NOW, failureCount: 1 }, []),
        b.certificates.saveCheck({ ...record, lastCheckedAt: NOW, failureCount: 2 }, []),
      ]);
      expect([byA, byB].filter(Boolean)).toHaveLength(1);
      expect(await b.certificates.get(live, record.id)).toMatchObject({ version: 1, failureCount: byA ? 1 : 2 });
    });
  });
}

// Not for a database file: two clients of one file in one process cannot race, as embedded SQLite
// waits for a lock synchronously, blocking the very event loop that would release it. Processes
// racing on a file are the multi-process tests' subject.
describeTwoClients("libSQL server", startSqld);
