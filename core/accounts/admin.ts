/**
 * Organizations, users and API keys: what the CLI and the settings area manage. Secrets leave this
 * module once (a new key) and are never stored: only hashes.
 */
import { CertkeeperError, quote } from "../base/errors.ts";
import { isId, newId } from "../base/ids.ts";
import { nameKey } from "../base/names.ts";
import { generateApiKey, keyPrefix } from "../auth/api_key.ts";
import { DuplicateError, type ScopeUsage, type Store } from "../store/ports.ts";
import { PLAN_LIMITS, type ApiKeyRecord, type Limits, type Mode, type OrganizationRecord, type Plan, type Role, type UserRecord } from "../base/records.ts";
import type { Clock } from "../base/time.ts";
import { iso } from "../base/time.ts";
import { silentLogger, type Logger } from "../base/log.ts";
import { isEmailAddress } from "../net/mod.ts";

/** Hashes passwords with a memory-hard function; supplied by the runtime adapter. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
}

export const ROLES: Role[] = ["owner", "admin", "member"];
export const PLANS: Plan[] = ["free", "pro", "enterprise"];
export const MIN_PASSWORD_LENGTH = 10;

/** A key as listings show it: never the secret. */
export interface ApiKeyView {
  id: string;
  name: string;
  mode: Mode;
  prefix: string;
  last4: string;
  userId: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export function presentKey(key: ApiKeyRecord): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    mode: key.mode,
    prefix: keyPrefix(key.mode),
    last4: key.last4,
    userId: key.userId,
    createdAt: iso(key.createdAt),
    lastUsedAt: key.lastUsedAt === null ? null : iso(key.lastUsedAt),
    revokedAt: key.revokedAt === null ? null : iso(key.revokedAt),
  };
}

export interface AdminOptions {
  /** Hashes passwords; without one, no user can be given a password. */
  passwords?: PasswordHasher;
  /** Where what was done is logged (CONTRACT §23: keys created and revoked, passwords set). */
  logger?: Logger;
}

/** An organization's usage in each mode, as `org list` shows it beside its limits. */
export type OrganizationUsage = Record<Mode, ScopeUsage>;

export class Admin {
  private readonly passwords?: PasswordHasher;
  readonly logger: Logger;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    options: AdminOptions = {},
  ) {
    this.passwords = options.passwords;
    this.logger = options.logger ?? silentLogger;
  }

  async createOrganization(input: { name: string; plan?: string; limits?: Partial<Limits> }): Promise<OrganizationRecord> {
    const name = requireName(input.name, "name");
    const plan = parsePlan(input.plan ?? "free");
    const org: OrganizationRecord = { id: newId("org"), name, plan, limits: withOverrides(PLAN_LIMITS[plan], input.limits), createdAt: this.clock.now() };
    await this.store.organizations.create(org);
    this.logger.info("organization created", { organizationId: org.id, plan, limits: org.limits });
    return org;
  }

  /**
   * Changes an organization's name, plan or limits (a self-hoster's `org update`). A new plan brings
   * its limits, which the given limits then override; without one, the given limits replace those
   * they name. Every request from the next one on is judged by the new limits.
   */
  async updateOrganization(id: string, input: { name?: string; plan?: string; limits?: Partial<Limits> }): Promise<OrganizationRecord> {
    const current = await this.store.organizations.get(id);
    if (!current) invalid(`No organization with id ${quote(id)}: see org list.`);
    const name = input.name === undefined ? undefined : requireName(input.name, "name");
    const plan = input.plan === undefined ? undefined : parsePlan(input.plan);
    const limits = withOverrides(plan ? PLAN_LIMITS[plan] : current!.limits, input.limits);
    const updated = await this.store.organizations.update(id, { name, plan, limits });
    if (!updated) invalid(`No organization with id ${quote(id)}: see org list.`);
    this.logger.info("organization updated", { organizationId: id, plan: updated!.plan, limits: updated!.limits });
    return updated!;
  }

  /**
   * The organization named by `ref`: its id, or its name when exactly one organization has it
   * (compared by {@link nameKey}: case, spaces around and Unicode form aside). Refused, naming
   * `org list`, when none or several match.
   */
  async findOrganization(ref: string): Promise<OrganizationRecord> {
    const text = String(ref ?? "").trim();
    if (isId("org", text)) {
      const org = await this.store.organizations.get(text);
      if (org) return org;
    }
    const named = await this.organizationsNamed(text);
    if (named.length === 1) return named[0]!;
    if (named.length > 1) {
      invalid(`${named.length} organizations are named ${quote(text)}: give the id of the one you mean (${named.map((o) => o.id).join(", ")}).`);
    }
    invalid(`No organization with id or name ${quote(text)}: see org list.`);
  }

  /** Every organization whose name is `name` ({@link nameKey}), oldest first. */
  async organizationsNamed(name: string): Promise<OrganizationRecord[]> {
    const wanted = nameKey(name);
    return (await this.listOrganizations()).filter((org) => nameKey(org.name) === wanted);
  }

  /** The user named by `ref`: their id, or their email address (any case). */
  async findUser(ref: string): Promise<UserRecord> {
    const text = String(ref ?? "").trim();
    const user = isId("usr", text) ? await this.store.users.get(text) : await this.store.users.findByEmail(text.toLowerCase());
    if (!user) invalid(`No user with id or email ${quote(text)}: see user list --org ORG.`);
    return user!;
  }

  /** How many certificates, channels and watches the organization holds in each mode. */
  usage(organizationId: string): Promise<OrganizationUsage> {
    return this.store.organizations.usage(organizationId);
  }

  async createUser(input: { organizationId: string; email: string; role: string; password?: string }): Promise<UserRecord> {
    if (!(await this.store.organizations.get(input.organizationId))) {
      invalid(`No organization with id ${quote(input.organizationId)}.`);
    }
    const email = (input.email ?? "").trim().toLowerCase();
    if (!isEmailAddress(email)) invalid(`${quote(input.email)} is not an email address.`);
    const role = input.role as Role;
    if (!ROLES.includes(role)) invalid(`Role ${quote(input.role)} does not exist: use ${ROLES.join(", ")}.`);
    const user: UserRecord = {
      id: newId("usr"),
      organizationId: input.organizationId,
      email,
      role,
      passwordHash: input.password === undefined ? null : await this.#hashPassword(input.password),
      createdAt: this.clock.now(),
    };
    try {
      await this.store.users.create(user);
    } catch (error) {
      if (error instanceof DuplicateError) invalid(`A user with email ${quote(email)} already exists.`);
      throw error;
    }
    this.logger.info("user created", { userId: user.id, organizationId: user.organizationId, role, canSignIn: user.passwordHash !== null });
    return user;
  }

  async setPassword(userId: string, password: string): Promise<void> {
    if (!(await this.store.users.update(userId, { passwordHash: await this.#hashPassword(password) }))) {
      invalid(`No user with id ${quote(userId)}.`);
    }
    this.logger.info("password set", { userId });
  }

  /** Every organization, oldest first. */
  async listOrganizations(): Promise<OrganizationRecord[]> {
    const orgs = await this.store.organizations.list();
    return orgs.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  async listUsers(organizationId: string): Promise<UserRecord[]> {
    if (!(await this.store.organizations.get(organizationId))) invalid(`No organization with id ${quote(organizationId)}.`);
    return this.store.users.list(organizationId);
  }

  /** Sets the password of the user with this email and ends their sessions (a reset must lock out whoever had them). */
  async setPasswordByEmail(email: string, password: string): Promise<UserRecord> {
    const user = await this.store.users.findByEmail(String(email).trim().toLowerCase());
    if (!user) invalid(`No user with email ${quote(email)}: see user list --org ORG_ID.`);
    const passwordHash = await this.#hashPassword(password);
    // Every session ends, before the new password is written as well as after: a crash between the two
    // writes never leaves a session of before the change alive beside the new password.
    await this.store.sessions.removeByUser(user!.id);
    const updated = await this.store.users.update(user!.id, { passwordHash });
    if (!updated) invalid(`No user with email ${quote(email)}.`);
    await this.store.sessions.removeByUser(user!.id);
    this.logger.info("password set", { userId: updated!.id });
    return updated!;
  }

  /** Creates a key acting as `userId`; the returned `key` is the only time the secret exists. */
  async createApiKey(input: { userId: string; name: string; mode: Mode }): Promise<{ record: ApiKeyRecord; key: string }> {
    const user = await this.store.users.get(input.userId);
    if (!user) invalid(`No user with id ${quote(input.userId)}.`);
    const name = requireName(input.name, "name");
    const generated = generateApiKey(input.mode);
    const record: ApiKeyRecord = {
      id: newId("key"),
      userId: user!.id,
      organizationId: user!.organizationId,
      name,
      mode: input.mode,
      hash: generated.hash,
      last4: generated.last4,
      createdAt: this.clock.now(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.store.apiKeys.create(record);
    this.logger.info("API key created", { keyId: record.id, name, mode: record.mode, userId: record.userId, organizationId: record.organizationId });
    return { record, key: generated.key };
  }

  /**
   * The API key named by `ref`: its id, or its name when exactly one key not yet revoked has it
   * (compared without regard to case; a revoked key has nothing left to revoke). Keys of every
   * organization are looked at, or of `organizationId`'s only. Refused, listing the ids, when several
   * keys share the name; naming `key list` when none has it.
   */
  async findApiKey(ref: string, options: { organizationId?: string } = {}): Promise<ApiKeyRecord> {
    const text = String(ref ?? "").trim();
    const { organizationId } = options;
    if (isId("key", text)) {
      const key = await this.store.apiKeys.get(text);
      if (key && (organizationId === undefined || key.organizationId === organizationId)) return key;
    }
    const wanted = nameKey(text);
    const orgs = (await this.listOrganizations()).filter((org) => organizationId === undefined || org.id === organizationId);
    const named: Array<{ key: ApiKeyRecord; org: OrganizationRecord }> = [];
    for (const org of orgs) {
      for (const key of await this.store.apiKeys.list(org.id)) {
        if (key.revokedAt === null && nameKey(key.name) === wanted) named.push({ key, org });
      }
    }
    if (named.length === 1) return named[0]!.key;
    if (named.length > 1) {
      const where = named.map(({ key, org }) => `${key.id} (${org.name}, ${key.mode})`).join(", ");
      invalid(`${named.length} API keys are named ${quote(text)}: give the id of the one you mean: ${where}.`);
    }
    invalid(`No API key with id ${quote(text)}, nor an unrevoked one with that name: see key list --org ORG.`);
  }

  /** Revokes a key; a key revoked before keeps its time, and is not logged as revoked again (nothing changed). */
  async revokeApiKey(id: string): Promise<ApiKeyRecord> {
    const at = this.clock.now();
    const key = await this.store.apiKeys.revoke(id, at);
    if (!key) invalid(`No API key with id ${quote(id)}.`);
    if (key!.revokedAt === at) this.logger.info("API key revoked", { keyId: key!.id, userId: key!.userId, organizationId: key!.organizationId });
    return key!;
  }

  async listApiKeys(organizationId: string): Promise<ApiKeyRecord[]> {
    if (!(await this.store.organizations.get(organizationId))) invalid(`No organization with id ${quote(organizationId)}.`);
    return this.store.apiKeys.list(organizationId);
  }

  async #hashPassword(password: string): Promise<string> {
    if (typeof password !== "string" || password.length < MIN_PASSWORD_LENGTH || password.length > 1024) {
      invalid(`A password must have ${MIN_PASSWORD_LENGTH} to 1024 characters.`);
    }
    if (!this.passwords) throw new Error("no password hasher configured");
    return this.passwords.hash(password);
  }
}

function parsePlan(text: string): Plan {
  if (!PLANS.includes(text as Plan)) invalid(`Plan ${quote(text)} does not exist: use ${PLANS.join(", ")}.`);
  return text as Plan;
}

/**
 * `base` with every limit `overrides` gives, each a whole number of at least 0, but the rate limit at
 * least 1: at 0 every request of the organization would be refused (0 certificates, channels or
 * watches is a setting: an organization that may only read).
 */
function withOverrides(base: Limits, overrides: Partial<Limits> = {}): Limits {
  const limits = { ...base };
  for (const [field, value] of Object.entries(overrides) as Array<[keyof Limits, number | undefined]>) {
    if (value === undefined) continue;
    const least = field === "requestsPerMinute" ? 1 : 0;
    if (!Number.isInteger(value) || value < least) invalid(`Limit ${field} must be a whole number of at least ${least}; got ${quote(value)}.`);
    limits[field] = value;
  }
  return limits;
}

/**
 * A name as kept: trimmed, then 1 to 100 characters counted as the API counts them (code points: 60
 * emoji are 60 characters, not 120 UTF-16 units).
 */
function requireName(value: unknown, field: string): string {
  const name = typeof value === "string" ? value.trim() : "";
  // At most two UTF-16 units a character: a longer string is refused before it is read character by character.
  if (name.length < 1 || name.length > 200 || [...name].length > 100) {
    invalid(`Field ${quote(field)} must be a string of 1 to 100 characters.`);
  }
  // The SQL store would keep only what comes before it.
  if (name.includes("\u0000")) invalid(`Field ${quote(field)} must not contain the NUL character (U+0000).`);
  return name;
}

function invalid(message: string): never {
  throw new CertkeeperError("invalid_request", message);
}
