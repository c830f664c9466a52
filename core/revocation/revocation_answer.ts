/** What a revocation source said about one certificate, and how long that answer holds. */

import type { RevocationAnswer } from "../base/records.ts";

export type { RevocationAnswer, RevocationState } from "../base/records.ts";
export type RevocationSource = RevocationAnswer["source"];

/** Why one source gave no usable answer: the message names what was wrong, never a credential. */
export class RevocationFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RevocationFailure";
  }
}

export const MAX_CACHE_MS = 7 * 24 * 60 * 60 * 1000;
/** An answer without nextUpdate is reused this long. */
export const DEFAULT_CACHE_MS = 60 * 60 * 1000;
/** Clocks of responders and ours disagree a little; thisUpdate may be this far in our future. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;

const REASONS = [
  "unspecified",
  "keyCompromise",
  "cACompromise",
  "affiliationChanged",
  "superseded",
  "cessationOfOperation",
  "certificateHold",
  null,
  "removeFromCRL",
  "privilegeWithdrawn",
  "aACompromise",
];

export function reasonName(code: number | undefined): string | null {
  return code === undefined ? null : (REASONS[code] ?? "unspecified");
}

/**
 * Throws unless an OCSP answer or a CRL with these times is current at `now`: thisUpdate not in the
 * future, nextUpdate not past, and without a nextUpdate (newer information is always available, RFC
 * 6960 §4.2.2.1; RFC 5280 requires one of CRLs) made within the last 7 days: an old signed "good",
 * replayed over plain HTTP, must not hide a revocation made since.
 */
export function assertCurrent(what: "answer" | "CRL", thisUpdate: number, nextUpdate: number | undefined, now: number): void {
  if (thisUpdate > now + CLOCK_SKEW_MS) throw new RevocationFailure(`the ${what} is dated in the future`);
  if (nextUpdate !== undefined && nextUpdate < now) throw new RevocationFailure(`the ${what} is out of date (nextUpdate has passed)`);
  if (nextUpdate === undefined && thisUpdate < now - MAX_CACHE_MS) {
    throw new RevocationFailure(`the ${what} has no nextUpdate and was made more than 7 days ago (${new Date(thisUpdate).toISOString()})`);
  }
}

/** How long an answer made at `now` with these times may be reused (one without nextUpdate: an hour, within its 7 days). */
export function validUntil(now: number, nextUpdate: number | undefined, thisUpdate: number): number {
  return Math.min(nextUpdate ?? Math.min(now + DEFAULT_CACHE_MS, thisUpdate + MAX_CACHE_MS), now + MAX_CACHE_MS);
}
