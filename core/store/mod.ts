/** The store ports adapters implement (one conformance suite checks each), and core's read cache. */
export * from "./ports.ts";
export { freeze, resumeReadCache, stopReadCache, withReadCache } from "./read_cache.ts";
export { candidatesPerOrganization, fairShare, type FairShareCandidate, type FairShareOptions } from "./fair_share.ts";
export { movedLogs } from "./ct_log_moves.ts";
