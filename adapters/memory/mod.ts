/**
 * The in-memory store: the same behaviour as the SQL store (one conformance suite checks both), for
 * embedding and fast tests. Records are copied in and out, so callers never share state with it; the
 * one exception is a certificate's parsed details, which are frozen and shared (replaced whole, never
 * changed, and copied on every check).
 *
 * @example
 * const store = createMemoryStore();
 */
import type { Store } from "../../core/store/mod.ts";
import { MemoryState } from "./state.ts";
import { memoryAccounts } from "./accounts.ts";
import { memoryCertificates } from "./certificates.ts";
import { memoryChannels, memoryEvents } from "./notifications.ts";
import { memoryImports } from "./imports.ts";
import { memorySessions, memorySignInAttempts } from "./sessions.ts";
import { memoryRevocations, memoryWatches } from "./watches.ts";
import { memoryRenewalInfo } from "./renewal_info.ts";

export function createMemoryStore(): Store {
  const state = new MemoryState();
  const accounts = memoryAccounts(state);
  return {
    ...accounts,
    certificates: memoryCertificates(state),
    channels: memoryChannels(state),
    events: memoryEvents(state),
    imports: memoryImports(state),
    sessions: memorySessions(state),
    signInAttempts: memorySignInAttempts(state),
    revocations: memoryRevocations(state),
    renewalInfo: memoryRenewalInfo(),
    watches: memoryWatches(state),
    shared: false,
    changeToken: () => String(state.writes),
    async ping() {},
    async close() {},
  };
}
