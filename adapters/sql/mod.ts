/**
 * The SQL store: every query certkeeper runs, over any {@link Executor}. The libSQL adapter supplies
 * the executor; this module knows nothing of drivers.
 */
import type { CertificateKey, Store } from "../../core/store/mod.ts";
import type { Executor } from "./executor.ts";
import { migrate, type MigrationReport } from "./migrations.ts";
import { sqlApiKeys, sqlOrganizations, sqlRateLimits, sqlUsers } from "./accounts.ts";
import { sqlCertificates } from "./certificates.ts";
import { sqlChannels } from "./channels.ts";
import { sqlEvents } from "./events.ts";
import { sqlImports } from "./imports.ts";
import { sqlSessions, sqlSignInAttempts } from "./sessions.ts";
import { sqlRevocations, sqlWatches } from "./watches.ts";
import { sqlRenewalInfo } from "./renewal_info.ts";
import { sqlCtLogs } from "./ct_logs.ts";

export interface SqlStoreOptions {
  /** True when other processes share the database (a libSQL server). */
  shared: boolean;
  /** A cheap token that changes with every commit by anyone; see Store.changeToken. */
  changeToken?: () => string;
  /**
   * The executor whose writes the change token leaves out (Executor.quiet): given, a check's save and
   * lease go through it and are told to Store.onCertificatesWritten listeners instead.
   */
  quiet?: Executor;
  /** Told of an upgrade and of a long wait for the database while migrating (see MigrationReport). */
  report?: MigrationReport;
}

/** Migrates the database, then returns the store over it. */
export async function createSqlStore(db: Executor, options: SqlStoreOptions): Promise<Store> {
  await migrate(db, { report: options.report });
  const written: Array<(certificates: readonly CertificateKey[]) => void> = [];
  const quiet = options.quiet && options.changeToken ? { db: options.quiet, told: (keys: readonly CertificateKey[]) => written.forEach((listener) => listener(keys)) } : undefined;
  // Writes that change no key grant and no certificate (what a cache keyed by the change token holds)
  // leave the token alone where the store can: see Store.changeToken.
  const bookkeeping = quiet?.db ?? db;
  return {
    organizations: sqlOrganizations(db),
    users: sqlUsers(db),
    apiKeys: sqlApiKeys(db),
    certificates: sqlCertificates(db, quiet),
    channels: sqlChannels(db),
    events: sqlEvents(db),
    imports: sqlImports(db),
    rateLimits: sqlRateLimits(db),
    sessions: sqlSessions(db),
    signInAttempts: sqlSignInAttempts(db),
    revocations: sqlRevocations(bookkeeping),
    renewalInfo: sqlRenewalInfo(bookkeeping),
    watches: sqlWatches(db, bookkeeping),
    ctLogs: sqlCtLogs(db, bookkeeping),
    shared: options.shared,
    changeToken: options.changeToken,
    ...(quiet && {
      onCertificatesWritten: (listener: (certificates: readonly CertificateKey[]) => void) => {
        written.push(listener);
        return () => {
          const at = written.indexOf(listener);
          if (at !== -1) written.splice(at, 1);
        };
      },
    }),
    async ping() {
      // A few pages, as a small real write takes: a disk with no room for them refuses this too. In the
      // urgent lane: whether the database takes writes, not how many of this process's wait their turn
      // (a burst of them must not take the process out of its load balancer's rotation).
      await (db.urgent?.() ?? db).execute(
        `INSERT INTO write_probe (id, probed_at, pad) VALUES (1, ?, zeroblob(8192))
         ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at, pad = excluded.pad`,
        [Date.now()],
      );
    },
    close: () => db.close(),
  };
}

export type { Executor, ResultSet, Row, SqlValue, Statement } from "./executor.ts";
export type { MigrationReport } from "./migrations.ts";
export { ConstraintError, insideTransaction } from "./executor.ts";
