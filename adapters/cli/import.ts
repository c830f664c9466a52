/**
 * `import --org ORG_ID [--mode live|test] FILE` (CONTRACT §17): submits the file's domains as one
 * import (POST /v1/imports' operation, acting as the organization's owner, as the embedding host
 * does), works it in this process beside any running server (imports are leased in the database),
 * shows progress on a terminal, and prints every item's result at the end; exit 1 when any failed.
 */
import { readFileSync } from "node:fs";
import { CertkeeperError, printable } from "../../core/base/mod.ts";
import type { OPERATIONS } from "../../core/operations/mod.ts";
import { bunPasswords } from "../bun/passwords.ts";
import { modeFlag, requiredFlag, UsageError, type CommandSpec } from "./command_table.ts";
import { ImportFileError, parseImportFile, type ImportItem } from "./import_file.ts";
import { auditLogger } from "./commands.ts";
import { loadTrust } from "./trust.ts";

const POLL_MS = 200;

interface ImportResult {
  index: number;
  status: "created" | "failed";
  certificateId: string | null;
  error: { code: string; message: string } | null;
}

interface ImportView {
  id: string;
  status: "running" | "finished";
  total: number;
  processed: number;
  created: number;
  failed: number;
  results?: ImportResult[];
}

export const importCommand: CommandSpec = {
  name: "import",
  flags: ["org", "mode"],
  positionals: { synopsis: "FILE", min: 1, max: 1 },
  synopsis: "import --org ORG [--mode live|test] FILE",
  help: [
    "Adds many certificates at once. FILE holds one domain[:port] per line (blank lines and # comments",
    "skipped), or CSV whose header names domain and any of port, name, tags (separated by ;), protocol,",
    "alertPolicy (renewal or days):",
    "",
    "  domain,port,name,tags",
    "  shop.example.com,443,Shop,team:web;prod",
    "",
    "Each line is judged as POST /v1/certificates would judge it (validation, duplicates, plan limits,",
    "retrieval). Progress shows on a terminal; every line's result is printed at the end (with --json: the",
    "finished import as GET /v1/imports/{id} shows it). Exit 1 when any line failed. The import is kept in",
    "the database: if this command is stopped, a running server (or the next import) finishes it.",
  ].join("\n"),
  async run({ config, flags, args, interactive }) {
    const ref = requiredFlag(flags, "org");
    const mode = modeFlag(flags);
    const file = args[0]!;
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new UsageError(`FILE "${file}" cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    let items: ImportItem[];
    try {
      items = parseImportFile(text);
    } catch (error) {
      if (error instanceof ImportFileError) throw new CertkeeperError("invalid_request", `${file}: ${error.message}.`);
      throw error;
    }
    // Loaded here, not at the CLI's start: help and usage errors need none of it.
    const [{ OPERATIONS }, { wire }] = await Promise.all([import("../../core/operations/mod.ts"), import("../wiring/mod.ts")]);
    const createImport = OPERATIONS.find((op) => op.id === "createImport");
    const getImport = OPERATIONS.find((op) => op.id === "getImport");
    if (!createImport || !getImport) throw new CertkeeperError("invalid_request", "This certkeeper has no imports (POST /v1/imports).");

    const wired = await wire(config, { passwords: bunPasswords, logger: auditLogger(config), trust: await loadTrust(config) });
    try {
      const org = await wired.core.services.admin.findOrganization(ref);
      const organizationId = org.id;
      const caller = {
        kind: "host",
        principal: { keyId: "cli", userId: "cli", role: "owner", scope: { organizationId, mode }, limits: org.limits },
      } as const;
      const call = (operation: (typeof OPERATIONS)[number], input: { params?: Record<string, string>; body?: unknown }) =>
        wired.core.call({ operation, caller, ...input });
      const created = (await call(createImport, { body: { certificates: items.map((item) => item.body) } })).data as ImportView;
      // Work it here; a server on the same database may take part (imports are leased).
      wired.core.services.imports?.start();
      const progress = interactive ? progressBar(created.total) : undefined;
      let current = created;
      while (current.status !== "finished") {
        await Bun.sleep(POLL_MS);
        current = (await call(getImport, { params: { id: created.id } })).data as ImportView;
        progress?.(current);
      }
      if (progress) process.stderr.write("\n");
      await wired.core.services.imports?.stop();
      return { json: current, text: report(file, items, current), exitCode: current.failed > 0 ? 1 : 0 };
    } finally {
      await wired.close();
    }
  },
};

/** `Importing [#########.........] 120/400  created 100  failed 20`, redrawn in place on stderr. */
function progressBar(total: number) {
  const width = 30;
  return (view: ImportView) => {
    const done = Math.round((view.processed / Math.max(total, 1)) * width);
    process.stderr.write(`\rImporting [${"#".repeat(done)}${".".repeat(width - done)}] ${view.processed}/${total}  created ${view.created}  failed ${view.failed}`);
  };
}

function report(file: string, items: ImportItem[], view: ImportView): string {
  const lines = (view.results ?? [])
    .filter((result) => result.status === "failed")
    .map((result) => {
      const item = items[result.index]!;
      // One line per failed row: a line break or tab in the file's cell (or the message quoting it) is written out.
      return printable(`${file}:${item.line}  ${String(item.body.domain ?? "")}  ${result.error?.code}: ${result.error?.message}`, false);
    });
  const summary = `Import ${view.id}: ${view.total} line${view.total === 1 ? "" : "s"}, ${view.created} created, ${view.failed} failed.`;
  return lines.length === 0 ? summary : `${lines.join("\n")}\n${summary}`;
}
