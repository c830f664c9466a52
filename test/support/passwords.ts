/**
 * Passwords for in-process tests whose subject is what sign-in does with an answer (the slowdown's
 * counts, sessions, roles, pages), not the hash: argon2id, verified by Bun as the product's hasher
 * (adapters/bun/passwords.ts) is, at the lowest cost Bun allows (256 KiB, one pass). A sign-in then
 * costs well under a millisecond instead of about 57 ms of CPU, which files signing in dozens of times
 * spent seconds on. The product's hasher itself stays under test wherever a `serve` process signs
 * users in, and in web.security.test.ts's main harness.
 */
import type { PasswordHasher } from "../../core/accounts/admin.ts";

export const quickPasswords: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: "argon2id", memoryCost: 256, timeCost: 1 }),
  verify: (password, hash) => Bun.password.verify(password, hash).catch(() => false),
};
