/** Imports in memory, with the SQL store's leases and settle-at-most-once semantics. */
import type { ImportStore } from "../../core/store/mod.ts";
import type { ImportItemResult, ImportRecord } from "../../core/base/mod.ts";
import { copy, inScope, type MemoryState } from "./state.ts";
import { memoryCertificates } from "./certificates.ts";

interface StoredImport {
  record: ImportRecord;
  leaseOwner: string | null;
  leaseUntil: number;
  items: Array<{ body: string; result: ImportItemResult | null }>;
}

export function memoryImports(state: MemoryState): ImportStore {
  const imports = new Map<string, StoredImport>();
  const certificates = memoryCertificates(state);
  return {
    async create(record, items, maxRunning) {
      let running = 0;
      for (const i of imports.values()) if (inScope(i.record, record) && i.record.status === "running") running++;
      if (running >= maxRunning) return false;
      state.write();
      imports.set(record.id, { record: copy(record), leaseOwner: null, leaseUntil: 0, items: items.map((body) => ({ body, result: null })) });
      return true;
    },
    async get(scope, id) {
      const stored = imports.get(id);
      return stored && inScope(stored.record, scope) ? copy(stored.record) : null;
    },
    async results(importId) {
      return copy((imports.get(importId)?.items ?? []).flatMap((item) => (item.result ? [item.result] : [])));
    },
    async claim({ owner, now, leaseUntil, limit, latest = Infinity }) {
      // An organization's turn: the latest lease of its running imports (served lately: late in line).
      const served = new Map<string, number>();
      for (const i of imports.values()) {
        if (i.record.status === "running") served.set(i.record.organizationId, Math.max(served.get(i.record.organizationId) ?? -Infinity, i.leaseUntil));
      }
      const turn = (i: { record: ImportRecord }) => served.get(i.record.organizationId)!;
      const due = [...imports.values()]
        .filter((i) => i.record.status === "running" && (i.leaseUntil <= now || i.leaseUntil > latest))
        .sort((a, b) => turn(a) - turn(b) || a.leaseUntil - b.leaseUntil || a.record.createdAt - b.record.createdAt)
        .slice(0, limit);
      if (due.length > 0) state.write();
      for (const stored of due) Object.assign(stored, { leaseOwner: owner, leaseUntil });
      return due.map((stored) => copy(stored.record));
    },
    async nextClaimAt({ latest = Infinity } = {}) {
      let next: number | null = null;
      for (const i of imports.values()) {
        const at = i.leaseUntil > latest ? 0 : i.leaseUntil;
        if (i.record.status === "running" && (next === null || at < next)) next = at;
      }
      return next;
    },
    async renew(id, owner, leaseUntil) {
      const stored = imports.get(id);
      if (!stored || stored.leaseOwner !== owner || stored.record.status !== "running") return false;
      stored.leaseUntil = leaseUntil;
      return true;
    },
    async pending(importId, { afterIndex, limit }) {
      const items = imports.get(importId)?.items ?? [];
      const pending: Array<{ index: number; body: string }> = [];
      for (let index = afterIndex + 1; index < items.length && pending.length < limit; index++) {
        if (!items[index]!.result) pending.push({ index, body: items[index]!.body });
      }
      return pending;
    },
    async prune({ before, limit }) {
      const old = [...imports.values()]
        .filter((i) => i.record.status === "finished" && i.record.finishedAt !== null && i.record.finishedAt < before)
        .sort((a, b) => a.record.finishedAt! - b.record.finishedAt!)
        .slice(0, limit);
      if (old.length > 0) state.write();
      for (const stored of old) imports.delete(stored.record.id);
      return old.length;
    },
    async trim(scope, keep) {
      const old = [...imports.values()]
        .filter((i) => inScope(i.record, scope) && i.record.status === "finished")
        .sort((a, b) => b.record.finishedAt! - a.record.finishedAt! || (a.record.id < b.record.id ? 1 : -1))
        .slice(keep);
      if (old.length > 0) state.write();
      for (const stored of old) imports.delete(stored.record.id);
      return old.length;
    },
    async settle(importId, owner, outcomes, now) {
      const stored = imports.get(importId);
      if (!stored || stored.leaseOwner !== owner || stored.record.status !== "running") return false;
      state.write();
      // The organization's limit as it is now (an operator may have changed it since the POST), as POST judges.
      const limit = state.organizations.get(stored.record.organizationId)?.limits.certificates ?? stored.record.certificateLimit;
      const record = stored.record;
      const created: string[] = [];
      for (const outcome of outcomes) {
        const item = stored.items[outcome.index];
        if (!item || item.result) continue;
        let error = outcome.kind === "failed" ? outcome.error : null;
        let certificateId: string | null = null;
        if (outcome.kind === "failed" && outcome.unlessBlocked) {
          const { target, duplicate, limitReached } = outcome.unlessBlocked;
          if (await certificates.findByDomain(record, target)) error = duplicate;
          else if ((await certificates.count(record)) >= limit) error = limitReached;
        }
        if (outcome.kind === "create") {
          const result = await certificates.insert(outcome.record, { limit, events: outcome.events });
          if (result === "created") created.push((certificateId = outcome.record.id));
          else error = result === "duplicate" ? outcome.duplicate : outcome.limitReached;
        }
        item.result = { index: outcome.index, status: error ? "failed" : "created", certificateId, error: error ? copy(error) : null };
        record.processed++;
        if (error) record.failed++;
        else record.created++;
      }
      if (record.processed >= record.total) {
        record.status = "finished";
        record.finishedAt = now;
        stored.leaseOwner = null;
      }
      return created;
    },
  };
}
