/**
 * `certificate add` and `certificate remove` (CONTRACT §23): the daily work without writing JSON. Each
 * goes through the API's own operation (POST /v1/certificates, DELETE /v1/certificates/{id}) as an
 * owner of the organization, so the rules, the retrieval and the errors are the route's.
 */
import { isIP } from "node:net";
import { CertkeeperError, relativeDays, type CertificateRecord, type Mode } from "../../core/base/mod.ts";
import type { Operation } from "../../core/operations/mod.ts";
import type { Wired } from "../wiring/mod.ts";
import { modeFlag, requiredFlag, type CommandSpec, type Flags } from "./command_table.ts";
import { ownerOf, withWired } from "./commands.ts";
import { findByIdOrName } from "./find_record.ts";

/** The wiring's operation with this id (every face registers from the one list). */
export function operation(wired: Wired, id: string): Operation {
  const found = wired.core.operations.find((op) => op.id === id);
  if (!found) throw new CertkeeperError("invalid_request", `This certkeeper has no ${id} operation.`);
  return found;
}

const PAGE = 500;

/** `DOMAIN[:PORT]` into the add body's fields; the route judges both (invalid_domain, a bad port). */
export function targetFields(target: string): { domain: string; port?: number } {
  const text = target.trim();
  // An address is read whole (the route then says an address is not monitored by name), never cut at
  // its last colon; an IPv6 one with a port is written in brackets.
  if (isIP(text) !== 0) return { domain: text };
  const bracketed = /^\[([^\]]+)\](?::(\d{1,6}))?$/.exec(text);
  if (bracketed) return bracketed[2] === undefined ? { domain: bracketed[1]! } : { domain: bracketed[1]!, port: Number(bracketed[2]) };
  const match = /^(.+):(\d{1,6})$/.exec(text);
  return match ? { domain: match[1]!, port: Number(match[2]) } : { domain: text };
}

/** `--tags a,b` as a list; the route judges each tag. */
function tagsFlag(flags: Flags): string[] | undefined {
  if (flags.tags === undefined) return undefined;
  return String(flags.tags)
    .split(",")
    .map((tag) => tag.trim())
    .filter((tag) => tag !== "");
}

export const certificateAddCommand: CommandSpec = {
  name: "certificate add",
  flags: ["org", "mode", "name", "tags", "protocol", "connect-to", "alert-policy"],
  positionals: { synopsis: "DOMAIN[:PORT]", min: 1, max: 1 },
  synopsis: "certificate add --org ORG DOMAIN[:PORT] [--name N] [--tags a,b] [--protocol P] [--connect-to A] [--alert-policy renewal|days] [--mode live|test]",
  help: [
    "Starts monitoring a certificate, exactly as POST /v1/certificates would: the certificate is retrieved",
    "now (nothing is stored when none can be), and the route's rules and errors apply (a bad domain, a",
    "duplicate, the organization's certificate limit). --org takes the organization's id or name; --mode",
    "picks live (default) or test data. --tags a,b sets tags; --protocol P speaks P's STARTTLS upgrade first",
    "(smtp, imap, …); --connect-to A connects there instead of the domain; --alert-policy chooses between",
    "alerts at the renewal deadline (renewal) and at fixed days before expiry (days).",
    "",
    "Prints the certificate as the add route answers it (--json: that document). A running server checks",
    "it from then on, and delivers any alert the first check raised.",
  ].join("\n"),
  async run({ config, flags, args }) {
    const ref = requiredFlag(flags, "org");
    const mode = modeFlag(flags);
    const body: Record<string, unknown> = targetFields(args[0]!);
    if (flags.name !== undefined) body.name = String(flags.name);
    const tags = tagsFlag(flags);
    if (tags) body.tags = tags;
    if (flags.protocol !== undefined) body.protocol = String(flags.protocol);
    if (flags["connect-to"] !== undefined) body.connectTo = String(flags["connect-to"]);
    if (flags["alert-policy"] !== undefined) body.alertPolicy = String(flags["alert-policy"]);
    const created = await withWired(config, async (wired) => {
      const org = await wired.core.services.admin.findOrganization(ref);
      const result = await wired.core.call({ operation: operation(wired, "addCertificate"), caller: { kind: "host", principal: ownerOf(org, mode) }, body });
      return result.data as { id: string; domain: string; port: number; status: string; daysUntilExpiry: number; expiresAt: string; name: string };
    });
    return {
      json: created,
      text:
        `Added ${created.domain}:${created.port} (${created.id})${created.name !== created.domain ? `, "${created.name}"` : ""}: ` +
        `${created.status}, expires ${created.expiresAt.slice(0, 16).replace("T", " ")} UTC (${relativeDays(created.daysUntilExpiry)}).`,
    };
  },
};

export const certificateRemoveCommand: CommandSpec = {
  name: "certificate remove",
  flags: ["id", "org"],
  synopsis: "certificate remove --id CERTIFICATE [--org ORG]",
  help: [
    "Stops monitoring a certificate (DELETE /v1/certificates/{id}): it is no longer checked and its pending",
    "notifications are cancelled. --id takes its id (in certificate list) or its name when no other",
    "certificate has that name; --org (id or name) looks in that organization only.",
  ].join("\n"),
  async run({ config, flags }) {
    const ref = requiredFlag(flags, "id");
    const removed = await withWired(config, async (wired) => {
      const found = await findByIdOrName(wired, ref, {
        kind: "certificate",
        org: flags.org === undefined ? undefined : String(flags.org),
        get: (scope, id) => wired.store.certificates.get(scope, id),
        list: (scope) => allCertificates(wired, scope),
        notFound: "certificate_not_found",
        listCommand: "certificate list --org ORG",
      });
      const principal = ownerOf(found.org, found.mode);
      await wired.core.call({ operation: operation(wired, "deleteCertificate"), caller: { kind: "host", principal }, params: { id: found.record.id } });
      return found.record;
    });
    const id = removed.id;
    return { json: { id, deleted: true }, text: `Removed ${removed.domain}:${removed.port} (${id}): it is no longer monitored.` };
  },
};

/** Every certificate of the scope, read in pages. */
async function allCertificates(wired: Wired, scope: { organizationId: string; mode: Mode }): Promise<CertificateRecord[]> {
  const all: CertificateRecord[] = [];
  const now = Date.now();
  let after: { notAfter: number; id: string } | undefined;
  for (;;) {
    const page = await wired.store.certificates.list(scope, { limit: PAGE, after, now });
    all.push(...page);
    if (page.length < PAGE) return all;
    const last = page.at(-1)!;
    after = { notAfter: last.details.notAfter, id: last.id };
  }
}
