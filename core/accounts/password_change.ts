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
import { emailThrottleKey, SIGN_IN_THROTTLE, waitFor, type ThrottlePolicies } from "./sign_in_throttle.ts";

export type PasswordChangeResult =
  | { ok: true; token: string }
  | { ok: false; reason: "wrong_current" | "mismatch" | "too_short" | "same" | "unavailable" }
  | { ok: false; reason: "throttled"; retryAfterSeconds: number };

export class PasswordChange {
  constructor(
    private readonly options: { store: Store; clock: Clock; admin: Admin; sessions: Sessions; passwords?: PasswordHasher; policy?: ThrottlePolicies; logger?: Logger },
  ) {}

  async change(me: SignedIn, input: { current: string; next: string; confirm: string }): Promise<PasswordChangeResult> {
    const { store, clock, admin, sessions, passwords } = this.options;
    if (!passwords) return { ok: false, reason: "unavailable" };
    const policy = (this.options.policy ?? SIGN_IN_THROTTLE).email;
    const key = emailThrottleKey(me.user.email);
    const wait = waitFor(await store.signInAttempts.get(key), policy, clock.now());
    if (wait > 0) return { ok: false, reason: "throttled", retryAfterSeconds: Math.ceil(wait / 1000) };

    const user = await store.users.get(me.user.id);
    const current = String(input.current ?? "");
    const verified = Boolean(user?.passwordHash) && current.length > 0 && current.length <= 1024 && (await passwords.verify(current, user!.passwordHash!));
    if (!verified) {
      await store.signInAttempts.fail(key, { now: clock.now(), windowMs: policy.windowMs });
      // Counted as a failed sign-in of the email (the slowdown), and logged as one.
      this.options.logger?.warn("sign-in failed", { email: me.user.email, reason: "wrong current password on a password change", userId: me.user.id });
      return { ok: false, reason: "wrong_current" };
    }
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
    const { token } = await sessions.start(user!);
    return { ok: true, token };
  }
}
