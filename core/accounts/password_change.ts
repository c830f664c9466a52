/**
 * A signed-in user changes their own password: the current one is verified first (behind the sign-in
 * slowdown, so a borrowed session cannot guess it), the new one replaces it, and every session of the
 * user ends; the caller gets a fresh session for the browser that made the change.
 */
import type { PasswordHasher } from "./admin.ts";
import type { Admin } from "./admin.ts";
import { MIN_PASSWORD_LENGTH } from "./admin.ts";
import type { Store } from "../store/ports.ts";
import type { Clock } from "../base/time.ts";
import type { Sessions, SignedIn } from "./sessions.ts";
import type { Logger } from "../base/log.ts";
import { AttemptsInFlight, emailThrottleKey, SIGN_IN_THROTTLE, waitFor, type ThrottlePolicies, type ThrottlePolicy } from "./sign_in_throttle.ts";
import type { UserRecord } from "../base/records.ts";

export type PasswordChangeResult =
  | { ok: true; token: string }
  | { ok: false; reason: "wrong_current" | "mismatch" | "too_short" | "same" | "unavailable" }
  | { ok: false; reason: "throttled"; retryAfterSeconds: number };

export class PasswordChange {
  readonly #inFlight: AttemptsInFlight;

  constructor(
    private readonly options: {
      store: Store;
      clock: Clock;
      admin: Admin;
      sessions: Sessions;
      passwords?: PasswordHasher;
      policy?: ThrottlePolicies;
      logger?: Logger;
      /** Shared with sign-in: both count under the email's key. */
      inFlight?: AttemptsInFlight;
    },
  ) {
    this.#inFlight = options.inFlight ?? new AttemptsInFlight();
  }

  async change(me: SignedIn, input: { current: string; next: string; confirm: string }): Promise<PasswordChangeResult> {
    const { store, clock, admin, sessions, passwords } = this.options;
    if (!passwords) return { ok: false, reason: "unavailable" };
    const policy = (this.options.policy ?? SIGN_IN_THROTTLE).email;
    const key = emailThrottleKey(me.user.email);
    const stored = await store.signInAttempts.get(key);
    // Judged and counted as under way with no await between: guesses sent at once see each other.
    const now = clock.now();
    const wait = waitFor(this.#inFlight.withPending(key, { stored, policy, now }), policy, now);
    if (wait > 0) return { ok: false, reason: "throttled", retryAfterSeconds: Math.ceil(wait / 1000) };

    const current = String(input.current ?? "");
    const settled = this.#inFlight.begin([key]);
    const user = await this.#verified(me, { current, key, policy }).finally(settled);
    if (!user) return { ok: false, reason: "wrong_current" };
    const next = String(input.next ?? "");
    if (next.length < MIN_PASSWORD_LENGTH || next.length > 1024) return { ok: false, reason: "too_short" };
    if (next !== String(input.confirm ?? "")) return { ok: false, reason: "mismatch" };
    if (next === current) return { ok: false, reason: "same" };

    // Whoever else held a session (another browser, a stolen cookie) is signed out; this browser gets a
    // new one. Before the new password is written as well as after: a crash between the two writes
    // never leaves a session of before the change alive beside the new password.
    await store.sessions.removeByUser(me.user.id);
    await admin.setPassword(me.user.id, next);
    await store.sessions.removeByUser(me.user.id);
    const { token } = await sessions.start(user);
    return { ok: true, token };
  }

  /** The user, when `current` is their password; a wrong one is counted as a failed sign-in of the email. */
  async #verified(me: SignedIn, check: { current: string; key: string; policy: ThrottlePolicy }): Promise<UserRecord | null> {
    const { store, clock, passwords } = this.options;
    const user = await store.users.get(me.user.id);
    const { current } = check;
    if (user?.passwordHash && current.length > 0 && current.length <= 1024 && (await passwords!.verify(current, user.passwordHash))) return user;
    await store.signInAttempts.fail(check.key, { now: clock.now(), windowMs: check.policy.windowMs });
    // Counted as a failed sign-in of the email (the slowdown), and logged as one.
    this.options.logger?.warn("sign-in failed", { email: me.user.email, reason: "wrong current password on a password change", userId: me.user.id });
    return null;
  }
}
