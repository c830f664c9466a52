/**
 * How the CLI finds the certificate or channel an `--id` names (CONTRACT §23: ids or unique names
 * wherever an id is asked for). The CLI is the installation's operator: like the ids, names are looked
 * up in every organization's live and test data, or in one organization's when `--org` is given.
 */
import { CertkeeperError, nameKey, quote, type Mode, type OrganizationRecord } from "../../core/base/mod.ts";
import type { Wired } from "../wiring/mod.ts";

type Scope = { organizationId: string; mode: Mode };

/** A record and where it was found. */
export interface Found<T> {
  record: T;
  org: OrganizationRecord;
  mode: Mode;
}

/**
 * The record `read` finds in one of the organizations' live or test data, with where it was found:
 * ids are unique, so the first hit is the one.
 */
async function findInAnyScope<T>(wired: Wired, read: (scope: Scope) => Promise<T | null>, orgs?: OrganizationRecord[]): Promise<Found<T> | null> {
  for (const org of orgs ?? (await wired.store.organizations.list())) {
    for (const mode of ["live", "test"] as const) {
      const record = await read({ organizationId: org.id, mode });
      if (record) return { record, org, mode };
    }
  }
  return null;
}

export interface FindByIdOrNameOptions<T> {
  /** "certificate" or "channel": how messages call the record. */
  kind: string;
  /** The `--org` flag: its id or name; absent, every organization. */
  org?: string;
  get: (scope: Scope, id: string) => Promise<T | null>;
  /** Every record of the scope. */
  list: (scope: Scope) => Promise<T[]>;
  /** The code of the error when nothing matches. */
  notFound: "certificate_not_found" | "channel_not_found";
  /** The command that lists the records with their ids, for messages. */
  listCommand: string;
}

/**
 * The record `ref` names: its id, or else its name when exactly one record has that name (compared
 * as organization names are: {@link nameKey}). A name several records share is refused,
 * listing their ids: one of them is what to give instead. Spaces around either are not compared (the
 * shell or a copy may add or drop them).
 */
export async function findByIdOrName<T extends { id: string; name: string }>(
  wired: Wired,
  ref: string,
  options: FindByIdOrNameOptions<T>,
): Promise<Found<T>> {
  const text = ref.trim();
  const orgs = options.org === undefined ? await wired.store.organizations.list() : [await wired.core.services.admin.findOrganization(options.org)];
  const byId = await findInAnyScope(wired, (scope) => options.get(scope, text), orgs);
  if (byId) return byId;
  const wanted = nameKey(text);
  const named: Found<T>[] = [];
  for (const org of orgs) {
    for (const mode of ["live", "test"] as const) {
      for (const record of await options.list({ organizationId: org.id, mode })) {
        if (nameKey(record.name) === wanted) named.push({ record, org, mode });
      }
    }
  }
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    const where = named.map((f) => `${f.record.id} (${f.org.name}, ${f.mode})`).join(", ");
    throw new CertkeeperError("invalid_request", `${named.length} ${options.kind}s are named ${quote(text)}: give the id of the one you mean: ${where}.`);
  }
  const within = options.org === undefined ? "" : ` in ${quote(orgs[0]!.name)}`;
  throw new CertkeeperError(options.notFound, `No ${options.kind} with id or name ${quote(text)}${within}: see ${options.listCommand}.`);
}
