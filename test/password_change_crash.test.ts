/**
 * A password changed ends every session of the user, and a crash between the two writes (the new
 * password, the sessions' end) never leaves a session of before the change alive beside the new
 * password: the sessions end before the new password is written as well as after. A stolen cookie
 * stops working whatever moment the process dies. Both ways of changing a password are held to it: the
 * user's own change in the settings area, and `user set-password` from the CLI.
 *
 * The crash is the process stopping right after the password is written: the store refuses every
 * later write.
 */
import { expect, test } from "bun:test";
import { Admin } from "../core/accounts/admin.ts";
import { PasswordChange } from "../core/accounts/password_change.ts";
import { Sessions } from "../core/accounts/sessions.ts";
import { systemClock } from "../core/base/time.ts";
import type { Store } from "../core/store/ports.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { bunPasswords } from "../adapters/bun/passwords.ts";

const OLD = "old password 123";
const NEW = "new password 456";

/** A memory store whose process "dies" once a user's password is written: every store call after it throws. */
function crashingAfterPasswordWrite(): { store: Store; arm: () => void } {
  const store = createMemoryStore();
  let armed = false;
  let dead = false;
  const update = store.users.update.bind(store.users);
  const removeByUser = store.sessions.removeByUser.bind(store.sessions);
  store.users.update = async (id, patch) => {
    if (dead) throw new Error("the process is gone");
    const updated = await update(id, patch);
    if (armed && patch.passwordHash) dead = true;
    return updated;
  };
  store.sessions.removeByUser = async (userId) => {
    if (dead) throw new Error("the process is gone");
    return removeByUser(userId);
  };
  return { store, arm: () => (armed = true) };
}

async function signedInTwice(store: Store) {
  const admin = new Admin(store, systemClock, { passwords: bunPasswords });
  const org = await admin.createOrganization({ name: "Acme", plan: "pro" });
  const user = await admin.createUser({ organizationId: org.id, email: "owner@acme.test", role: "owner" });
  await admin.setPassword(user.id, OLD);
  const sessions = new Sessions(store, systemClock);
  const mine = await sessions.start((await store.users.get(user.id))!);
  const stolen = await sessions.start((await store.users.get(user.id))!);
  return { admin, sessions, user, mine, stolen };
}

test("the user's own change: a crash right after the new password is written leaves no older session alive", async () => {
  const { store, arm } = crashingAfterPasswordWrite();
  const { admin, sessions, mine, stolen } = await signedInTwice(store);
  const me = (await sessions.resume(mine.token))!;
  arm();
  const change = new PasswordChange({ store, clock: systemClock, admin, sessions, passwords: bunPasswords });
  await expect(change.change(me, { current: OLD, next: NEW, confirm: NEW })).rejects.toThrow("the process is gone");
  expect(await sessions.resume(stolen.token)).toBeNull();
  expect(await sessions.resume(mine.token)).toBeNull();
});

test("user set-password: a crash right after the new password is written leaves no older session alive", async () => {
  const { store, arm } = crashingAfterPasswordWrite();
  const { admin, sessions, stolen } = await signedInTwice(store);
  arm();
  await expect(admin.setPasswordByEmail("owner@acme.test", NEW)).rejects.toThrow("the process is gone");
  expect(await sessions.resume(stolen.token)).toBeNull();
});
