/**
 * The Members tab: an organization's users and their roles. Owners and admins manage them, within
 * roles.ts' rules; the last owner can be neither removed nor demoted (checked atomically by the
 * store). A removed user's keys are revoked and their sessions end.
 */
import { CertkeeperError, quote } from "../base/errors.ts";
import type { Admin } from "./admin.ts";
import type { Role, UserRecord } from "../base/records.ts";
import { LastOwnerError, RoleChangedError, type Store } from "../store/ports.ts";
import type { Clock } from "../base/time.ts";
import { iso } from "../base/time.ts";
import { ROLES } from "./admin.ts";
import { mayChangeMember, mayManageMembers } from "./roles.ts";
import type { Sessions } from "./sessions.ts";
import type { Logger } from "../base/log.ts";

/** A user as the Members tab shows them: never the password hash. */
export interface MemberView {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  /** False for users made without a password (they have keys but cannot sign in). */
  canSignIn: boolean;
}

export function presentMember(user: UserRecord): MemberView {
  return { id: user.id, email: user.email, role: user.role, createdAt: iso(user.createdAt), canSignIn: user.passwordHash !== null };
}

export interface MembersOptions {
  store: Store;
  clock: Clock;
  admin: Admin;
  sessions: Sessions;
  /** Where role changes and removals are logged (default: the admin's logger). */
  logger?: Logger;
}

export class Members {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly admin: Admin;
  private readonly sessions: Sessions;
  private readonly logger: Logger;

  constructor(options: MembersOptions) {
    ({ store: this.store, clock: this.clock, admin: this.admin, sessions: this.sessions } = options);
    this.logger = options.logger ?? options.admin.logger;
  }

  async list(actor: UserRecord): Promise<MemberView[]> {
    requireManager(actor);
    return (await this.store.users.list(actor.organizationId)).map(presentMember);
  }

  async add(actor: UserRecord, input: { email: string; role: string; password: string }): Promise<MemberView> {
    requireManager(actor);
    const role = parseRole(input.role);
    if (!mayChangeMember(actor.role, null, role)) throw denied(`Only owners may add an ${role}.`);
    const user = await this.admin.createUser({ organizationId: actor.organizationId, email: input.email, role, password: input.password });
    return presentMember(user);
  }

  async changeRole(actor: UserRecord, change: { userId: string; role: string }): Promise<MemberView> {
    const { userId } = change;
    const target = await this.#colleague(actor, userId);
    const role = parseRole(change.role);
    if (!mayChangeMember(actor.role, target.role, role)) throw denied("Only owners may make someone an owner or change an owner's role.");
    try {
      // Written only if the role the permission was judged on is still the user's (an owner made
      // meanwhile is beyond an admin).
      const updated = await this.store.users.update(target.id, { role }, { keepOwner: true, whenRole: target.role });
      if (!updated) throw noSuchUser(userId);
      if (target.role !== role) {
        this.logger.info("role changed", { userId: target.id, organizationId: target.organizationId, from: target.role, to: role, by: actor.id });
      }
      return presentMember(updated);
    } catch (error) {
      if (error instanceof LastOwnerError) throw lastOwner(target, "demoted");
      if (error instanceof RoleChangedError) throw roleChanged(target);
      throw error;
    }
  }

  async remove(actor: UserRecord, userId: string): Promise<MemberView> {
    const target = await this.#colleague(actor, userId);
    if (!mayChangeMember(actor.role, target.role, null)) throw denied("Only owners may remove an owner.");
    try {
      if (!(await this.store.users.remove(target.id, this.clock.now(), { keepOwner: true, whenRole: target.role }))) throw noSuchUser(userId);
    } catch (error) {
      if (error instanceof LastOwnerError) throw lastOwner(target, "removed");
      if (error instanceof RoleChangedError) throw roleChanged(target);
      throw error;
    }
    await this.sessions.endAllOf(target.id);
    this.logger.info("user removed", { userId: target.id, organizationId: target.organizationId, role: target.role, by: actor.id });
    return presentMember(target);
  }

  /** A user of the actor's organization, which the actor may manage; another organization's is missing. */
  async get(actor: UserRecord, userId: string): Promise<MemberView> {
    return presentMember(await this.#colleague(actor, userId));
  }

  async #colleague(actor: UserRecord, userId: string): Promise<UserRecord> {
    requireManager(actor);
    const user = await this.store.users.get(userId);
    if (!user || user.organizationId !== actor.organizationId) throw noSuchUser(userId);
    return user;
  }
}

function requireManager(actor: UserRecord): void {
  if (!mayManageMembers(actor.role)) throw denied("Only owners and admins may manage members.");
}

function parseRole(text: string): Role {
  if (!ROLES.includes(text as Role)) throw new CertkeeperError("invalid_request", `Role ${quote(text)} does not exist: use ${ROLES.join(", ")}.`);
  return text as Role;
}

function denied(message: string): CertkeeperError {
  return new CertkeeperError("permission_denied", message);
}

function noSuchUser(id: string): CertkeeperError {
  return new CertkeeperError("not_found", `No user ${quote(id)} in your organization.`);
}

function lastOwner(user: UserRecord, what: "removed" | "demoted"): CertkeeperError {
  return new CertkeeperError(
    "invalid_request",
    `${quote(user.email)} is the organization's last owner and cannot be ${what}: make another user an owner first.`,
  );
}

function roleChanged(user: UserRecord): CertkeeperError {
  return new CertkeeperError("invalid_request", `${quote(user.email)}'s role changed meanwhile: nothing was changed; look at the members again.`);
}
