/** Certificates in memory, with the SQL store's ordering, leasing and compare-and-swap semantics. */
import { DELIVERY_CANCELLED, targetKey, type CertificateStore, type CertificateTarget } from "../../core/store/mod.ts";
import type { CertificateRecord } from "../../core/base/mod.ts";
import { certificateRenewalState, certificateStatus } from "../../core/certificates/mod.ts";
import { awaitsIssuance, deploymentCheckAt, supersedeDeployment } from "../../core/deployment/mod.ts";
import { copyCertificate, deepFreeze, inScope, readCertificate, sharedParts, type MemoryState } from "./state.ts";

type Stored = CertificateRecord & { leaseOwner: string | null };

/** CONTRACT §11: one certificate per domain, port, protocol and connectTo in a scope. */
function sameTarget(a: CertificateTarget, b: CertificateTarget): boolean {
  // targetKey(a) === targetKey(b), without two strings made per comparison: every insert compares
  // against each certificate of its scope.
  return a.domain === b.domain && a.port === b.port && (a.protocol ?? "tls") === (b.protocol ?? "tls") && (a.connectTo ?? null) === (b.connectTo ?? null);
}

export function memoryCertificates(state: MemoryState): CertificateStore {
  const inScopeList = (scope: Parameters<CertificateStore["count"]>[0]) =>
    [...state.certificates.values()].filter((c) => inScope(c, scope));
  const byExpiry = (a: CertificateRecord, b: CertificateRecord) =>
    a.details.notAfter - b.details.notAfter || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  return {
    async insert(record, { limit, events }) {
      const existing = inScopeList(record);
      if (existing.some((c) => sameTarget(c, record))) return "duplicate";
      if (existing.length >= limit) return "limit_reached";
      state.write();
      state.certificates.set(record.id, { ...copyCertificate(record), leaseOwner: null });
      state.indexNames(record);
      state.addEvents(events);
      return "created";
    },

    async get(scope, id) {
      const record = state.certificates.get(id);
      return record && inScope(record, scope) ? readCertificate(record) : null;
    },

    async findByDomain(scope, target) {
      const record = inScopeList(scope).find((c) => sameTarget(c, target));
      return record ? readCertificate(record) : null;
    },

    async existing(scope, targets) {
      const wanted = new Set(targets.map(targetKey));
      return new Set(inScopeList(scope).map(targetKey).filter((key) => wanted.has(key)));
    },

    async count(scope) {
      return inScopeList(scope).length;
    },

    async list(scope, query) {
      const after = query.after;
      return inScopeList(scope)
        .filter((c) => !after || c.details.notAfter > after.notAfter || (c.details.notAfter === after.notAfter && c.id > after.id))
        .filter((c) => !query.domainContains || c.domain.includes(query.domainContains))
        .filter((c) => !query.tags || query.tags.every((tag) => c.tags.includes(tag)))
        .filter((c) => !query.statuses || query.statuses.includes(certificateStatus(c, query.now).status))
        .filter((c) => !query.renewalStates || query.renewalStates.includes(certificateRenewalState(c, query.now)))
        .sort(byExpiry)
        .slice(0, query.limit)
        .map(readCertificate);
    },

    async summarize(scope, query) {
      const byStatus: Record<string, number> = {};
      const byRenewal: Record<string, number> = {};
      const expiring = new Array<number>(query.buckets).fill(0);
      for (const c of inScopeList(scope)) {
        const { status } = certificateStatus(c, query.now);
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        const renewal = certificateRenewalState(c, query.now);
        byRenewal[renewal] = (byRenewal[renewal] ?? 0) + 1;
        const bucket = Math.floor((c.details.notAfter - query.from) / query.bucketMs);
        if (c.details.notAfter >= query.from && bucket < query.buckets) expiring[bucket]!++;
      }
      return { byStatus, byRenewal, expiring };
    },

    async listAll({ limit, afterId }) {
      return [...state.certificates.values()]
        .filter((c) => c.id > (afterId ?? ""))
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map(readCertificate);
    },

    async updateSettings(scope, id, patch) {
      const record = state.certificates.get(id);
      if (!record || !inScope(record, scope)) return null;
      if (patch.connectTo !== undefined && inScopeList(scope).some((c) => c.id !== id && sameTarget(c, { ...record, connectTo: patch.connectTo! }))) {
        return "duplicate";
      }
      state.write();
      if (patch.name !== undefined) record.name = patch.name;
      if (patch.connectTo !== undefined) {
        record.connectTo = patch.connectTo;
        record.nextCheckAt = Math.min(record.nextCheckAt, patch.updatedAt);
      }
      if (patch.alertThresholds !== undefined) {
        record.alertThresholds = [...patch.alertThresholds];
        record.nextCheckAt = Math.min(record.nextCheckAt, patch.updatedAt);
      }
      if (patch.alertPolicy !== undefined && patch.alertPolicy !== record.alertPolicy) {
        record.alertPolicy = patch.alertPolicy;
        record.nextCheckAt = Math.min(record.nextCheckAt, patch.updatedAt);
      }
      if (patch.tags !== undefined) record.tags = [...patch.tags];
      if (patch.mailDomain !== undefined) record.mailDomain = patch.mailDomain;
      if (patch.mutedUntil !== undefined) record.mutedUntil = patch.mutedUntil;
      record.updatedAt = patch.updatedAt;
      record.version++;
      return readCertificate(record);
    },

    async remove(scope, id, at) {
      const record = state.certificates.get(id);
      if (!record || !inScope(record, scope)) return false;
      state.write();
      state.certificates.delete(id);
      state.unindexNames(id);
      const eventIds = new Set([...state.events.values()].filter((e) => e.certificateId === id).map((e) => e.id));
      state.cancelDeliveries((d) => eventIds.has(d.eventId), DELIVERY_CANCELLED.certificateDeleted, at);
      return true;
    },

    async claimDue({ owner, now, leaseUntil, limit }) {
      const due: Stored[] = [];
      for (const c of state.certificates.values()) if (c.nextCheckAt <= now) due.push(c);
      due.sort((a, b) => a.nextCheckAt - b.nextCheckAt);
      if (due.length > limit) due.length = limit;
      if (due.length > 0) state.write();
      return due.map((record) => {
        const claimed = readCertificate(record);
        record.nextCheckAt = leaseUntil;
        record.leaseOwner = owner;
        return claimed;
      });
    },

    async releaseLeases(owner, leases) {
      for (const lease of leases) {
        const record = state.certificates.get(lease.id);
        if (record?.leaseOwner !== owner || record.nextCheckAt !== lease.leaseUntil) continue;
        state.write();
        record.nextCheckAt = lease.nextCheckAt;
        record.leaseOwner = null;
      }
    },

    async beat(owner) {
      state.beats.set(owner, (state.beats.get(owner) ?? 0) + 1);
      return [...state.beats].filter(([other]) => other !== owner).map(([other, word]) => ({ owner: other, word }));
    },

    async giveBackLapsed(lapsed, now) {
      let given = 0;
      for (const { owner, word } of lapsed) {
        if (state.beats.get(owner) !== word) continue;
        state.beats.delete(owner);
        for (const record of state.certificates.values()) {
          if (record.leaseOwner !== owner || record.nextCheckAt <= now) continue;
          if (given++ === 0) state.write();
          record.nextCheckAt = now;
          record.leaseOwner = null;
        }
      }
      return given;
    },

    async forgetBeat(owner, now) {
      for (const record of state.certificates.values()) if (record.leaseOwner === owner && record.nextCheckAt > now) return;
      state.beats.delete(owner);
    },

    async nextDueAt() {
      let next: number | null = null;
      for (const c of state.certificates.values()) if (next === null || c.nextCheckAt < next) next = c.nextCheckAt;
      return next;
    },

    async pullForwardChecks({ now, latest, checkedAfter }) {
      let moved = 0;
      for (const record of state.certificates.values()) {
        if (record.nextCheckAt > latest && record.lastCheckedAt > checkedAfter) {
          if (moved++ === 0) state.write();
          record.nextCheckAt = now;
        }
      }
      return moved;
    },

    async capNextChecks(intervalMs) {
      let moved = 0;
      for (const record of state.certificates.values()) {
        if (record.leaseOwner === null && record.nextCheckAt > record.lastCheckedAt + intervalMs) {
          if (moved++ === 0) state.write();
          record.nextCheckAt = record.lastCheckedAt + intervalMs;
        }
      }
      return moved;
    },

    async noteIssuance(scope, { namesKey, deployment }) {
      let changed = 0;
      for (const id of state.idsWithNames(namesKey)) {
        const record = state.certificates.get(id)!;
        if (!inScope(record, scope) || !awaitsIssuance(record, { namesKey, issuedAt: deployment.issuedAt })) continue;
        if (changed++ === 0) state.write();
        record.deployment = deepFreeze(supersedeDeployment(record.deployment, deployment));
        record.nextCheckAt = Math.min(record.nextCheckAt, deploymentCheckAt(record.deployment));
        record.version++;
      }
      return changed;
    },

    async saveCheck(record, events) {
      const stored = state.certificates.get(record.id);
      if (!stored || stored.version !== record.version) return false;
      state.write();
      // Only what a check decides; name and thresholds belong to the caller (and bump the version).
      const { name, alertThresholds, alertPolicy, tags, mutedUntil, connectTo, protocol, mailDomain, ...checked } = record;
      Object.assign(stored, checked, sharedParts(record), { version: record.version + 1, leaseOwner: null });
      state.indexNames(stored);
      state.addEvents(events);
      return true;
    },
  };
}
