/**
 * A sign-in with the old password, verified (argon2id: tens of milliseconds) while the password is
 * changed, must not leave a working session once the new password is in place: changing a password,
 * or `user set-password`, is how whoever knew the old one is locked out ("After a change every other
 * session of yours ends"). The change ends the sessions after writing the new hash; a sign-in that
 * opened its session after that finds the hash it verified gone, and ends it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PasswordHasher } from "../core/accounts/admin.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { WebClient } from "./support/web_client.ts";

const OLD = "the old password, leaked";
const NEW = "a brand new password 42";

/** Quick argon2id, with a gate: while armed, the next verify of OLD waits until released. */
let armed = false;
let release: () => void = () => {};
let entered: () => void = () => {};
let gatePassed: Promise<void>;
let gate: Promise<void>;
function arm(): void {
  gatePassed = new Promise<void>((resolve) => (entered = resolve));
  gate = new Promise<void>((resolve) => (release = resolve));
  armed = true;
}
const gatedPasswords: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: "argon2id", memoryCost: 256, timeCost: 1 }),
  async verify(password, hash) {
    const ok = await Bun.password.verify(password, hash).catch(() => false);
    if (armed && password === OLD) {
      armed = false;
      entered();
      // The slow part of a real argon2id verification (tens of milliseconds), stretched.
      await gate;
    }
    return ok;
  },
};

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ passwords: gatedPasswords });
});
afterAll(async () => {
  await h?.close();
});

test("a sign-in with the old password, verified while the password is changed, does not leave a session alive after the change", async () => {
  const email = `victim-${crypto.randomUUID().slice(0, 8)}@acme.test`;
  await h.core.services.admin.createUser({ organizationId: h.org.id, email, role: "owner", password: OLD });

  // The victim is signed in and about to change the password.
  const victim = new WebClient(h.app);
  expect((await victim.signIn(email, OLD)).status).toBe(303);
  await victim.get("/settings/account");

  // The attacker, who has the old password, signs in; its verification is under way.
  const attacker = new WebClient(h.app);
  await attacker.get("/sign-in");
  arm();
  const attempt = attacker.post("/sign-in", { email, password: OLD, next: "/" });
  await gatePassed;

  // Meanwhile the victim changes the password: every other session is to end.
  const changed = await victim.post("/settings/account/password", { current: OLD, next: NEW, confirm: NEW });
  expect(changed.status).toBe(303);
  expect(changed.headers.get("location")).toBe("/settings/account?notice=password-changed");

  release();
  // Answered as a failed sign-in, and no session left: the old password opens nothing.
  expect((await attempt).status).toBe(401);
  const after = await attacker.get("/settings/account");
  expect({ status: after.status, location: after.headers.get("location") }).toEqual({ status: 303, location: "/sign-in?next=%2Fsettings%2Faccount" });
});

test("a sign-in with the old password, verified while `user set-password` replaces it, does not leave a session alive after the reset", async () => {
  const email = `reset-${crypto.randomUUID().slice(0, 8)}@acme.test`;
  await h.core.services.admin.createUser({ organizationId: h.org.id, email, role: "owner", password: OLD });

  const attacker = new WebClient(h.app);
  await attacker.get("/sign-in");
  arm();
  const attempt = attacker.post("/sign-in", { email, password: OLD, next: "/" });
  await gatePassed;

  // The operator resets the password on the server (what `user set-password --email E` runs): "it also ends the user's open sessions".
  await h.core.services.admin.setPasswordByEmail(email, NEW);

  release();
  expect((await attempt).status).toBe(401);
  const after = await attacker.get("/settings/account");
  expect({ status: after.status, location: after.headers.get("location") }).toEqual({ status: 303, location: "/sign-in?next=%2Fsettings%2Faccount" });
});
