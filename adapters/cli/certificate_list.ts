/**
 * `certificate list --org ORG [--mode live|test] [--status S[,S…]]` (CONTRACT §17, §23): an
 * organization's certificates by expiry, soonest first, with their ids and tags, as a table or
 * (--json) as GET's items.
 */
import { CERTIFICATE_STATUSES, daysLeft, type CertificateStatus } from "../../core/base/mod.ts";
import { modeFlag, requiredFlag, UsageError, type CommandSpec } from "./command_table.ts";
import { table, withAdmin } from "./commands.ts";

const PAGE = 1000;

export const certificateListCommand: CommandSpec = {
  name: "certificate list",
  flags: ["org", "mode", "status"],
  synopsis: "certificate list --org ORG [--mode live|test] [--status S[,S...]]",
  help:
    "Lists an organization's monitored certificates (--org: its id or name) by expiry, soonest first: id, status,\n" +
    "days left, expiry, reason, domain and port, tags and name. The id is what certificate remove --id takes.\n" +
    `--mode picks live (default) or test data; --status keeps only ${CERTIFICATE_STATUSES.join(", ")} (a comma list).\n` +
    "With --json: an array of certificates as GET /v1/certificates shows them.",
  async run({ config, flags }) {
    const ref = requiredFlag(flags, "org");
    const mode = modeFlag(flags);
    const statuses = flags.status === undefined ? undefined : parseStatuses(String(flags.status));
    // Loaded here, not at the CLI's start: the other commands need no certificate views.
    const { presentCertificate } = await import("../../core/certificates/mod.ts");
    const views = await withAdmin(config, async (admin, store) => {
      const scope = { organizationId: (await admin.findOrganization(ref)).id, mode };
      const now = Date.now();
      const all = [];
      let after: { notAfter: number; id: string } | undefined;
      for (;;) {
        const page = await store.certificates.list(scope, { limit: PAGE, after, statuses, now });
        all.push(...page.map((record) => presentCertificate(record, now)));
        if (page.length < PAGE) break;
        const last = page.at(-1)!;
        after = { notAfter: last.details.notAfter, id: last.id };
      }
      return all;
    });
    const text =
      views.length === 0
        ? `No ${statuses ? `${statuses.join(" or ")} ` : ""}certificates in ${mode} data.`
        : table(
            ["ID", "STATUS", "DAYS", "EXPIRES", "REASON", "DOMAIN", "TAGS", "NAME"],
            views.map((v) => [
              v.id,
              v.status,
              daysLeft(v.daysUntilExpiry),
              v.expiresAt.slice(0, 10),
              v.statusReason ?? "-",
              `${v.domain}:${v.port}`,
              v.tags.length > 0 ? v.tags.join(",") : "-",
              v.name === v.domain ? "" : v.name,
            ]),
          );
    return { json: views, text };
  },
};

function parseStatuses(text: string): CertificateStatus[] {
  const statuses = text.split(",").map((s) => s.trim());
  for (const status of statuses) {
    if (!(CERTIFICATE_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`--status has unknown value "${status}": use ${CERTIFICATE_STATUSES.join(", ")}, or a comma list of them`);
    }
  }
  return statuses as CertificateStatus[];
}
