/**
 * The API Keys tab: the organization's keys (never their secrets), creation (the secret is returned
 * once, here, and never again) and revocation, effective on the very next API request in every
 * process. Everyone sees the list; owners and admins create and revoke, but only owners revoke an
 * owner's keys (roles.ts: admins may do everything but touch owners).
 */
import { CertkeeperError, quote } from "../base/errors.ts";
import { presentKey, type Admin, type ApiKeyView } from "./admin.ts";
import type { ApiKeyRecord, Mode, UserRecord } from "../base/records.ts";
import type { Store } from "../store/ports.ts";
import { mayManageKeys, mayRevokeKey } from "./roles.ts";

export interface KeyListItem extends ApiKeyView {
  /** The creator's email; null once the creator was removed. */
  createdBy: string | null;
  /** Whether the user who asked may revoke this key (already revoked or not): see roles.ts mayRevokeKey. */
  mayRevoke: boolean;
}

export class ApiKeys {
  constructor(
    private readonly store: Store,
    private readonly admin: Admin,
  ) {}

  /** Newest first. */
  async list(actor: UserRecord): Promise<KeyListItem[]> {
    const [keys, users] = await Promise.all([this.store.apiKeys.list(actor.organizationId), this.store.users.list(actor.organizationId)]);
    const creators = new Map(users.map((user) => [user.id, user]));
    return keys.map((key) => itemOf(actor, key, creators.get(key.userId) ?? null));
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
    return itemOf(actor, key, creator);
  }

  /** Owners revoke any key of the organization; admins any but an owner's. */
  async revoke(actor: UserRecord, keyId: string): Promise<ApiKeyView> {
    requireManager(actor);
    const key = await this.get(actor, keyId);
    if (!key.mayRevoke) throw new CertkeeperError("permission_denied", "Only owners may revoke an owner's API keys.");
    return presentKey(await this.admin.revokeApiKey(keyId));
  }
}

function itemOf(actor: UserRecord, key: ApiKeyRecord, creator: UserRecord | null): KeyListItem {
  return { ...presentKey(key), createdBy: creator?.email ?? null, mayRevoke: mayRevokeKey(actor.role, creator?.role ?? null) };
}

function requireManager(actor: UserRecord): void {
  if (!mayManageKeys(actor.role)) {
    throw new CertkeeperError("permission_denied", "Members may only look at API keys: ask an owner or admin to create or revoke one.");
  }
}

function noSuchKey(id: string): CertkeeperError {
  return new CertkeeperError("not_found", `No API key ${quote(id)} in your organization.`);
}
