/** Identifiers and random tokens: a prefix and base62 characters of cryptographic randomness. */

export const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random bytes drawn in bulk: one call to the generator per 4 KB instead of one per identifier. */
const pool = new Uint8Array(4096);
let used = pool.length;

/** `length` base62 characters, each drawn without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    if (used === pool.length) {
      crypto.getRandomValues(pool);
      used = 0;
    }
    const byte = pool[used]!;
    // Each byte is used once, and overwritten before the pool is drawn again.
    pool[used++] = 0;
    // 248 = 62 * 4: bytes at or above it would favour the first characters.
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export type IdPrefix = "cert" | "ch" | "evt" | "req" | "org" | "usr" | "key" | "dlv" | "wch" | "imp";

/** A new identifier such as `cert_4f9Qx…`: the prefix, an underscore, 20 random base62 characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`;
}

const ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{16,64}$/;

/** True when `value` looks like an identifier with this prefix (cheap pre-check before a lookup). */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);
}
