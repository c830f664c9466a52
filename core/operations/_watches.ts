/** Helpers shared by the watch operations. */
import { CertkeeperError, quote } from "../base/errors.ts";
import { isId } from "../base/ids.ts";
import { iso } from "../base/time.ts";
import type { Scope, WatchRecord } from "../base/records.ts";
import type { WatchView } from "../schemas/watch.ts";
import type { Services } from "./services.ts";

/** The watch with this id in the caller's scope; another organization's is as missing as none. */
export async function findWatch(services: Services, scope: Scope, id: string): Promise<WatchRecord> {
  const watch = isId("wch", id) ? await services.store.watches.get(scope, id) : null;
  if (!watch) throw watchNotFound(id);
  return watch;
}

export function watchNotFound(id: string): CertkeeperError {
  return new CertkeeperError("watch_not_found", `No watch with id ${quote(id)}: list your watches with GET /v1/watches.`);
}

export function presentWatch(watch: WatchRecord): WatchView {
  return {
    id: watch.id,
    domain: watch.domain,
    includeSubdomains: watch.includeSubdomains,
    autoMonitor: watch.autoMonitor,
    allowedIssuers: watch.allowedIssuers,
    lastPolledAt: watch.lastPolledAt === null ? null : iso(watch.lastPolledAt),
    lastError: watch.lastError,
    issuancesSeen: watch.issuancesSeen,
    createdAt: iso(watch.createdAt),
    updatedAt: iso(watch.updatedAt),
  };
}
