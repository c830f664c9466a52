/**
 * The issuances the log follower recorded for a watch, read a page at a time as the watch poller reads
 * the search service's (CONTRACT §21 with §15): under CERTKEEPER_CT_SOURCE=logs the poller pages
 * through them to count nothing twice and to add autoMonitor's names, the events being raised already.
 */
import type { CtLogStore } from "../store/ports.ts";
import type { Issuance, IssuanceSource } from "../watches/mod.ts";
import { asIssuance } from "./issued.ts";

const PAGE = 100;

export class RecordedIssuances implements IssuanceSource {
  constructor(private readonly store: Pick<CtLogStore, "issuances">) {}

  async page(query: { watchId: string; after: string | null }): Promise<Issuance[]> {
    const after = query.after !== null && /^\d{1,16}$/.test(query.after) ? Number(query.after) : 0;
    return (await this.store.issuances(query.watchId, after, PAGE)).map(asIssuance);
  }
}
