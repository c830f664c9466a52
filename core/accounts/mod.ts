/**
 * The settings area's product logic, free of any framework: sessions, sign-in and its slowdown, the
 * API Keys and Members tabs. Built once by createCore(); the web adapter (adapters/web) only renders
 * it. The dashboard's workspace, which calls the API's operations, stands above the pipeline in
 * core/workspace.
 *
 * @example
 * const result = await core.accounts.signIn.attempt({ email, password, clientAddress });
 * if (result.ok) setCookie(result.token);
 */
import type { Admin, PasswordHasher } from "./admin.ts";
import type { Store } from "../store/ports.ts";
import type { Clock } from "../base/time.ts";
import { ApiKeys } from "./api_keys.ts";
import { Members } from "./members.ts";
import { Sessions, type SessionPolicy } from "./sessions.ts";
import { SignIn } from "./sign_in.ts";
import { AttemptsInFlight, type ThrottlePolicies } from "./sign_in_throttle.ts";
import type { Logger } from "../base/log.ts";
import { PasswordChange } from "./password_change.ts";

export interface Accounts {
  sessions: Sessions;
  signIn: SignIn;
  apiKeys: ApiKeys;
  members: Members;
  passwordChange: PasswordChange;
}

export interface AccountsOptions {
  /** What accounts use of the services (core.services has it all). */
  services: { store: Store; clock: Clock; admin: Admin; logger: Logger };
  passwords?: PasswordHasher;
  sessionPolicy?: SessionPolicy;
  throttle?: ThrottlePolicies;
}

export function createAccounts(options: AccountsOptions): Accounts {
  const { store, clock, admin, logger } = options.services;
  const sessions = new Sessions(store, clock, options.sessionPolicy);
  const inFlight = new AttemptsInFlight();
  return {
    sessions,
    signIn: new SignIn({ store, clock, sessions, passwords: options.passwords, policy: options.throttle, logger, inFlight }),
    apiKeys: new ApiKeys(store, admin),
    members: new Members({ store, clock, admin, sessions, logger }),
    passwordChange: new PasswordChange({ store, clock, admin, sessions, passwords: options.passwords, policy: options.throttle, logger, inFlight }),
  };
}

export { mayChangeMember, mayManageKeys, mayRevokeKey, mayManageMembers, mayWrite, assignableRoles } from "./roles.ts";
export type { SignedIn } from "./sessions.ts";
export type { KeyListItem } from "./api_keys.ts";
export type { MemberView } from "./members.ts";
export type { SignInResult } from "./sign_in.ts";
export type { PasswordChangeResult } from "./password_change.ts";
export { Admin, MIN_PASSWORD_LENGTH, PLANS, presentKey, ROLES, type AdminOptions, type ApiKeyView, type OrganizationUsage, type PasswordHasher } from "./admin.ts";
export { tokensMatch } from "./session_token.ts";
export { SIGN_IN_THROTTLE } from "./sign_in_throttle.ts";
