/**
 * Session tokens: 43 base62 characters (256 bits) in the cookie; the store keys the session by the
 * token's SHA-256, so a copy of the database signs no one in. The form token that protects every
 * change (CSRF) is derived from the session token, so it is per session and stored nowhere.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "../base/ids.ts";

const TOKEN = /^[0-9A-Za-z]{43}$/;

export function newSessionToken(): string {
  return randomBase62(43);
}

export function isSessionToken(value: string | undefined | null): value is string {
  return typeof value === "string" && TOKEN.test(value);
}

/** The id a session is stored under. */
export function sessionIdOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The session's form token (CSRF), `ft_` and 43 characters of base64url. */
export function formTokenOf(token: string): string {
  return `ft_${createHmac("sha256", token).update("certkeeper form token").digest("base64url")}`;
}

/** Compares tokens in constant time; false for anything missing. */
export function tokensMatch(expected: string, given: unknown): boolean {
  if (typeof given !== "string" || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}
