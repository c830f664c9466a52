/**
 * CONTRACT §2's commands. Each returns the JSON document `--json` prints and a human rendering of it;
 * main.ts decides which to print.
 */
import type { Config } from "../../core/config/mod.ts";
import { CertkeeperError } from "../../core/base/mod.ts";
import { presentKey, type Admin } from "../../core/accounts/mod.ts";
import { normalizeDomain, presentChecked } from "../../core/certificates/mod.ts";
import type { Store } from "../../core/store/mod.ts";
import { wire } from "../wiring/mod.ts";
import { bunPasswords } from "../bun/passwords.ts";

export interface CommandResult {
  json: unknown;
  text: string;
}

export type Flags = Record<string, string | boolean | undefined>;

export class UsageError extends Error {}

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

function optionalInteger(flags: Flags, name: string): number | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

async function withAdmin<T>(config: Config, fn: (admin: Admin, store: Store) => Promise<T>): Promise<T> {
  const wired = await wire(config, { passwords: bunPasswords });
  try {
    return await fn(wired.core.services.admin, wired.store);
  } finally {
    await wired.release();
  }
}

export async function orgCreate(config: Config, flags: Flags): Promise<CommandResult> {
  const org = await withAdmin(config, (admin) =>
    admin.createOrganization({
      name: required(flags, "name"),
      plan: flags.plan as string | undefined,
      limits: {
        certificates: optionalInteger(flags, "certificate-limit"),
        channels: optionalInteger(flags, "channel-limit"),
        requestsPerMinute: optionalInteger(flags, "rate-limit"),
      },
    }),
  );
  const json = { id: org.id, name: org.name, plan: org.plan, limits: org.limits };
  return {
    json,
    text:
      `Organization ${org.name} created: ${org.id}\n` +
      `Plan ${org.plan}: ${org.limits.certificates} certificates, ${org.limits.channels} channels, ` +
      `${org.limits.requestsPerMinute} requests per minute per key.`,
  };
}

export async function userCreate(config: Config, flags: Flags, readStdin: () => Promise<string>): Promise<CommandResult> {
  let password = flags.password as string | undefined;
  if (password === "-") password = (await readStdin()).replace(/\r?\n$/, "");
  const user = await withAdmin(config, (admin) =>
    admin.createUser({
      organizationId: required(flags, "org"),
      email: required(flags, "email"),
      role: required(flags, "role"),
      password,
    }),
  );
  const json = { id: user.id, organizationId: user.organizationId, email: user.email, role: user.role };
  return {
    json,
    text: `User ${user.email} (${user.role}) created: ${user.id}${user.passwordHash ? "\nThey can sign in to the settings area." : ""}`,
  };
}

export async function keyCreate(config: Config, flags: Flags): Promise<CommandResult> {
  const mode = flags.test ? "test" : "live";
  const { record, key } = await withAdmin(config, (admin) =>
    admin.createApiKey({ userId: required(flags, "user"), name: required(flags, "name"), mode }),
  );
  const json = { id: record.id, key, name: record.name, mode: record.mode, userId: record.userId };
  return {
    json,
    text: `API key ${record.name} created: ${record.id}\n\n  ${key}\n\nCopy it now: it is shown this once and never again.`,
  };
}

export async function keyRevoke(config: Config, flags: Flags): Promise<CommandResult> {
  const key = await withAdmin(config, (admin) => admin.revokeApiKey(required(flags, "id")));
  return { json: { id: key.id, revoked: true }, text: `API key ${key.id} revoked: it stops working on its next request.` };
}

export async function keyList(config: Config, flags: Flags): Promise<CommandResult> {
  const keys = await withAdmin(config, (admin) => admin.listApiKeys(required(flags, "org")));
  const json = keys.map((key) => {
    const { userId: _, ...view } = presentKey(key);
    return view;
  });
  const rows = json.map(
    (k) => `${k.id}  ${k.prefix}…${k.last4}  ${k.name}  created ${k.createdAt}  ${k.revokedAt ? `revoked ${k.revokedAt}` : k.lastUsedAt ? `last used ${k.lastUsedAt}` : "never used"}`,
  );
  return { json, text: rows.length === 0 ? "No API keys." : rows.join("\n") };
}

/** `check DOMAIN[:PORT]`: the certificate as GET would show it, stored nowhere. */
export async function check(config: Config, target: string | undefined): Promise<CommandResult> {
  if (!target) throw new UsageError("check needs a domain: certkeeper check example.com[:port]");
  const match = /^(.*?)(?::(\d{1,5}))?$/.exec(target)!;
  const domain = normalizeDomain(match[1]);
  const port = match[2] === undefined ? 443 : Number(match[2]);
  if (port < 1 || port > 65535) throw new UsageError(`port ${port} is out of range 1-65535`);
  // Nothing is stored: the wiring's in-memory store is gone with the command.
  const wired = await wire(config, { store: "memory" });
  const outcome = await wired.core.source.inspect(domain, port).finally(() => wired.release());
  if (!outcome.ok) {
    throw new CertkeeperError("certificate_unreachable", `No TLS certificate could be retrieved from ${domain}:${port}: ${outcome.message}`);
  }
  const now = Date.now();
  const view = presentChecked({ domain, port, details: outcome.details, problem: outcome.problem, failure: null, lastCheckedAt: now }, now);
  const text = [
    `${view.domain}:${view.port}  ${view.status}${view.statusReason ? ` (${view.statusReason})` : ""}`,
    `  subject    ${view.subject}`,
    `  issuer     ${view.issuer}`,
    `  expires    ${view.expiresAt} (${view.daysUntilExpiry} days)`,
    `  names      ${view.subjectAlternativeNames.join(", ")}`,
    `  serial     ${view.serialNumber}`,
    `  algorithm  ${view.signatureAlgorithm}`,
    `  chain      ${view.chain.map((c) => c.subject).join(" <- ")}`,
  ].join("\n");
  return { json: view, text };
}
