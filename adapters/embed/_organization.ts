/** Which organization an embedded certkeeper acts for: chosen by id or name, or the database's only one. */
import { ConfigError } from "../../core/config/mod.ts";
import { CertkeeperError, quote, type Limits, type OrganizationRecord, type Plan } from "../../core/base/mod.ts";
import type { Admin } from "../../core/accounts/mod.ts";
import type { Store } from "../../core/store/mod.ts";

/** An existing organization by id, or one by name (created with `plan` and `limits` when missing). */
export type OrganizationOption = { id: string } | { name: string; plan?: Plan; limits?: Partial<Limits> };

export const DEFAULT_ORGANIZATION_NAME = "certkeeper";

/**
 * Embedding is self-hosting: a plan limit would only get in the host's way, so organizations the
 * embed API creates are `enterprise` unless told otherwise.
 */
export const DEFAULT_EMBED_PLAN: Plan = "enterprise";

export async function resolveOrganization(store: Store, admin: Admin, option?: OrganizationOption): Promise<OrganizationRecord> {
  if (option && "id" in option) {
    const org = await store.organizations.get(option.id);
    if (!org) throw new ConfigError("organization", `No organization with id ${quote(option.id)} in this database.`);
    return org;
  }
  const all = await store.organizations.list();
  if (option) {
    const named = all.filter((org) => org.name === option.name);
    if (named.length > 1) {
      throw new ConfigError("organization", `${named.length} organizations are named ${quote(option.name)}: choose one by { id }.`);
    }
    return named[0] ?? create(admin, { name: option.name, plan: option.plan ?? DEFAULT_EMBED_PLAN, limits: option.limits });
  }
  if (all.length === 0) return create(admin, { name: DEFAULT_ORGANIZATION_NAME, plan: DEFAULT_EMBED_PLAN });
  if (all.length === 1) return all[0]!;
  throw new ConfigError(
    "organization",
    `The database holds ${all.length} organizations: choose one with the option organization: { id } or { name }.`,
  );
}

/** A bad name, plan or limit is a mistake in the options, reported as such. */
async function create(admin: Admin, input: Parameters<Admin["createOrganization"]>[0]): Promise<OrganizationRecord> {
  try {
    return await admin.createOrganization(input);
  } catch (error) {
    if (error instanceof CertkeeperError) throw new ConfigError("organization", error.message);
    throw error;
  }
}
