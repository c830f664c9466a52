/**
 * The sign-in slowdown. Failed sign-ins are counted per email address and per client address, in the
 * store (so every process counts together). After a few free failures each further failure makes
 * the next attempt wait, twice as long each time, up to 15 minutes; while waiting, attempts are
 * refused without looking at the password. Counts are forgotten an hour after the last failure, and
 * the email's count when that email signs in.
 */
import { createHash } from "node:crypto";
import type { SignInFailures } from "../base/records.ts";
import { HOUR, MINUTE, SECOND } from "../base/time.ts";
import { addressBlock } from "../net/mod.ts";

export interface ThrottlePolicy {
  /** Failures allowed before any wait. */
  freeFailures: number;
  /** The wait after the first failure beyond the free ones; each further failure doubles it. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** A count is forgotten this long after its last failure. */
  windowMs: number;
}

export interface ThrottlePolicies {
  email: ThrottlePolicy;
  /** Looser: many people may share one address (an office behind one NAT). */
  address: ThrottlePolicy;
}

export const SIGN_IN_THROTTLE: ThrottlePolicies = {
  email: { freeFailures: 5, firstDelayMs: 2 * SECOND, maxDelayMs: 15 * MINUTE, windowMs: HOUR },
  address: { freeFailures: 20, firstDelayMs: 2 * SECOND, maxDelayMs: 15 * MINUTE, windowMs: HOUR },
};

/** How long from `now` until the next attempt is allowed (0: at once). */
export function waitFor(failures: SignInFailures | null, policy: ThrottlePolicy, now: number): number {
  if (!failures || now - failures.lastFailureAt >= policy.windowMs) return 0;
  if (failures.failures < policy.freeFailures) return 0;
  const delay = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (failures.failures - policy.freeFailures));
  // Never longer than the delay from now: a last failure stored ahead of a clock since set back must
  // not lock anyone out for the size of the step.
  return Math.min(delay, Math.max(0, failures.lastFailureAt + delay - now));
}

/** The store key of an email's count: hashed, so what strangers type is not kept as it was typed. */
export function emailThrottleKey(email: string): string {
  return `email:${createHash("sha256").update(email.trim().toLowerCase()).digest("hex")}`;
}

/** Failures counted per client: an IPv4 address, or an IPv6 address's /64 (one client may take any address in it). */
export function addressThrottleKey(address: string): string {
  return `address:${addressBlock(address)}`;
}

/**
 * Attempts under way in this process, per throttle key: a password being verified counts as a failure
 * until it is known not to be one, so guesses sent at once cannot all be verified before the first
 * failure is recorded (they are refused as the failures they would be). Shared by sign-in and the
 * current-password check of a password change, which count under the same email key.
 */
export class AttemptsInFlight {
  readonly #counts = new Map<string, number>();

  /**
   * `stored` failures (forgotten once `policy.windowMs` has passed since the last), with this key's
   * attempts under way added as failures made `now`.
   */
  withPending(key: string, counted: { stored: SignInFailures | null; policy: ThrottlePolicy; now: number }): SignInFailures | null {
    const { stored, policy, now } = counted;
    const pending = this.#counts.get(key) ?? 0;
    if (pending === 0) return stored;
    const standing = stored && now - stored.lastFailureAt < policy.windowMs ? stored.failures : 0;
    return { failures: standing + pending, lastFailureAt: now };
  }

  /** Counts an attempt under way on each key until the returned function is called. */
  begin(keys: readonly string[]): () => void {
    for (const key of keys) this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      for (const key of keys) {
        const left = (this.#counts.get(key) ?? 1) - 1;
        if (left > 0) this.#counts.set(key, left);
        else this.#counts.delete(key);
      }
    };
  }
}
