/** CONTRACT §3's permission rule, once: owners and admins may do everything; members only read. */
import { CertkeeperError } from "../base/errors.ts";
import type { Role } from "../base/records.ts";

/** Whether a role may change certificates and channels, with a key or signed in. */
export function mayWrite(role: Role): boolean {
  return role === "owner" || role === "admin";
}

/** Throws 403 `permission_denied` when `role` may not make a call of this access. */
export function authorize(role: Role, access: "read" | "write" | "admin"): void {
  if (access === "admin" && !mayWrite(role)) {
    throw new CertkeeperError("permission_denied", "Only owners and admins may see this: ask one of them, or for a key of theirs.");
  }
  if (access === "write" && !mayWrite(role)) {
    throw new CertkeeperError("permission_denied", "Members may only read: ask an owner or admin to make this change, or for a key that can.");
  }
}
