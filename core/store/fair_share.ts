/**
 * Which due deliveries a claim takes, shared fairly between organizations (EventStore's
 * claimDueDeliveries): an organization's n-th due delivery, earliest first, ranks n plus what the
 * caller already has in flight of that organization; lower ranks first (ties: earliest due), none
 * ranked over `perOrganization`. Equal ranks go round-robin when `after` names the organization the
 * caller served last: the organizations after it (by id, wrapping around) first. Every store applies
 * this one rule to the candidates it reads.
 *
 * @example
 * const chosen = fairShare(candidates, { limit: 8, perOrganization: 4, inFlight: { org_a: 2 } });
 */

export interface FairShareCandidate {
  organizationId: string;
  nextAttemptAt: number;
  /** Order among deliveries due at the same time (insertion order). */
  order: number;
}

export interface FairShareOptions {
  limit: number;
  perOrganization?: number;
  inFlight?: Readonly<Record<string, number>>;
  /** The organization served last: equal ranks start with the next one (round-robin). */
  after?: string;
}

/** The candidates to take, in the order taken. */
export function fairShare<T extends FairShareCandidate>(candidates: T[], options: FairShareOptions): T[] {
  const cap = options.perOrganization ?? Infinity;
  const inFlight = options.inFlight ?? {};
  const byOrganization = new Map<string, T[]>();
  for (const candidate of candidates) {
    const list = byOrganization.get(candidate.organizationId);
    if (list) list.push(candidate);
    else byOrganization.set(candidate.organizationId, [candidate]);
  }
  const ranked: Array<{ candidate: T; rank: number }> = [];
  for (const [organizationId, list] of byOrganization) {
    list.sort(earliest);
    const busy = inFlight[organizationId] ?? 0;
    for (const [i, candidate] of list.entries()) {
      const rank = busy + i + 1;
      if (rank > cap) break;
      ranked.push({ candidate, rank });
    }
  }
  const after = options.after;
  const turn =
    after === undefined
      ? () => 0
      : (a: FairShareCandidate, b: FairShareCandidate) => {
          const wrapA = a.organizationId > after ? 0 : 1;
          const wrapB = b.organizationId > after ? 0 : 1;
          return wrapA - wrapB || (a.organizationId < b.organizationId ? -1 : a.organizationId > b.organizationId ? 1 : 0);
        };
  ranked.sort((a, b) => a.rank - b.rank || turn(a.candidate, b.candidate) || earliest(a.candidate, b.candidate));
  return ranked.slice(0, options.limit).map(({ candidate }) => candidate);
}

/** How many of each organization's earliest due deliveries a store must read: no more can be taken. */
export function candidatesPerOrganization(options: FairShareOptions): number {
  return Math.min(options.limit, options.perOrganization ?? Infinity);
}

function earliest(a: FairShareCandidate, b: FairShareCandidate): number {
  return a.nextAttemptAt - b.nextAttemptAt || a.order - b.order;
}
