/**
 * The store and the accounts' admin operations alone, without the rest of the wiring: what the CLI's
 * organization, user and key commands need. Loading core's checks, transports and routes costs a
 * command about as much CPU as its whole work, so these commands start in half the time.
 */
import type { Config } from "../../core/config/mod.ts";
import { Admin, type PasswordHasher } from "../../core/accounts/mod.ts";
import { systemClock, type Logger } from "../../core/base/mod.ts";
import type { Store } from "../../core/store/mod.ts";
import { openLibsqlStore } from "../libsql/mod.ts";

/**
 * The configured database, opened (and migrated when new or older). `brief`: opened for one command,
 * without the threads a long-running process keeps (the connection's and the background checkpointer's).
 */
export function openConfiguredStore(config: Config, options: { brief?: boolean } = {}): Promise<Store> {
  return openLibsqlStore({ url: config.databaseUrl, authToken: config.databaseAuthToken, backgroundCheckpoints: !options.brief, thread: !options.brief });
}

export interface Accounts {
  store: Store;
  admin: Admin;
  release(): Promise<void>;
}

/** The configured database with the admin operations over it, as `wire()` gives them (`core.services.admin`). */
export async function openAccounts(config: Config, options: { passwords?: PasswordHasher; logger: Logger }): Promise<Accounts> {
  const store = await openConfiguredStore(config, { brief: true });
  return { store, admin: new Admin(store, systemClock, options), release: () => store.close() };
}
