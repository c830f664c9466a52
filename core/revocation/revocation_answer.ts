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

/** How long an answer made at `now` with this nextUpdate may be reused. */
export function validUntil(now: number, nextUpdate: number | undefined): number {
  return Math.min(nextUpdate ?? now + DEFAULT_CACHE_MS, now + MAX_CACHE_MS);
}
