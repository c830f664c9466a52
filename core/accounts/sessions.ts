/**
 * Browser sessions of the settings area, kept in the store so that every server process of one
 * database knows them. A session ends after 12 hours unused, 7 days after sign-in at the latest, at
 * sign-out, and when its user is removed.
 */
import type { OrganizationRecord, SessionRecord, UserRecord } from "../base/records.ts";
import type { Store } from "../store/ports.ts";
import type { Clock } from "../base/time.ts";
import { DAY, HOUR, MINUTE } from "../base/time.ts";
import { formTokenOf, isSessionToken, newSessionToken, sessionIdOf, tokensMatch } from "./session_token.ts";

export interface SessionPolicy {
  /** A session unused this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, used or not. */
  lifetimeMs: number;
  /** Use is recorded at most this often (each record is a write). */
  touchEveryMs: number;
}

export const SESSION_POLICY: SessionPolicy = { idleMs: 12 * HOUR, lifetimeMs: 7 * DAY, touchEveryMs: 5 * MINUTE };

/** A session last seen further ahead than this was used on a wall clock since set back: it ends (see resume). */
const SESSION_CLOCK_STEP_MS = HOUR;

/** Who a request comes from, once its session cookie is recognised. */
export interface SignedIn {
  session: SessionRecord;
  user: UserRecord;
  organization: OrganizationRecord;
  /** The token every form of this session carries (CSRF). */
  formToken: string;
}

export class Sessions {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly policy: SessionPolicy = SESSION_POLICY,
  ) {}

  /** Opens a session for `user`; the returned token goes in the cookie and is stored nowhere. */
  async start(user: UserRecord): Promise<{ token: string; session: SessionRecord }> {
    const token = newSessionToken();
    const now = this.clock.now();
    const session: SessionRecord = {
      id: sessionIdOf(token),
      userId: user.id,
      organizationId: user.organizationId,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: Math.min(now + this.policy.idleMs, now + this.policy.lifetimeMs),
    };
    await this.store.sessions.create(session);
    return { token, session };
  }

  /** The signed-in user of a cookie's token, or null (no such session, expired, user removed). */
  async resume(token: string | undefined | null): Promise<SignedIn | null> {
    if (!isSessionToken(token)) return null;
    const id = sessionIdOf(token);
    const session = await this.store.sessions.get(id);
    if (!session) return null;
    const now = this.clock.now();
    if (session.expiresAt <= now) {
      await this.store.sessions.remove(id);
      return null;
    }
    if (session.lastSeenAt - now > SESSION_CLOCK_STEP_MS) {
      // Last seen more than an hour in the future: the wall clock was set back since (NTP correcting a
      // clock that ran ahead). How long the session lay unused, and so when it should end, cannot be
      // known from here: it ends, and its user signs in again. (Processes whose clocks are minutes
      // apart, taking turns, do not come here.)
      await this.store.sessions.remove(id);
      return null;
    }
    const user = await this.store.users.get(session.userId);
    const organization = user && user.organizationId === session.organizationId ? await this.store.organizations.get(user.organizationId) : null;
    if (!user || !organization) {
      await this.store.sessions.remove(id);
      return null;
    }
    if (now - session.lastSeenAt >= this.policy.touchEveryMs) {
      const expiresAt = Math.min(now + this.policy.idleMs, session.createdAt + this.policy.lifetimeMs);
      await this.store.sessions.touch(id, { lastSeenAt: now, expiresAt });
      Object.assign(session, { lastSeenAt: now, expiresAt });
    }
    return { session, user, organization, formToken: formTokenOf(token) };
  }

  /** Whether a submitted form token is this session's. */
  formTokenMatches(signedIn: SignedIn, given: unknown): boolean {
    return tokensMatch(signedIn.formToken, given);
  }

  /** Signs out: the token stops working in every process. */
  async end(token: string | undefined | null): Promise<void> {
    if (isSessionToken(token)) await this.store.sessions.remove(sessionIdOf(token));
  }

  async endAllOf(userId: string): Promise<void> {
    await this.store.sessions.removeByUser(userId);
  }
}
