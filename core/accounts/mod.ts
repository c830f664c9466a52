/**
 * The settings area's product logic, free of any framework: sessions, sign-in and its slowdown, the
 * API Keys and Members tabs, and the dashboard's workspace. Built once by createCore(); the web
 * adapter (adapters/web) only renders it.
 *
 * @example
 * const result = await core.accounts.signIn.attempt({ email, password, clientAddress });
 * if (result.ok) setCookie(result.token);
 */
import type { PasswordHasher } from "./admin.ts";
import type { Services } from "../app/services.ts";
import { ApiKeys } from "./api_keys.ts";
import { Members } from "./members.ts";
import { Sessions, type SessionPolicy } from "./sessions.ts";
import { SignIn } from "./sign_in.ts";
import type { ThrottlePolicies } from "./sign_in_throttle.ts";
import { Workspace } from "./workspace.ts";
import { PasswordChange } from "./password_change.ts";
import { Console } from "./console.ts";

export interface Accounts {
  sessions: Sessions;
  signIn: SignIn;
  apiKeys: ApiKeys;
  members: Members;
  workspace: Workspace;
  passwordChange: PasswordChange;
  /** The settings area's actions as a console: add, edit, remove, the dashboard's problems first. */
  console: Console;
}

export interface AccountsOptions {
  services: Services;
  passwords?: PasswordHasher;
  sessionPolicy?: SessionPolicy;
  throttle?: ThrottlePolicies;
}

export function createAccounts(options: AccountsOptions): Accounts {
  const { store, clock, admin, logger } = options.services;
  const sessions = new Sessions(store, clock, options.sessionPolicy);
  return {
    sessions,
    signIn: new SignIn({ store, clock, sessions, passwords: options.passwords, policy: options.throttle, logger }),
    apiKeys: new ApiKeys(store, admin),
    members: new Members({ store, clock, admin, sessions, logger }),
    workspace: new Workspace(options.services),
    passwordChange: new PasswordChange({ store, clock, admin, sessions, passwords: options.passwords, policy: options.throttle, logger }),
    console: new Console(options.services),
  };
}

export { mayChangeMember, mayManageKeys, mayRevokeKey, mayManageMembers, mayWrite, assignableRoles } from "./roles.ts";
export type { SignedIn } from "./sessions.ts";
export type { KeyListItem } from "./api_keys.ts";
export type { MemberView } from "./members.ts";
export type { Actor, ActingWorkspace, Overview, CertificateForm, DashboardQuery, DashboardPage, CertificateDetail } from "./workspace.ts";
export { LIST_TAKES_TAGS } from "./workspace.ts";
export type { SignInResult } from "./sign_in.ts";
export type { PasswordChangeResult } from "./password_change.ts";
export { Admin, MIN_PASSWORD_LENGTH, PLANS, presentKey, ROLES, type AdminOptions, type ApiKeyView, type OrganizationUsage, type PasswordHasher } from "./admin.ts";
export { tokensMatch } from "./session_token.ts";
export { Console, LIST_TAKES_RENEWAL, TAKES_ALERT_POLICY, type ActingConsole, type AlertRoutes, type ConsoleDashboard, type ConsoleQuery } from "./console.ts";
