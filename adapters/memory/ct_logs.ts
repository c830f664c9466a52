/** The CT log follower's lease, each log's position, and the issuances matched to watches, in memory. */
import type { EventRecord } from "../../core/base/mod.ts";
import { movedLogs, type CtIssuanceRecord, type CtLogRecord, type CtLogStore } from "../../core/store/mod.ts";
import { createHash } from "node:crypto";
import { copy, copyJson, type MemoryState } from "./state.ts";

export function memoryCtLogs(state: MemoryState): CtLogStore {
  const lease = { owner: null as string | null, until: 0 };
  const logs = new Map<string, CtLogRecord>();
  /** Each log's key, by url (a log the list moves keeps its place). */
  const keys = new Map<string, string>();
  /** Per watch, oldest first. */
  const byWatch = new Map<string, Array<CtIssuanceRecord & { seq: number }>>();
  /** `${watchId} ${issuanceKey}` → the recorded issuance. */
  const byKey = new Map<string, CtIssuanceRecord & { seq: number }>();
  let seq = 0;
  const holds = (owner: string) => lease.owner === owner;

  /**
   * An issuance kept for its watch: a copy as the SQL store keeps JSON (a structured clone of one of a
   * thousand names cost half a millisecond, a run of matches seconds), appended to the watch's list in
   * place (reads copy what they return).
   */
  const keep = (issuance: CtIssuanceRecord) => {
    const record = { ...copyJson(issuance), seq: ++seq };
    const list = byWatch.get(issuance.watchId);
    if (list) list.push(record);
    else byWatch.set(issuance.watchId, [record]);
    return record;
  };
  return {
    async leaseFollower({ owner, now, leaseUntil, latest }) {
      if (lease.owner !== null && lease.owner !== owner && lease.until >= now && lease.until <= (latest ?? Infinity)) return false;
      state.write();
      lease.owner = owner;
      lease.until = leaseUntil;
      return true;
    },
    async releaseFollower(owner) {
      if (!holds(owner)) return;
      state.write();
      lease.owner = null;
      lease.until = 0;
    },
    async list() {
      return [...logs.values()].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0)).map(copy);
    },
    async setListed(owner, listed, now) {
      if (!holds(owner)) return false;
      state.write();
      for (const [from, to] of movedLogs([...logs.values()].map((log) => ({ url: log.url, kind: log.kind, key: keys.get(log.url) })), listed)) {
        const log = logs.get(from)!;
        logs.delete(from);
        logs.set(to, Object.assign(log, { url: to }));
        keys.set(to, keys.get(from)!);
        keys.delete(from);
      }
      for (const log of logs.values()) log.listed = false;
      for (const { url, kind, keyBase64 } of listed) {
        if (keyBase64) keys.set(url, keyBase64);
        const known = logs.get(url);
        if (known) Object.assign(known, { listed: true, kind });
        else {
          logs.set(url, {
            url,
            kind,
            treeSize: null,
            rootHash: null,
            headTimestamp: null,
            position: null,
            compactRange: [],
            lastError: null,
            retryAt: null,
            listed: true,
            updatedAt: now,
          });
        }
      }
      return true;
    },
    async updateLog(owner, url, patch) {
      const log = logs.get(url);
      if (!log || !holds(owner)) return false;
      state.write();
      for (const [key, value] of Object.entries(copy(patch))) if (value !== undefined) Object.assign(log, { [key]: value });
      return true;
    },
    async startLog(owner, url, start) {
      const log = logs.get(url);
      if (!log || log.position !== null || !holds(owner)) return false;
      state.write();
      log.position = start.position;
      log.compactRange = [...start.compactRange];
      log.updatedAt = start.updatedAt;
      return true;
    },
    async commit(batch) {
      const log = logs.get(batch.url);
      if (!log || log.position !== batch.from || !holds(batch.owner)) return { saved: false, events: [] };
      state.write();
      log.position = batch.position;
      log.compactRange = [...batch.compactRange];
      log.updatedAt = batch.updatedAt;
      const events: EventRecord[] = [];
      for (const { issuance, event } of batch.matches) {
        const watch = state.watches.get(issuance.watchId);
        if (!watch) continue;
        const key = `${issuance.watchId} ${issuance.issuanceKey}`;
        const known = byKey.get(key);
        if (known) {
          if (known.fingerprint === null && issuance.fingerprint !== null) known.fingerprint = issuance.fingerprint;
          continue;
        }
        const record = keep(issuance);
        byKey.set(key, record);
        watch.issuancesSeen += 1;
        if (watch.leaseOwner === null) watch.nextPollAt = Math.min(watch.nextPollAt, batch.updatedAt);
        if (event) {
          state.addEvents([event]);
          events.push(event);
        }
      }
      return { saved: true, events };
    },
    async watchesVersion() {
      // What matching reads of every watch (the fields polls write are left out), as one string.
      let version = "";
      for (const w of state.watches.values()) {
        version += `${w.id} ${w.domain} ${w.includeSubdomains} ${w.autoMonitor} ${w.allowedIssuers.join("\u0000")} ${w.createdAt};`;
      }
      return createHash("sha256").update(version).digest("hex");
    },
    async allWatches() {
      return [...state.watches.values()]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map(({ leaseOwner: _, ...watch }) => copy(watch));
    },
    async recordSearched(issuances) {
      if (issuances.length === 0) return;
      state.write();
      for (const issuance of issuances) {
        const key = `${issuance.watchId} ${issuance.issuanceKey}`;
        if (!state.watches.has(issuance.watchId) || byKey.has(key)) continue;
        byKey.set(key, keep(issuance));
      }
    },
    async issuances(watchId, after, limit) {
      return (byWatch.get(watchId) ?? [])
        .filter((record) => record.seq > after)
        .slice(0, limit)
        .map(copy);
    },
    async pruneIssuances(notAfterBefore) {
      let pruned = 0;
      for (const [watchId, records] of byWatch) {
        const gone = !state.watches.has(watchId);
        const kept = gone ? [] : records.filter((record) => record.notAfter >= notAfterBefore);
        for (const record of records) if (!kept.includes(record)) byKey.delete(`${watchId} ${record.issuanceKey}`);
        pruned += records.length - kept.length;
        if (kept.length === 0) byWatch.delete(watchId);
        else byWatch.set(watchId, kept);
      }
      if (pruned > 0) state.write();
      return pruned;
    },
  };
}
