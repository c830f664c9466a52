/**
 * The API Keys tab: the organization's keys (never their secrets), creation (the secret is returned
 * once, here, and never again) and revocation, effective on the very next API request in every
 * process. Everyone sees the list; owners and admins create and revoke.
 */
import { CertkeeperError, quote } from "../errors.ts";
import { presentKey, type Admin, type ApiKeyView } from "../admin.ts";
import type { Mode, UserRecord } from "../model.ts";
import type { Store } from "../store/ports.ts";
import { mayManageKeys } from "./roles.ts";

export interface KeyListItem extends ApiKeyView {
  /** The creator's email; null once the creator was removed. */
  createdBy: string | null;
}

export class ApiKeys {
  constructor(
    private readonly store: Store,
    private readonly admin: Admin,
  ) {}

  /** Newest first. */
  async list(actor: UserRecord): Promise<KeyListItem[]> {
    const [keys, users] = await Promise.all([this.store.apiKeys.list(actor.organizationId), this.store.users.list(actor.organizationId)]);
    const emails = new Map(users.map((user) => [user.id, user.email]));
    return keys.map((key) => ({ ...presentKey(key), createdBy: emails.get(key.userId) ?? null }));
  }

  /** Creates a key acting as `actor`; `key` is the only time the secret exists. */
  async create(actor: UserRecord, input: { name: string; mode: string }): Promise<{ view: ApiKeyView; key: string }> {
    requireManager(actor);
    if (input.mode !== "live" && input.mode !== "test") {
      throw new CertkeeperError("invalid_request", `Mode ${quote(input.mode)} does not exist: choose live or test.`);
    }
    const { record, key } = await this.admin.createApiKey({ userId: actor.id, name: input.name, mode: input.mode as Mode });
    return { view: presentKey(record), key };
  }

  /** A key of the actor's organization; another organization's is missing. */
  async get(actor: UserRecord, keyId: string): Promise<KeyListItem> {
    const key = await this.store.apiKeys.get(keyId);
    if (!key || key.organizationId !== actor.organizationId) throw noSuchKey(keyId);
    const creator = await this.store.users.get(key.userId);
    return { ...presentKey(key), createdBy: creator?.email ?? null };
  }

  async revoke(actor: UserRecord, keyId: string): Promise<ApiKeyView> {
    requireManager(actor);
    await this.get(actor, keyId);
    return presentKey(await this.admin.revokeApiKey(keyId));
  }
}

function requireManager(actor: UserRecord): void {
  if (!mayManageKeys(actor.role)) {
    throw new CertkeeperError("permission_denied", "Members may only look at API keys: ask an owner or admin to create or revoke one.");
  }
}

function noSuchKey(id: string): CertkeeperError {
  return new CertkeeperError("not_found", `No API key ${quote(id)} in your organization.`);
}
