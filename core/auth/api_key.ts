/**
 * API keys: `ck_live_` or `ck_test_`, 32 base62 characters of randomness, then a 6-character base62
 * CRC32 checksum of the prefix and the random part (GitHub's token format). The checksum lets
 * malformed or mistyped keys be refused without a database read; only a SHA-256 of a key is stored.
 */
import { createHash } from "node:crypto";
import { BASE62, randomBase62 } from "../base/ids.ts";
import type { Mode } from "../base/records.ts";

const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = /^ck_(live|test)_([0-9A-Za-z]{38})$/;

export interface NewApiKey {
  key: string;
  hash: string;
  last4: string;
  mode: Mode;
}

export function generateApiKey(mode: Mode): NewApiKey {
  const body = `ck_${mode}_${randomBase62(RANDOM_LENGTH)}`;
  const key = body + checksum(body);
  return { key, hash: hashApiKey(key), last4: key.slice(-4), mode };
}

/** The key's mode when it is well formed and its checksum holds; otherwise null. */
export function parseApiKey(key: string): Mode | null {
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  const body = key.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === key.slice(-CHECKSUM_LENGTH) ? (match[1] as Mode) : null;
}

/** SHA-256, hex. Keys carry 190 bits of randomness, so a fast hash is enough: nothing to brute-force. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export function keyPrefix(mode: Mode): string {
  return `ck_${mode}_`;
}

function checksum(text: string): string {
  let value = crc32(text);
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
