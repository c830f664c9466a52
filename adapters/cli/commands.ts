/**
 * The account commands (CONTRACT §2, §17): organizations, users and API keys. Each returns the JSON
 * document `--json` prints and a human rendering of it; main.ts decides which to print.
 */
import { spawnSync } from "node:child_process";
import type { Config } from "../../core/config/mod.ts";
import { PLANS, presentKey, ROLES, type Admin, type OrganizationUsage } from "../../core/accounts/mod.ts";
import { CertkeeperError, createLogger, printable, silentLogger, type Limits, type Logger, type Mode, type OrganizationRecord } from "../../core/base/mod.ts";
import type { Principal } from "../../core/auth/mod.ts";
import type { Store } from "../../core/store/mod.ts";
import type { Wired } from "../wiring/mod.ts";
import { bunPasswords } from "../bun/passwords.ts";
import { loadTrust } from "./trust.ts";
import { choiceFlag, optionalInteger, requiredFlag, UsageError, type CommandContext, type CommandOutcome, type CommandSpec, type Flags } from "./command_table.ts";

/**
 * The logger of `check`, which keeps nothing (its store lives in memory for the one command): none.
 * What it found is its answer (stdout, the exit code, its note on stderr).
 */
export function cliLogger(_config: Config): Logger {
  return silentLogger;
}

/**
 * The logger of the commands that change what is kept: what they change (an organization, a user, a
 * role, a password, an API key, a certificate) and what that raised (events, failed delivery
 * attempts of `channel test`) is logged as the server logs it, one line each, on stderr (stdout stays
 * the command's answer), at CERTKEEPER_LOG_LEVEL and in CERTKEEPER_LOG_FORMAT (`auto`: readable at a
 * terminal, JSON lines otherwise). A key made at a shell is then in the same audit trail as one made
 * in the settings area: the key id, never the key; never a password.
 */
export function auditLogger(config: Config): Logger {
  const format = config.logFormat === "auto" ? (process.stderr.isTTY ? "pretty" : "json") : config.logFormat;
  return createLogger(config.logLevel, { format, write: (line) => process.stderr.write(`${line}\n`) });
}

/**
 * Opens the configured database with the whole wiring (core, transports), runs `fn`, releases it. The
 * trusted roots are read first, so a bad CERTKEEPER_EXTRA_CA_FILE is named by its variable.
 */
export async function withWired<T>(config: Config, fn: (wired: Wired) => Promise<T>): Promise<T> {
  // Loaded when a command runs, not at the CLI's start: help and usage errors need none of it.
  const { wire } = await import("../wiring/mod.ts");
  const wired = await wire(config, { passwords: bunPasswords, logger: auditLogger(config), brief: true, trust: await loadTrust(config) });
  try {
    return await fn(wired);
  } finally {
    await wired.release();
  }
}

/**
 * Opens the configured database, runs `fn` with the admin operations, closes it. Only the store and
 * the accounts are loaded, not the whole wiring: these commands start in half the time.
 */
export async function withAdmin<T>(config: Config, fn: (admin: Admin, store: Store) => Promise<T>): Promise<T> {
  const { openAccounts } = await import("../wiring/accounts.ts");
  const accounts = await openAccounts(config, { passwords: bunPasswords, logger: auditLogger(config) });
  try {
    return await fn(accounts.admin, accounts.store);
  } finally {
    await accounts.release();
  }
}

/**
 * The CLI acting in an organization and mode as the embedding host does: an owner, not rate limited,
 * through the API's own pipeline (validation, rules and errors of the routes).
 */
export function ownerOf(org: OrganizationRecord, mode: Mode): Principal {
  return { keyId: "cli", userId: "cli", role: "owner", scope: { organizationId: org.id, mode }, limits: org.limits };
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

const LIMIT_FLAGS = ["certificate-limit", "channel-limit", "rate-limit", "watch-limit"];

/** The limit flags given, as Limits fields. */
function limitFlags(flags: Flags): Partial<Limits> {
  return {
    certificates: optionalInteger(flags, "certificate-limit"),
    channels: optionalInteger(flags, "channel-limit"),
    requestsPerMinute: optionalInteger(flags, "rate-limit", { min: 1, why: "at 0 every request of the organization would be refused" }),
    watches: optionalInteger(flags, "watch-limit"),
  };
}

/** What org create and org update print. */
function organizationOutcome(org: OrganizationRecord, verb: string): CommandOutcome {
  return {
    json: { id: org.id, name: org.name, plan: org.plan, limits: org.limits },
    text:
      `Organization ${org.name} ${verb}: ${org.id}\n` +
      `Plan ${org.plan}: ${count(org.limits.certificates, "certificate")}, ${count(org.limits.channels, "channel")}, ` +
      `${org.limits.requestsPerMinute} requests per minute per key, ${count(org.limits.watches, "watch", "watches")}.`,
  };
}

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const orgCreate: CommandSpec = {
  name: "org create",
  flags: ["name", "plan", ...LIMIT_FLAGS, "if-missing"],
  synopsis: "org create --name N [--plan free|pro|enterprise] [--certificate-limit N] [--channel-limit N] [--rate-limit N] [--watch-limit N] [--if-missing]",
  help:
    "Creates an organization. Plans: free (25 certificates, 5 channels, 60 requests/min per key, 1 CT watch), " +
    "pro (500, 50, 600, 10), enterprise (100000, 1000, 6000, 1000); the limit flags override the plan's. " +
    "Self-hosted, the plan is only a set of limits: change them any time with org update.\n" +
    "--if-missing prints the organization of that name instead when exactly one exists (nothing is changed), " +
    "so a set-up script can run twice.",
  async run({ config, flags }) {
    const name = requiredFlag(flags, "name");
    const { org, existed } = await withAdmin(config, async (admin) => {
      if (flags["if-missing"]) {
        const named = await admin.organizationsNamed(name);
        if (named.length > 1) {
          throw new CertkeeperError("invalid_request", `${named.length} organizations are named "${name}": see org list, and use the id of the one you mean.`);
        }
        if (named.length === 1) return { org: named[0]!, existed: true };
      }
      return { org: await admin.createOrganization({ name, plan: choiceFlag(flags, "plan", PLANS), limits: limitFlags(flags) }), existed: false };
    });
    return organizationOutcome(org, existed ? "exists already (nothing changed)" : "created");
  },
};

const orgUpdate: CommandSpec = {
  name: "org update",
  flags: ["id", "name", "plan", ...LIMIT_FLAGS],
  synopsis: "org update --id ORG [--name N] [--plan free|pro|enterprise] [--certificate-limit N] [--channel-limit N] [--watch-limit N] [--rate-limit N]",
  help:
    "Changes an organization's name, plan or limits; prints what org create prints. --id takes the id or the\n" +
    "organization's name. A new --plan brings that plan's limits (then the limit flags override them); without\n" +
    "--plan, each limit flag replaces that one limit. Limits apply from the next request, in every server process.",
  async run({ config, flags }) {
    const ref = requiredFlag(flags, "id");
    const limits = limitFlags(flags);
    const changes = { name: flags.name as string | undefined, plan: choiceFlag(flags, "plan", PLANS), limits };
    if (changes.name === undefined && changes.plan === undefined && Object.values(limits).every((v) => v === undefined)) {
      throw new UsageError(`org update needs something to change: --name, --plan or a limit flag (${LIMIT_FLAGS.map((f) => `--${f}`).join(", ")})`);
    }
    const org = await withAdmin(config, async (admin) => admin.updateOrganization((await admin.findOrganization(ref)).id, changes));
    return organizationOutcome(org, "updated");
  },
};

/** "3 of 25", and the test data's when it holds any: "3 of 25 (test: 1 of 25)". */
function usedOf(usage: OrganizationUsage, field: "certificates" | "channels" | "watches", limit: number): string {
  const live = `${usage.live[field]} of ${limit}`;
  return usage.test[field] > 0 ? `${live} (test: ${usage.test[field]} of ${limit})` : live;
}

const orgList: CommandSpec = {
  name: "org list",
  flags: [],
  synopsis: "org list",
  help:
    "Lists every organization, oldest first: its id, plan, what it holds and its limits. Limits count per mode:\n" +
    "\"3 of 25\" is 3 certificates in live data of the 25 allowed, and the test data's count follows when it has any.\n" +
    "With --json: each organization's limits and its usage ({ live, test } counts) as two fields.",
  async run({ config }) {
    const rows = await withAdmin(config, async (admin) =>
      Promise.all((await admin.listOrganizations()).map(async (org) => ({ org, usage: await admin.usage(org.id) }))),
    );
    const json = rows.map(({ org, usage }) => ({
      id: org.id,
      name: org.name,
      plan: org.plan,
      limits: org.limits,
      usage,
      createdAt: new Date(org.createdAt).toISOString(),
    }));
    const text = table(
      ["ID", "NAME", "PLAN", "CERTIFICATES", "CHANNELS", "WATCHES", "REQUESTS/MIN PER KEY"],
      rows.map(({ org, usage }) => [
        org.id,
        org.name,
        org.plan,
        usedOf(usage, "certificates", org.limits.certificates),
        usedOf(usage, "channels", org.limits.channels),
        usedOf(usage, "watches", org.limits.watches),
        `at most ${org.limits.requestsPerMinute}`,
      ]),
    );
    return { json, text: json.length === 0 ? "No organizations yet: create one with org create --name N." : text };
  },
};

const userCreate: CommandSpec = {
  name: "user create",
  flags: ["org", "email", "role", "password", "if-missing"],
  synopsis: "user create --org ORG --email E --role owner|admin|member [--password P | --password -] [--if-missing]",
  help:
    "Creates a user of an organization (--org: its id or name). With --password the user can sign in to the settings area; --password - reads it from standard input. Without it the user can own API keys but not sign in (give one later with user set-password).\n" +
    "--if-missing prints the user with that email instead when they already belong to that organization with that role (nothing is changed).",
  async run(context) {
    const { config, flags } = context;
    const ref = requiredFlag(flags, "org");
    const email = requiredFlag(flags, "email");
    const role = choiceFlag(flags, "role", ROLES, { required: true });
    const { user, existed } = await withAdmin(config, async (admin, store) => {
      const org = await admin.findOrganization(ref);
      if (flags["if-missing"]) {
        const existing = await store.users.findByEmail(email.trim().toLowerCase());
        if (existing && existing.organizationId === org.id && existing.role === role) return { user: existing, existed: true };
        if (existing) {
          throw new CertkeeperError(
            "invalid_request",
            existing.organizationId === org.id
              ? `A user with email "${existing.email}" already exists in ${org.name}, as ${existing.role}, not ${role}.`
              : `A user with email "${existing.email}" already exists in another organization.`,
          );
        }
      }
      const password = await passwordFlag(context, "none");
      return { user: await admin.createUser({ organizationId: org.id, email, role, password }), existed: false };
    });
    const json = { id: user.id, organizationId: user.organizationId, email: user.email, role: user.role };
    return {
      json,
      text: existed
        ? `User ${user.email} (${user.role}) exists already: ${user.id} (nothing changed)`
        : `User ${user.email} (${user.role}) created: ${user.id}${user.passwordHash ? "\nThey can sign in to the settings area." : ""}`,
    };
  },
};

const userList: CommandSpec = {
  name: "user list",
  flags: ["org"],
  synopsis: "user list --org ORG",
  help: "Lists an organization's users (--org: its id or name): id, email, role, whether they can sign in (have a password), when they were added.",
  async run({ config, flags }) {
    const users = await withAdmin(config, async (admin) => admin.listUsers((await admin.findOrganization(requiredFlag(flags, "org"))).id));
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
  synopsis: "key create --user USER --name N [--test]",
  help: "Creates an API key acting as the user (--user: their id or email; the key has the user's role). The key is printed once and never again; only its hash is stored. --test makes a ck_test_ key, which sees test data only.",
  async run({ config, flags }) {
    const mode = flags.test ? "test" : "live";
    const ref = requiredFlag(flags, "user");
    const name = requiredFlag(flags, "name");
    const { record, key } = await withAdmin(config, async (admin) => admin.createApiKey({ userId: (await admin.findUser(ref)).id, name, mode }));
    const json = { id: record.id, key, name: record.name, mode: record.mode, userId: record.userId };
    return {
      json,
      text: `API key ${record.name} created: ${record.id}\n\n  ${key}\n\nCopy it now: it is shown this once and never again.`,
    };
  },
};

const keyRevoke: CommandSpec = {
  name: "key revoke",
  flags: ["id", "org"],
  synopsis: "key revoke --id KEY [--org ORG]",
  help: [
    "Revokes an API key: every server process refuses it from its next request. --id takes the key's id (in",
    "key list) or its name when no other key not yet revoked has that name; --org (id or name) looks in",
    "that organization only.",
  ].join("\n"),
  async run({ config, flags }) {
    const ref = requiredFlag(flags, "id");
    const key = await withAdmin(config, async (admin) => {
      const organizationId = flags.org === undefined ? undefined : (await admin.findOrganization(String(flags.org))).id;
      return admin.revokeApiKey((await admin.findApiKey(ref, { organizationId })).id);
    });
    return { json: { id: key.id, revoked: true }, text: `API key ${key.id} revoked: it stops working on its next request.` };
  },
};

const keyList: CommandSpec = {
  name: "key list",
  flags: ["org"],
  synopsis: "key list --org ORG",
  help: "Lists an organization's API keys (--org: its id or name), newest first, without their secrets.",
  async run({ config, flags }) {
    const keys = await withAdmin(config, async (admin) => admin.listApiKeys((await admin.findOrganization(requiredFlag(flags, "org"))).id));
    const json = keys.map((key) => {
      const { userId: _, ...view } = presentKey(key);
      return view;
    });
    const rows = json.map((k) => [
      k.id,
      `${k.prefix}…${k.last4}`,
      k.name,
      k.createdAt,
      k.revokedAt ? `revoked ${k.revokedAt}` : k.lastUsedAt ? `last used ${k.lastUsedAt}` : "never used",
    ]);
    return { json, text: rows.length === 0 ? "No API keys." : table(["ID", "KEY", "NAME", "CREATED", "STATE"], rows) };
  },
};

export const ACCOUNT_COMMANDS: CommandSpec[] = [orgCreate, orgUpdate, orgList, userCreate, userList, userSetPassword, keyCreate, keyRevoke, keyList];

/** Columns padded to their widest cell, two spaces apart; each cell on one line, shown, never acted on by the terminal. */
export function table(header: string[], rawRows: string[][]): string {
  const rows = rawRows.map((row) => row.map((cell) => printable(cell ?? "", false)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  return [line(header), ...rows.map(line)].join("\n");
}

export type { Flags };
