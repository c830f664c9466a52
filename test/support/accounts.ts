/**
 * Accounts written straight into a database file, in the test's own process, by the same admin
 * operations the CLI's `org create`, `user create` and `key create` run. For tests whose subject is
 * something else (a server process, the settings area in a browser): a CLI process costs about a second
 * of CPU to start, and the CLI's own tests (test/cli.*.test.ts) run those commands as processes.
 */
import { Admin } from "../../core/accounts/admin.ts";
import { systemClock } from "../../core/base/time.ts";
import type { Limits, Plan, Role } from "../../core/base/records.ts";
import { openLibsqlStore } from "../../adapters/libsql/mod.ts";
import { bunPasswords } from "../../adapters/bun/passwords.ts";

export interface SeedUser {
  email: string;
  role: Role;
  password?: string;
}

export interface Seeded {
  org: { id: string; name: string };
  /** The users in the order given, each with a live key when `keys` asked for one. */
  users: Array<{ id: string; email: string; role: Role; key?: string }>;
}

/**
 * An organization and its users in the database at `databaseUrl` (created and migrated when new), then
 * closed, so that a server process can open it. `keys: true` gives each user a live API key.
 */
export async function seedAccounts(
  databaseUrl: string,
  options: { name?: string; plan?: Plan; limits?: Partial<Limits>; users: SeedUser[]; keys?: boolean },
): Promise<Seeded> {
  const store = await openLibsqlStore({ url: databaseUrl });
  try {
    const admin = new Admin(store, systemClock, { passwords: bunPasswords });
    const org = await admin.createOrganization({ name: options.name ?? "Acme", plan: options.plan, limits: options.limits });
    const users: Seeded["users"] = [];
    for (const { email, role, password } of options.users) {
      const user = await admin.createUser({ organizationId: org.id, email, role, password });
      const key = options.keys ? (await admin.createApiKey({ userId: user.id, name: `${role} key`, mode: "live" })).key : undefined;
      users.push({ id: user.id, email: user.email, role, key });
    }
    return { org: { id: org.id, name: org.name }, users };
  } finally {
    await store.close();
  }
}

/** An organization with one owner and the owner's live API key. */
export async function seedOwner(databaseUrl: string, options: { name?: string; plan?: Plan; limits?: Partial<Limits>; email?: string; password?: string } = {}) {
  const { org, users } = await seedAccounts(databaseUrl, {
    name: options.name,
    plan: options.plan,
    limits: options.limits,
    users: [{ email: options.email ?? `owner-${crypto.randomUUID()}@acme.test`, role: "owner", password: options.password }],
    keys: true,
  });
  return { org, user: users[0]!, key: users[0]!.key! };
}
