/**
 * `backup --to FILE` (CONTRACT §17): a consistent copy of a local database, taken while servers run.
 * SQLite's `VACUUM INTO` reads one snapshot (a read transaction, which WAL mode lets writers carry on
 * beside), so the copy is the database as it was at one instant, never half a write.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { CertkeeperError } from "../../core/base/mod.ts";
import { requiredFlag, type CommandSpec } from "./command_table.ts";

export const backupCommand: CommandSpec = {
  name: "backup",
  flags: ["to"],
  synopsis: "backup --to FILE",
  help:
    "Copies the local database (CERTKEEPER_DATABASE_URL=file:…) to FILE, consistently, while servers keep running.\n" +
    "To use the copy: CERTKEEPER_DATABASE_URL=file:FILE npm start. FILE must not exist yet.\n" +
    "The copy has 4 KiB pages, as the files certkeeper creates: a file made with other pages moves over this way (servers stopped).\n" +
    "A libSQL server (http://, libsql://) is backed up with its own tools, not with this command.",
  async run({ config, flags }) {
    const to = resolve(requiredFlag(flags, "to"));
    // Loaded here, not at the CLI's start: help and usage errors need none of it.
    const [{ backupLibsqlFile }, { fileUrl, isRemoteUrl, localPath }] = await Promise.all([import("../libsql/backup.ts"), import("../libsql/mod.ts")]);
    if (isRemoteUrl(config.databaseUrl) || localPath(config.databaseUrl) === null) {
      throw new CertkeeperError(
        "invalid_request",
        `backup copies a local database file, and CERTKEEPER_DATABASE_URL is not one (a libSQL server or :memory:): back up a libSQL server with sqld's own tools.`,
      );
    }
    if (existsSync(to)) throw new CertkeeperError("invalid_request", `--to names "${to}", which already exists: give the path of a new file.`);
    if (!existsSync(dirname(to))) throw new CertkeeperError("invalid_request", `--to names "${to}", whose folder does not exist: create it first.`);
    const { bytes } = await backupLibsqlFile(config.databaseUrl, to);
    return {
      json: { to, bytes },
      text: `Backed up to ${to} (${bytes.toLocaleString("en")} bytes).\nTo use it: CERTKEEPER_DATABASE_URL=${fileUrl(to)} npm start`,
    };
  },
};
