/**
 * Sign-in with email and password (argon2id through the injected {@link PasswordHasher}), behind the
 * slowdown of sign_in_throttle.ts. A wrong email and a wrong password are answered alike, in about
 * the same time.
 */
import type { PasswordHasher } from "./admin.ts";
import type { UserRecord } from "../base/records.ts";
import type { Store } from "../store/ports.ts";
import type { Clock } from "../base/time.ts";
import { randomBase62 } from "../base/ids.ts";
import { addressThrottleKey, AttemptsInFlight, emailThrottleKey, SIGN_IN_THROTTLE, waitFor, type ThrottlePolicies } from "./sign_in_throttle.ts";
import type { Sessions } from "./sessions.ts";
import { silentLogger, type Logger } from "../base/log.ts";

export interface SignInInput {
  email: string;
  password: string;
  /** The client's address, when known: failures are also counted per address. */
  clientAddress?: string;
}

export type SignInResult =
  | { ok: true; token: string; user: UserRecord }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "throttled"; retryAfterSeconds: number };

export class SignIn {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #passwords: PasswordHasher | undefined;
  readonly #sessions: Sessions;
  readonly #policy: ThrottlePolicies;
  readonly #logger: Logger;
  readonly #inFlight: AttemptsInFlight;
  #decoy: Promise<string> | undefined;

  constructor(options: { store: Store; clock: Clock; sessions: Sessions; passwords?: PasswordHasher; policy?: ThrottlePolicies; logger?: Logger; inFlight?: AttemptsInFlight }) {
    this.#logger = options.logger ?? silentLogger;
    this.#inFlight = options.inFlight ?? new AttemptsInFlight();
    this.#store = options.store;
    this.#clock = options.clock;
    this.#passwords = options.passwords;
    this.#sessions = options.sessions;
    this.#policy = options.policy ?? SIGN_IN_THROTTLE;
  }

  /** Whether sign-in can work here at all (a password hasher was supplied). */
  get available(): boolean {
    return this.#passwords !== undefined;
  }

  async attempt(input: SignInInput): Promise<SignInResult> {
    if (!this.#passwords) throw new Error("no password hasher configured");
    const email = String(input.email ?? "").trim().toLowerCase();
    const password = String(input.password ?? "");
    const keys: Array<[string, keyof ThrottlePolicies]> = [[emailThrottleKey(email), "email"]];
    if (input.clientAddress) keys.push([addressThrottleKey(input.clientAddress), "address"]);

    const stored = await Promise.all(keys.map(([key]) => this.#store.signInAttempts.get(key)));
    // Judged and counted as under way with no await between: attempts sent at once see each other.
    const now = this.#clock.now();
    const wait = Math.max(
      ...keys.map(([key, kind], i) => waitFor(this.#inFlight.withPending(key, { stored: stored[i]!, policy: this.#policy[kind], now }), this.#policy[kind], now)),
    );
    // The email as typed (bounded), never the password: who was tried, and from where.
    const failed = (reason: string) =>
      this.#logger.warn("sign-in failed", { email: email.slice(0, 254), reason, ...(input.clientAddress ? { clientAddress: input.clientAddress } : {}) });
    if (wait > 0) {
      failed("throttled");
      return { ok: false, reason: "throttled", retryAfterSeconds: Math.ceil(wait / 1000) };
    }
    const settled = this.#inFlight.begin(keys.map(([key]) => key));
    try {
      return await this.#verify({ email, password, keys, failed });
    } finally {
      settled();
    }
  }

  /** The attempt once admitted: its password verified, a failure counted, a session started. */
  async #verify(attempt: { email: string; password: string; keys: Array<[string, keyof ThrottlePolicies]>; failed: (reason: string) => void }): Promise<SignInResult> {
    const { email, password, keys, failed } = attempt;
    const passwords = this.#passwords!;
    const user = email === "" || email.length > 254 ? null : await this.#store.users.findByEmail(email);
    // Without a user, verify against a decoy hash anyway: the answer takes as long either way.
    const hash = user?.passwordHash ?? (await this.#decoyHash(passwords));
    const verified = password.length > 0 && password.length <= 1024 && (await passwords.verify(password, hash));
    if (!verified || !user?.passwordHash) {
      const at = this.#clock.now();
      await Promise.all(keys.map(([key, kind]) => this.#store.signInAttempts.fail(key, { now: at, windowMs: this.#policy[kind].windowMs })));
      failed(user ? (user.passwordHash ? "wrong password" : "no password set") : "no such user");
      return { ok: false, reason: "invalid" };
    }

    // Only the email's count is forgotten: one good account must not reset an address's count.
    await this.#store.signInAttempts.clear(keys[0]![0]);
    const { token } = await this.#sessions.start(user);
    // The password may have changed (or the user gone) while it was being verified: a change ends the
    // user's sessions after writing the new hash, and this one may have opened after that. Read once
    // the session exists, a hash still the one verified means any later change ends it too.
    const current = await this.#store.users.get(user.id);
    if (current?.passwordHash !== user.passwordHash) {
      await this.#sessions.end(token);
      failed("password changed meanwhile");
      return { ok: false, reason: "invalid" };
    }
    await this.#housekeeping();
    return { ok: true, token, user };
  }

  #decoyHash(passwords: PasswordHasher): Promise<string> {
    this.#decoy ??= passwords.hash(randomBase62(24));
    return this.#decoy;
  }

  /** Sign-ins are rare: a good moment to forget expired sessions and old counts. */
  async #housekeeping(): Promise<void> {
    const now = this.#clock.now();
    await this.#store.sessions.removeExpired(now);
    await this.#store.signInAttempts.prune(now - Math.max(this.#policy.email.windowMs, this.#policy.address.windowMs));
  }
}
