/**
 * The store and the accounts' admin operations alone, without the rest of the wiring: what the CLI's
 * organization, user and key commands need. Loading core's checks, transports and routes costs a
 * command about as much CPU as its whole work, so these commands start in half the time.
 */
import { maskUrl, type Config } from "../../core/config/mod.ts";
import { Admin, type PasswordHasher } from "../../core/accounts/mod.ts";
import { systemClock, type Logger } from "../../core/base/mod.ts";
import { StorageUnavailableError, type Store } from "../../core/store/mod.ts";
import { openLibsqlStore } from "../libsql/mod.ts";
import type { MigrationReport } from "../sql/mod.ts";

/**
 * The configured database, opened (and migrated when new or older). `brief`: opened for one command,
 * without the threads a long-running process keeps (the connection's and the background checkpointer's).
 */
export async function openConfiguredStore(config: Config, options: { brief?: boolean; logger?: Logger } = {}): Promise<Store> {
  const { logger } = options;
  const database = maskUrl(config.databaseUrl);
  // An upgrade cannot be undone (an older release refuses the database then): said as it begins and
  // once done; a wait of minutes said as it begins, and why: in silence the process would look hung.
  const report: MigrationReport | undefined = logger && {
    waiting: ({ reason, upToMs }) =>
      logger.warn(
        reason === "unreachable"
          ? "waiting for the database server: no connection can be made to it yet"
          : "waiting for the database: another process holds it (upgrading it, or a long write), or it is slow to answer",
        { database, upToSeconds: Math.round(upToMs / 1000) },
      ),
    upgrading: ({ from, to }) => logger.info("upgrading the database", { database, fromSchema: from, toSchema: to }),
    upgraded: ({ from, to, ms }) => logger.info("database upgraded", { database, fromSchema: from, toSchema: to, ms }),
  };
  try {
    return await openLibsqlStore({ url: config.databaseUrl, authToken: config.databaseAuthToken, backgroundCheckpoints: !options.brief, thread: !options.brief, report });
  } catch (error) {
    // A server that is not there, said as such (the store's own words are about a change not saved).
    if (error instanceof StorageUnavailableError && error.reason === "unreachable") {
      throw new Error(`no connection could be made to the database server at ${maskUrl(config.databaseUrl)} (CERTKEEPER_DATABASE_URL): start it, or correct the URL`, { cause: error });
    }
    // A local file that cannot be one (a folder, a text file, no permission), said with the variable to change.
    const failure = localFileFailure(config.databaseUrl, error);
    if (failure) throw new Error(`the database file ${maskUrl(config.databaseUrl)} (CERTKEEPER_DATABASE_URL) ${failure}: give the path of a certkeeper database file, or of one to create`, { cause: error });
    throw error;
  }
}

/**
 * A local database file that is no database (SQLITE_NOTADB) or cannot be opened at all (SQLite's
 * CANTOPEN, which the driver reports as a failed connection), in words; null for anything else (a
 * corrupt or full database keeps the driver's own words).
 */
function localFileFailure(url: string, error: unknown): string | null {
  if (!url.startsWith("file:")) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === "SQLITE_NOTADB") return "is not a database";
  if (code === "SQLITE_CANTOPEN" || (typeof message === "string" && /^ConnectionFailed\(.*: 14"?\)$/s.test(message))) {
    return "cannot be opened (a folder, a missing folder on its path, or no permission)";
  }
  return null;
}

export interface Accounts {
  store: Store;
  admin: Admin;
  release(): Promise<void>;
}

/** The configured database with the admin operations over it, as `wire()` gives them (`core.services.admin`). */
export async function openAccounts(config: Config, options: { passwords?: PasswordHasher; logger: Logger }): Promise<Accounts> {
  const store = await openConfiguredStore(config, { brief: true, logger: options.logger });
  return { store, admin: new Admin(store, systemClock, options), release: () => store.close() };
}
