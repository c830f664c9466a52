/** Password hashing with Bun's built-in argon2id (memory-hard): no native addon to install. */
import type { PasswordHasher } from "../../core/accounts/mod.ts";

export const bunPasswords: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: "argon2id", memoryCost: 19_456, timeCost: 2 }),
  verify: (password, hash) => Bun.password.verify(password, hash).catch(() => false),
};
