/**
 * Who may do what in the settings area. Owners may do everything; admins everything but touch
 * owners; members only read. A key acts with its creator's role (CONTRACT §3), so the same rules
 * decide what a signed-in user may do on the dashboard.
 */
import type { Role } from "../base/records.ts";
import { ROLES } from "./admin.ts";
import { mayWrite } from "../auth/permission.ts";

export { mayWrite };

/** Create and revoke the organization's API keys. */
export function mayManageKeys(role: Role): boolean {
  return mayWrite(role);
}

/**
 * Revoke a key made by a user whose role is `creator` (null: a removed user). A key acts as its
 * creator, so revoking it touches them: owners may revoke any key, admins any but an owner's.
 */
export function mayRevokeKey(actor: Role, creator: Role | null): boolean {
  return mayManageKeys(actor) && mayChangeMember(actor, creator, null);
}

/** See the Members tab, add users, change roles, remove users (within {@link mayChangeMember}). */
export function mayManageMembers(role: Role): boolean {
  return role === "owner" || role === "admin";
}

/**
 * Whether `actor` may give a user whose role is `from` (null: a new user) the role `to`, or remove
 * them (`to` null). Only owners make or touch owners.
 */
export function mayChangeMember(actor: Role, from: Role | null, to: Role | null): boolean {
  if (actor === "owner") return true;
  if (actor === "admin") return from !== "owner" && to !== "owner";
  return false;
}

/** The roles `actor` may hand out. */
export function assignableRoles(actor: Role): Role[] {
  return ROLES.filter((role) => mayChangeMember(actor, null, role));
}
