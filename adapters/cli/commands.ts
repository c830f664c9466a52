/**
 * The account commands (CONTRACT §2, §17): organizations, users and API keys. Each returns the JSON
 * document `--json` prints and a human rendering of it; main.ts decides which to print.
 */
import { spawnSync } from "node:child_process";
import type { Config } from "../../core/config/mod.ts";
import type { Admin } from "../../core/accounts/mod.ts";
import type { Store } from "../../core/store/mod.ts";
import { bunPasswords } from "../bun/passwords.ts";
import { optionalInteger, requiredFlag, type CommandContext, type CommandOutcome, type CommandSpec, type Flags } from "./command_table.ts";

/** Opens the configured database, runs `fn` with the admin operations, closes it. */
export async function withAdmin<T>(config: Config, fn: (admin: Admin, store: Store) => Promise<T>): Promise<T> {
  // Loaded when a command runs, not at the CLI's start: help and usage errors need none of it.
  const { wire } = await import("../wiring/mod.ts");
  const wired = await wire(config, { passwords: bunPasswords });
  try {
    return await fn(wired.core.services.admin, wired.store);
  } finally {
    await wired.release();
  }
}

/** `--password P`, `--password -` (read from stdin), or, when `whenMissing` is "stdin", stdin too. */
async function passwordFlag(context: CommandContext, whenMissing: "none" | "stdin"): Promise<string | undefined> {
  let password = context.flags.password as string | undefined;
  if (password === undefined && whenMissing === "none") return undefined;
  if (password === undefined || password === "-") {
    password = process.stdin.isTTY ? await promptHidden("Password (at least 10 characters, not shown): ") : (await context.readStdin()).replace(/\r?\n$/, "");
  }
  return password;
}

/** One line typed at the terminal, not echoed (stty -echo), the echo restored whatever happens. */
async function promptHidden(prompt: string): Promise<string> {
  const stty = (arg: string) => spawnSync("stty", [arg], { stdio: ["inherit", "ignore", "ignore"] });
  // Echo off before the prompt: whatever is typed once the prompt shows is never echoed.
  stty("-echo");
  process.stderr.write(prompt);
  try {
    for await (const line of console) return line;
    return "";
  } finally {
    stty("echo");
    process.stderr.write("\n");
  }
}

const orgCreate: CommandSpec = {
  name: "org create",
  flags: ["name", "plan", "certificate-limit", "channel-limit", "rate-limit", "watch-limit"],
  synopsis: "org create --name N [--plan free|pro|enterprise] [--certificate-limit N] [--channel-limit N] [--rate-limit N] [--watch-limit N]",
  help:
    "Creates an organization. Plans: free (25 certificates, 5 channels, 60 requests/min per key, 1 CT watch), " +
    "pro (500, 50, 600, 10), enterprise (100000, 1000, 6000, 1000); the limit flags override the plan's.",
  async run({ config, flags }) {
    const org = await withAdmin(config, (admin) =>
      admin.createOrganization({
        name: requiredFlag(flags, "name"),
        plan: flags.plan as string | undefined,
        limits: {
          certificates: optionalInteger(flags, "certificate-limit"),
          channels: optionalInteger(flags, "channel-limit"),
          requestsPerMinute: optionalInteger(flags, "rate-limit"),
          watches: optionalInteger(flags, "watch-limit"),
        },
      }),
    );
    const json = { id: org.id, name: org.name, plan: org.plan, limits: org.limits };
    return {
      json,
      text:
        `Organization ${org.name} created: ${org.id}\n` +
        `Plan ${org.plan}: ${org.limits.certificates} certificates, ${org.limits.channels} channels, ` +
        `${org.limits.requestsPerMinute} requests per minute per key, ${org.limits.watches} watches.`,
    };
  },
};

const orgList: CommandSpec = {
  name: "org list",
  flags: [],
  synopsis: "org list",
  help: "Lists every organization with its id, plan and limits, oldest first: how to find an organization's id again.",
  async run({ config }) {
    const orgs = await withAdmin(config, (admin) => admin.listOrganizations());
    const json = orgs.map((org) => ({ id: org.id, name: org.name, plan: org.plan, limits: org.limits, createdAt: new Date(org.createdAt).toISOString() }));
    const text = table(
      ["ID", "NAME", "PLAN", "CERTIFICATES", "CHANNELS", "REQUESTS/MIN", "WATCHES"],
      json.map((o) => [o.id, o.name, o.plan, String(o.limits.certificates), String(o.limits.channels), String(o.limits.requestsPerMinute), String(o.limits.watches)]),
    );
    return { json, text: json.length === 0 ? "No organizations yet: create one with org create --name N." : text };
  },
};

const userCreate: CommandSpec = {
  name: "user create",
  flags: ["org", "email", "role", "password"],
  synopsis: "user create --org ORG_ID --email E --role owner|admin|member [--password P | --password -]",
  help: "Creates a user of an organization. With --password the user can sign in to the settings area; --password - reads it from standard input. Without it the user can own API keys but not sign in (give one later with user set-password).",
  async run(context) {
    const { config, flags } = context;
    const input = { organizationId: requiredFlag(flags, "org"), email: requiredFlag(flags, "email"), role: requiredFlag(flags, "role") };
    const password = await passwordFlag(context, "none");
    const user = await withAdmin(config, (admin) => admin.createUser({ ...input, password }));
    const json = { id: user.id, organizationId: user.organizationId, email: user.email, role: user.role };
    return {
      json,
      text: `User ${user.email} (${user.role}) created: ${user.id}${user.passwordHash ? "\nThey can sign in to the settings area." : ""}`,
    };
  },
};

const userList: CommandSpec = {
  name: "user list",
  flags: ["org"],
  synopsis: "user list --org ORG_ID",
  help: "Lists an organization's users: id, email, role, whether they can sign in (have a password), when they were added.",
  async run({ config, flags }) {
    const users = await withAdmin(config, (admin) => admin.listUsers(requiredFlag(flags, "org")));
    const json = users.map((user) => ({
      id: user.id,
      organizationId: user.organizationId,
      email: user.email,
      role: user.role,
      canSignIn: user.passwordHash !== null,
      createdAt: new Date(user.createdAt).toISOString(),
    }));
    const text = table(
      ["ID", "EMAIL", "ROLE", "SIGN-IN", "ADDED"],
      json.map((u) => [u.id, u.email, u.role, u.canSignIn ? "yes" : "no password", u.createdAt]),
    );
    return { json, text: json.length === 0 ? "No users in this organization." : text };
  },
};

const userSetPassword: CommandSpec = {
  name: "user set-password",
  flags: ["email", "password"],
  synopsis: "user set-password --email E [--password P | --password -]",
  help: "Gives a user a new password (at least 10 characters), so they can sign in to the settings area. Without --password, or with --password -, it is read from standard input. The user's open sessions end.",
  async run(context) {
    const email = requiredFlag(context.flags, "email");
    const password = (await passwordFlag(context, "stdin"))!;
    const user = await withAdmin(context.config, (admin) => admin.setPasswordByEmail(email, password));
    return {
      json: { id: user.id, email: user.email, canSignIn: true },
      text: `Password set for ${user.email} (${user.id}): they can sign in to the settings area.`,
    };
  },
};

const keyCreate: CommandSpec = {
  name: "key create",
  flags: ["user", "name", "test"],
  synopsis: "key create --user USER_ID --name N [--test]",
  help: "Creates an API key acting as the user (with the user's role). The key is printed once and never again; only its hash is stored. --test makes a ck_test_ key, which sees test data only.",
  async run({ config, flags }) {
    const mode = flags.test ? "test" : "live";
    const { record, key } = await withAdmin(config, (admin) =>
      admin.createApiKey({ userId: requiredFlag(flags, "user"), name: requiredFlag(flags, "name"), mode }),
    );
    const json = { id: record.id, key, name: record.name, mode: record.mode, userId: record.userId };
    return {
      json,
      text: `API key ${record.name} created: ${record.id}\n\n  ${key}\n\nCopy it now: it is shown this once and never again.`,
    };
  },
};

const keyRevoke: CommandSpec = {
  name: "key revoke",
  flags: ["id"],
  synopsis: "key revoke --id KEY_ID",
  help: "Revokes an API key: every server process refuses it from its next request.",
  async run({ config, flags }) {
    const key = await withAdmin(config, (admin) => admin.revokeApiKey(requiredFlag(flags, "id")));
    return { json: { id: key.id, revoked: true }, text: `API key ${key.id} revoked: it stops working on its next request.` };
  },
};

const keyList: CommandSpec = {
  name: "key list",
  flags: ["org"],
  synopsis: "key list --org ORG_ID",
  help: "Lists an organization's API keys, newest first, without their secrets.",
  async run({ config, flags }) {
    const { presentKey } = await import("../../core/accounts/mod.ts");
    const keys = await withAdmin(config, (admin) => admin.listApiKeys(requiredFlag(flags, "org")));
    const json = keys.map((key) => {
      const { userId: _, ...view } = presentKey(key);
      return view;
    });
    const rows = json.map(
      (k) => `${k.id}  ${k.prefix}…${k.last4}  ${k.name}  created ${k.createdAt}  ${k.revokedAt ? `revoked ${k.revokedAt}` : k.lastUsedAt ? `last used ${k.lastUsedAt}` : "never used"}`,
    );
    return { json, text: rows.length === 0 ? "No API keys." : rows.join("\n") };
  },
};

export const ACCOUNT_COMMANDS: CommandSpec[] = [orgCreate, orgList, userCreate, userList, userSetPassword, keyCreate, keyRevoke, keyList];

/** Columns padded to their widest cell, two spaces apart. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  return [line(header), ...rows.map(line)].join("\n");
}

export type { Flags };
