/** The shared renewal-information cache (RFC 9773 answers by certID), in memory. */
import type { RenewalInfoCache } from "../../core/store/mod.ts";
import type { RenewalInfo } from "../../core/base/mod.ts";
import { deepFreeze } from "./state.ts";

export function memoryRenewalInfo(): RenewalInfoCache {
  const kept = new Map<string, { info: RenewalInfo; expiresAt: number }>();
  const claims = new Map<string, { owner: string; until: number }>();
  return {
    async get(certId) {
      const entry = kept.get(certId);
      // Kept frozen, and shared: what ARI said about a leaf is replaced whole, never changed.
      return entry ? entry.info : null;
    },
    async put(certId, info, expiresAt, now) {
      kept.set(certId, { info: deepFreeze({ ...info, window: info.window && { ...info.window } }), expiresAt });
      // Nobody asks about an expired leaf again: drop those now and then so the map stays small.
      if (kept.size % 1024 === 0) {
        for (const [other, entry] of kept) if (entry.expiresAt < now) kept.delete(other);
        for (const [other, claim] of claims) if (claim.until <= now) claims.delete(other);
      }
    },
    async claim(certId, owner, now, until, latest) {
      const held = claims.get(certId);
      if (held && held.owner !== owner && held.until > now && held.until <= latest) return false;
      claims.set(certId, { owner, until });
      return true;
    },
  };
}
