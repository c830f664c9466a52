/**
 * From an Authorization header to the principal a request acts as (CONTRACT §3). Malformed keys are
 * refused by their checksum without a read; grants are read through the store's read cache
 * (store/read_cache.ts), so a key revoked by any process, the CLI included, stops working on the very
 * next request.
 */
import { CertkeeperError } from "../base/errors.ts";
import type { Limits, Mode, Role, Scope } from "../base/records.ts";
import type { Store } from "../store/ports.ts";
import { hashApiKey, parseApiKey } from "./api_key.ts";

export interface Principal {
  keyId: string;
  userId: string;
  role: Role;
  scope: Scope;
  limits: Limits;
}

/** Well-formed keys remembered with their hash; past this many the memory is emptied. */
const MAX_REMEMBERED_KEYS = 1000;
const BEARER = "Bearer ";

/**
 * A use of a key whose last recorded use is older than this is written soon, not at the next regular
 * flush (every 30 s): a key used once and then a crash (SIGKILL, a power cut) would otherwise never be
 * seen as used. Keys in steady use are recorded by the regular flushes, well within it.
 */
export const USE_RECORDED_WITHIN_MS = 45_000;

export class Authenticator {
  #store: Store;
  #usage = new Map<string, number>();
  readonly #onStale: (() => void) | undefined;
  /**
   * Authorization headers already judged well formed, with the key's mode and SHA-256: a client sends
   * the same header on every request, and parsing, checksumming and hashing it each time cost more
   * than the rest of authentication. Only what a header *is* is remembered, never what it may do:
   * the grant (revocation included) is still read through the store's read cache on every request.
   */
  #parsed = new Map<string, { mode: Mode; hash: string }>();

  /** `onStale`: a use was seen that should be written soon ({@link USE_RECORDED_WITHIN_MS}): flush shortly. */
  constructor(store: Store, options: { onStale?: () => void } = {}) {
    this.#store = store;
    this.#onStale = options.onStale;
  }

  async authenticate(authorization: string | null | undefined, now: number): Promise<Principal> {
    const { mode, hash } = this.#parse(authorization);
    const grant = await this.#store.apiKeys.findByHash(hash);
    if (!grant || grant.key.mode !== mode) throw invalidKey();
    if (grant.key.revokedAt !== null || !grant.user) throw new RevokedKeyError(grant.key.id);
    this.#usage.set(grant.key.id, now);
    // The grant is read again after each flush (its write empties the read cache): its last use is the one recorded.
    if (grant.key.lastUsedAt === null || now - grant.key.lastUsedAt > USE_RECORDED_WITHIN_MS) this.#onStale?.();
    return {
      keyId: grant.key.id,
      userId: grant.user.id,
      role: grant.user.role,
      scope: { organizationId: grant.organization.id, mode: grant.key.mode as Mode },
      limits: grant.organization.limits,
    };
  }

  #parse(authorization: string | null | undefined): { mode: Mode; hash: string } {
    const known = authorization ? this.#parsed.get(authorization) : undefined;
    if (known) return known;
    const key = bearerKey(authorization);
    const mode = parseApiKey(key);
    if (!mode) throw invalidKey();
    const parsed = { mode, hash: hashApiKey(key) };
    // Only the header as clients send it (`Bearer <key>`): a header padded with whitespace is judged
    // anew each time, so that nobody can pin up to the server's header limit per entry (forging a
    // well-formed key takes no account).
    if (authorization!.length > key.length + BEARER.length) return parsed;
    if (this.#parsed.size >= MAX_REMEMBERED_KEYS) this.#parsed.clear();
    this.#parsed.set(authorization!, parsed);
    return parsed;
  }

  /** Writes the last-use times gathered since the previous flush (CONTRACT §2: may lag up to 60 s). */
  async flushUsage(): Promise<void> {
    if (this.#usage.size === 0) return;
    const uses = [...this.#usage].map(([id, at]) => ({ id, at }));
    this.#usage.clear();
    await this.#store.apiKeys.touch(uses);
  }
}

/** The key of `Authorization: Bearer <key>` (scheme case-insensitive), or throws `missing_api_key`. */
export function bearerKey(authorization: string | null | undefined): string {
  // Another scheme, or Bearer with nothing after it, carries no key; anything after Bearer is a
  // key to judge (and refuse as invalid when malformed).
  const match = /^\s*bearer(?:\s+(.*?))?\s*$/i.exec(authorization ?? "");
  if (!match?.[1]) {
    // A key sent bare, without its scheme (a common slip): said as such.
    const bare = /^\s*ck_(?:live|test)_/.test(authorization ?? "");
    throw new CertkeeperError(
      "missing_api_key",
      bare
        ? "No API key provided: the Authorization header holds a key without its scheme; send \"Authorization: Bearer <API_KEY>\"."
        : "No API key provided: include the header \"Authorization: Bearer <API_KEY>\".",
    );
  }
  return match[1]!;
}

/**
 * A revoked key (or one whose user was removed) presented again: refused as `expired_api_key`, and
 * known by its id, which the request line names (never the key) so that an operator can find who
 * still uses it.
 */
export class RevokedKeyError extends CertkeeperError {
  constructor(readonly keyId: string) {
    super("expired_api_key", "This API key has been revoked: create a new key in the settings area.");
  }
}

function invalidKey(): CertkeeperError {
  return new CertkeeperError("invalid_api_key", "The API key is invalid: check that it was copied whole.");
}
