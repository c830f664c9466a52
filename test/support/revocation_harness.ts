/** A revocation checker wired to real HTTP (guarded connect) and an in-memory cache, for tests. */
import { createHttpFetcher } from "../../adapters/notify/http_fetch.ts";
import { TrustStore } from "../../core/tls/trust_store.ts";
import { Certificate } from "../../core/tls/x509.ts";
import { RevocationChecker, type RevocationAnswer, type RevocationCache } from "../../core/revocation/mod.ts";
import type { Issued } from "./pki.ts";

export function memoryCache(): RevocationCache & { entries: Map<string, RevocationAnswer> } {
  const entries = new Map<string, RevocationAnswer>();
  return {
    entries,
    async get(key, now) {
      const answer = entries.get(key);
      return answer && answer.validUntil > now ? answer : null;
    },
    async put(key, answer) {
      entries.set(key, answer);
    },
  };
}

export function checkerFor(options: { allowPrivateTargets?: boolean; timeoutMs?: number; cache?: RevocationCache } = {}) {
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: options.allowPrivateTargets ?? true });
  const failures: string[] = [];
  const cache = options.cache ?? memoryCache();
  const checker = new RevocationChecker({
    fetcher,
    cache,
    timeoutMs: options.timeoutMs ?? 2_000,
    onFailure: (failure) => failures.push(failure.message),
  });
  return {
    checker,
    failures,
    cache,
    close: () => fetcher.close(),
    ask: (leaf: Issued, issuer: Issued, extra: { stapled?: Uint8Array; now?: number; trusted?: boolean } = {}) =>
      checker.check({
        leaf: new Certificate(leaf.cert.rawData),
        issuer: new Certificate(issuer.cert.rawData),
        trusted: extra.trusted ?? true,
        stapled: extra.stapled,
        now: extra.now ?? Date.now(),
      }),
  };
}
