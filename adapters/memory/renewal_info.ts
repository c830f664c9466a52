/** The shared renewal-information cache (RFC 9773 answers by certID), in memory. */
import type { RenewalInfoCache } from "../../core/store/mod.ts";
import type { RenewalInfo } from "../../core/base/mod.ts";

export function memoryRenewalInfo(): RenewalInfoCache {
  const kept = new Map<string, { info: RenewalInfo; expiresAt: number }>();
  return {
    async get(certId) {
      const entry = kept.get(certId);
      return entry ? structuredClone(entry.info) : null;
    },
    async put(certId, info, expiresAt) {
      kept.set(certId, { info: structuredClone(info), expiresAt });
      // Nobody asks about an expired leaf again: drop those now and then so the map stays small.
      if (kept.size % 1024 === 0) {
        const now = info.checkedAt ?? info.nextAt;
        for (const [other, entry] of kept) if (entry.expiresAt < now) kept.delete(other);
      }
    },
  };
}
