/**
 * The schema, as numbered migrations applied once each, in a write transaction, on start. Migration N
 * is the Nth entry of MIGRATIONS (schema_migrations records the versions applied); a new one is
 * appended, never inserted. A step is a statement, or a function for what SQL alone cannot compute.
 *
 * A migration that changes what a certificate row reads as (anything but next_check_at, lease_owner and
 * status_periods) must raise its version, as every write does: a running process hands out the records
 * it saved as long as their version stands (recent_saves.ts).
 *
 * Triggers on `certificates` keep certificate_periods (and ct_follower's watches_version on `watches`)
 * in step: a migration that rebuilds one of those tables (DROP TABLE and RENAME, as 6 did) drops its
 * triggers with it, and must create them again.
 */
import { isSqliteBusy, type Executor, type SqlValue } from "./executor.ts";
import { endpointsFrom, statusPeriods } from "./rows.ts";
import { leafNamesKey } from "../../core/deployment/mod.ts";

type Step = string | ((tx: Executor) => Promise<void>);

/** One period of a status_periods timeline (`period`, from json_each) as certificate_periods' columns. */
const PERIOD_FIELDS = `json_extract(period.value, '$[0]'), json_extract(period.value, '$[1]'), json_extract(period.value, '$[2]'), json_extract(period.value, '$[3]')`;
/** The rows of certificate_periods for the certificate row NEW (inside a trigger). */
const PERIOD_ROWS = `INSERT INTO certificate_periods (certificate_id, organization_id, mode, from_at, until_at, status, renewal)
  SELECT NEW.id, NEW.organization_id, NEW.mode, ${PERIOD_FIELDS} FROM json_each(NEW.status_periods) AS period`;

/** A column of a channel's last delivery attempt (a failing one may still be pending, to be retried). */
const LAST_ATTEMPT = `SELECT {column} FROM deliveries WHERE deliveries.channel_id = channels.id AND deliveries.attempts > 0 ORDER BY deliveries.updated_at DESC LIMIT 1`;

export const MIGRATIONS: Step[][] = [
  [
    `CREATE TABLE organizations (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      plan TEXT NOT NULL,
      certificate_limit INTEGER NOT NULL,
      channel_limit INTEGER NOT NULL,
      rate_limit INTEGER NOT NULL,
      created_at INTEGER NOT NULL
    )`,
    `CREATE TABLE users (
      id TEXT PRIMARY KEY,
      organization_id TEXT NOT NULL REFERENCES organizations (id),
      email TEXT NOT NULL UNIQUE,
      role TEXT NOT NULL,
      password_hash TEXT,
      created_at INTEGER NOT NULL
    )`,
    `CREATE INDEX users_organization ON users (organization_id, created_at)`,
    `CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL,
      organization_id TEXT NOT NULL,
      name TEXT NOT NULL,
      mode TEXT NOT NULL,
      hash TEXT NOT NULL UNIQUE,
      last4 TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER,
      revoked_at INTEGER
    )`,
    `CREATE INDEX api_keys_organization ON api_keys (organization_id, created_at)`,
    `CREATE INDEX api_keys_user ON api_keys (user_id)`,
    `CREATE TABLE certificates (
      id TEXT PRIMARY KEY,
      organization_id TEXT NOT NULL,
      mode TEXT NOT NULL,
      domain TEXT NOT NULL,
      port INTEGER NOT NULL,
      name TEXT NOT NULL,
      alert_thresholds TEXT NOT NULL,
      expiring_horizon INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      fingerprint TEXT NOT NULL,
      not_before INTEGER NOT NULL,
      not_after INTEGER NOT NULL,
      details TEXT NOT NULL,
      problem TEXT,
      last_checked_at INTEGER NOT NULL,
      failure TEXT,
      failure_count INTEGER NOT NULL,
      alerted_threshold INTEGER,
      expiry_alerted INTEGER NOT NULL,
      health TEXT NOT NULL,
      next_check_at INTEGER NOT NULL,
      lease_owner TEXT,
      version INTEGER NOT NULL,
      UNIQUE (organization_id, mode, domain, port)
    )`,
    `CREATE INDEX certificates_expiry ON certificates (organization_id, mode, not_after, id)`,
    `CREATE INDEX certificates_due ON certificates (next_check_at)`,
    `CREATE TABLE channels (
      id TEXT PRIMARY KEY,
      organization_id TEXT NOT NULL,
      mode TEXT NOT NULL,
      type TEXT NOT NULL,
      name TEXT NOT NULL,
      enabled INTEGER NOT NULL,
      config TEXT NOT NULL,
      signing_secret TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    )`,
    `CREATE INDEX channels_scope ON channels (organization_id, mode, created_at, id)`,
    `CREATE TABLE events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      organization_id TEXT NOT NULL,
      mode TEXT NOT NULL,
      type TEXT NOT NULL,
      certificate_id TEXT,
      data TEXT NOT NULL,
      created_at INTEGER NOT NULL
    )`,
    `CREATE INDEX events_scope ON events (organization_id, mode, seq)`,
    `CREATE INDEX events_certificate ON events (certificate_id)`,
    `CREATE TABLE deliveries (
      event_id TEXT NOT NULL,
      channel_id TEXT NOT NULL,
      status TEXT NOT NULL,
      attempts INTEGER NOT NULL,
      next_attempt_at INTEGER NOT NULL,
      lease_owner TEXT,
      last_error TEXT,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (event_id, channel_id)
    )`,
    `CREATE INDEX deliveries_due ON deliveries (status, next_attempt_at)`,
    `CREATE INDEX deliveries_channel ON deliveries (channel_id, status)`,
    `CREATE TABLE rate_limits (
      key_id TEXT PRIMARY KEY,
      window_start INTEGER NOT NULL,
      count INTEGER NOT NULL
    )`,
  ],
  // 2: the settings area's browser sessions (only a hash of each token) and the sign-in slowdown.
  [
    `CREATE TABLE sessions (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL,
      organization_id TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_seen_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    )`,
    `CREATE INDEX sessions_user ON sessions (user_id)`,
    `CREATE INDEX sessions_expiry ON sessions (expires_at)`,
    `CREATE TABLE sign_in_attempts (
      key TEXT PRIMARY KEY,
      failures INTEGER NOT NULL,
      last_failure_at INTEGER NOT NULL
    )`,
  ],
  // 3: the status rule lives in core only. Each certificate keeps the timeline of its status, computed
  // by core when a check or a patch is saved; SQL filters by comparing times, not by restating the rule.
  [
    `ALTER TABLE certificates ADD COLUMN status_periods TEXT NOT NULL DEFAULT '[]'`,
    backfillStatusPeriods,
    `ALTER TABLE certificates DROP COLUMN expiring_horizon`,
  ],
  // 4: revocation answers shared by every process, Certificate Transparency watches and their plan limit.
  [
    `CREATE TABLE revocation_cache (
      key TEXT PRIMARY KEY,
      answer TEXT NOT NULL,
      valid_until INTEGER NOT NULL
    )`,
    `CREATE INDEX revocation_cache_expiry ON revocation_cache (valid_until)`,
    `CREATE TABLE watches (
      id TEXT PRIMARY KEY,
      organization_id TEXT NOT NULL,
      mode TEXT NOT NULL,
      domain TEXT NOT NULL,
      include_subdomains INTEGER NOT NULL,
      auto_monitor INTEGER NOT NULL,
      allowed_issuers TEXT NOT NULL,
      last_polled_at INTEGER,
      last_error TEXT,
      issuances_seen INTEGER NOT NULL,
      cursor TEXT,
      baseline_done INTEGER NOT NULL,
      pending_names TEXT NOT NULL,
      next_poll_at INTEGER NOT NULL,
      lease_owner TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      UNIQUE (organization_id, mode, domain)
    )`,
    `CREATE INDEX watches_scope ON watches (organization_id, mode, created_at, id)`,
    `CREATE INDEX watches_due ON watches (next_poll_at)`,
    `ALTER TABLE organizations ADD COLUMN watch_limit INTEGER NOT NULL DEFAULT 1`,
    `UPDATE organizations SET watch_limit = CASE plan WHEN 'pro' THEN 10 WHEN 'enterprise' THEN 1000 ELSE 1 END`,
  ],
  // 5: fleets (CONTRACT §16): certificate tags (a table to filter by, the sorted list to show) and
  // mutes, channel filters, imports worked item by item under a lease, and events by age for retention.
  [
    `ALTER TABLE certificates ADD COLUMN tags TEXT NOT NULL DEFAULT '[]'`,
    `ALTER TABLE certificates ADD COLUMN muted_until INTEGER`,
    `CREATE TABLE certificate_tags (
      organization_id TEXT NOT NULL,
      mode TEXT NOT NULL,
      tag TEXT NOT NULL,
      certificate_id TEXT NOT NULL,
      PRIMARY KEY (organization_id, mode, tag, certificate_id)
    ) WITHOUT ROWID`,
    `CREATE INDEX certificate_tags_certificate ON certificate_tags (certificate_id)`,
    `ALTER TABLE channels ADD COLUMN filter TEXT`,
    `CREATE INDEX events_age ON events (created_at)`,
    `CREATE TABLE imports (
      id TEXT PRIMARY KEY,
      organization_id TEXT NOT NULL,
      mode TEXT NOT NULL,
      certificate_limit INTEGER NOT NULL,
      status TEXT NOT NULL,
      total INTEGER NOT NULL,
      processed INTEGER NOT NULL,
      created INTEGER NOT NULL,
      failed INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      finished_at INTEGER,
      lease_owner TEXT,
      lease_until INTEGER NOT NULL
    )`,
    `CREATE INDEX imports_running ON imports (status, lease_until)`,
    `CREATE TABLE import_items (
      import_id TEXT NOT NULL,
      idx INTEGER NOT NULL,
      body TEXT NOT NULL,
      status TEXT NOT NULL,
      certificate_id TEXT,
      error_code TEXT,
      error_message TEXT,
      PRIMARY KEY (import_id, idx)
    ) WITHOUT ROWID`,
  ],
  // 6: every address, STARTTLS and where to connect (CONTRACT §11-§13). A target is now domain, port,
  // protocol and connectTo together, and SQLite cannot change a table constraint: rebuild the table.
  // connect_to is '' for "the domain" (UNIQUE treats NULLs as distinct). Certificates stored before are
  // due at once, so a check fills in their endpoints, chain details, key and connection.
  [
    `CREATE TABLE certificates_v6 (
      id TEXT PRIMARY KEY,
      organization_id TEXT NOT NULL,
      mode TEXT NOT NULL,
      domain TEXT NOT NULL,
      port INTEGER NOT NULL,
      name TEXT NOT NULL,
      alert_thresholds TEXT NOT NULL,
      status_periods TEXT NOT NULL DEFAULT '[]',
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      fingerprint TEXT NOT NULL,
      not_before INTEGER NOT NULL,
      not_after INTEGER NOT NULL,
      details TEXT NOT NULL,
      problem TEXT,
      last_checked_at INTEGER NOT NULL,
      failure TEXT,
      failure_count INTEGER NOT NULL,
      alerted_threshold INTEGER,
      expiry_alerted INTEGER NOT NULL,
      health TEXT NOT NULL,
      next_check_at INTEGER NOT NULL,
      lease_owner TEXT,
      version INTEGER NOT NULL,
      tags TEXT NOT NULL DEFAULT '[]',
      muted_until INTEGER,
      protocol TEXT NOT NULL DEFAULT 'tls',
      connect_to TEXT NOT NULL DEFAULT '',
      endpoints TEXT NOT NULL DEFAULT '[]',
      tls TEXT,
      alert_memory TEXT NOT NULL DEFAULT '{"leaves":[],"chain":[]}',
      UNIQUE (organization_id, mode, domain, port, protocol, connect_to)
    )`,
    `INSERT INTO certificates_v6 (id, organization_id, mode, domain, port, name, alert_thresholds, status_periods, created_at, updated_at, fingerprint, not_before, not_after, details, problem, last_checked_at, failure, failure_count, alerted_threshold, expiry_alerted, health, next_check_at, lease_owner, version, tags, muted_until) SELECT id, organization_id, mode, domain, port, name, alert_thresholds, status_periods, created_at, updated_at, fingerprint, not_before, not_after, details, problem, last_checked_at, failure, failure_count, alerted_threshold, expiry_alerted, health, next_check_at, lease_owner, version, tags, muted_until FROM certificates`,
    `DROP TABLE certificates`,
    `ALTER TABLE certificates_v6 RENAME TO certificates`,
    `CREATE INDEX certificates_expiry ON certificates (organization_id, mode, not_after, id)`,
    `CREATE INDEX certificates_due ON certificates (next_check_at)`,
    `UPDATE certificates SET next_check_at = 0`,
  ],
  // 7: one row that readiness rewrites, to learn whether the database still accepts writes; and each
  // delivery's organization beside it, so that claims can take a few of every organization's earliest
  // from an index instead of ranking the whole outbox.
  [
    `CREATE TABLE write_probe (id INTEGER PRIMARY KEY, probed_at INTEGER NOT NULL, pad BLOB NOT NULL)`,
    `ALTER TABLE deliveries ADD COLUMN organization_id TEXT NOT NULL DEFAULT ''`,
    `UPDATE deliveries SET organization_id = (SELECT organization_id FROM events WHERE events.id = deliveries.event_id)`,
    `CREATE INDEX deliveries_due_by_organization ON deliveries (status, organization_id, next_attempt_at)`,
  ],
  // 8: renewal, not age (CONTRACT §18-§20). Certificates stored before keep the `days` alert policy
  // they were added under; each timeline gains the renewal state (what `renewal=` filters on); what CAs
  // say in their renewal information (ARI) is kept once per leaf for every process; a certificate keeps
  // its served leaf's DNS names as a key, so an issuance of exactly those names finds it, and the
  // issuance pending deployment.
  [
    `ALTER TABLE certificates ADD COLUMN alert_policy TEXT NOT NULL DEFAULT 'days'`,
    `ALTER TABLE certificates ADD COLUMN names_key TEXT NOT NULL DEFAULT ''`,
    `ALTER TABLE certificates ADD COLUMN deployment TEXT`,
    backfillRenewalPeriods,
    `CREATE INDEX certificates_names ON certificates (organization_id, mode, names_key)`,
    `UPDATE certificates SET version = version + 1`,
    `CREATE TABLE renewal_info (
      cert_id TEXT PRIMARY KEY,
      info TEXT NOT NULL,
      expires_at INTEGER NOT NULL
    )`,
    `CREATE INDEX renewal_info_expiry ON renewal_info (expires_at)`,
  ],
  // What DNS says about a certificate (CONTRACT §22): an smtp certificate's mail domain (NULL: the
  // default), and the findings of its checks (CAA sets and verdict, TLSA records, MTA-STS policy) as JSON.
  // Both read as "nothing yet" in rows written before, so no version is raised.
  [`ALTER TABLE certificates ADD COLUMN mail_domain TEXT`, `ALTER TABLE certificates ADD COLUMN dns TEXT`],
  // Each channel's delivery health (CONTRACT §23): its last attempt, and since when it has been failing.
  [
    `ALTER TABLE channels ADD COLUMN last_delivery_at INTEGER`,
    `ALTER TABLE channels ADD COLUMN last_delivery_status TEXT`,
    `ALTER TABLE channels ADD COLUMN last_delivery_error TEXT`,
    `ALTER TABLE channels ADD COLUMN failing_since INTEGER`,
  ],
  // Following the CT logs (CONTRACT §21): the one follower's lease, each log's position and compact
  // range, and the issuances matched to each watch (one row per watch and issuance).
  [
    `CREATE TABLE ct_follower (id INTEGER PRIMARY KEY CHECK (id = 1), owner TEXT, lease_until INTEGER NOT NULL, watches_version INTEGER NOT NULL)`,
    `INSERT INTO ct_follower (id, owner, lease_until, watches_version) VALUES (1, NULL, 0, 0)`,
    // What the follower matches against changed: it reloads its index of watches (polls' writes do not count).
    `CREATE TRIGGER watches_added AFTER INSERT ON watches BEGIN UPDATE ct_follower SET watches_version = watches_version + 1; END`,
    `CREATE TRIGGER watches_removed AFTER DELETE ON watches BEGIN UPDATE ct_follower SET watches_version = watches_version + 1; END`,
    `CREATE TRIGGER watches_changed AFTER UPDATE OF domain, include_subdomains, auto_monitor, allowed_issuers, created_at, organization_id, mode ON watches
     BEGIN UPDATE ct_follower SET watches_version = watches_version + 1; END`,
    `CREATE TABLE ct_logs (
      url TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      tree_size INTEGER,
      root_hash TEXT,
      head_timestamp INTEGER,
      position INTEGER,
      compact_range TEXT NOT NULL DEFAULT '[]',
      last_error TEXT,
      listed INTEGER NOT NULL DEFAULT 1,
      updated_at INTEGER NOT NULL
    )`,
    `CREATE TABLE ct_issuances (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      watch_id TEXT NOT NULL,
      issuance_key TEXT NOT NULL,
      dns_names TEXT NOT NULL,
      issuer_organization TEXT,
      issuer_common_name TEXT,
      not_before INTEGER NOT NULL,
      not_after INTEGER NOT NULL,
      fingerprint TEXT,
      logged_at INTEGER NOT NULL,
      recorded_at INTEGER NOT NULL,
      UNIQUE (watch_id, issuance_key)
    )`,
    `CREATE INDEX ct_issuances_watch ON ct_issuances (watch_id, seq)`,
  ],
  // Each certificate's timeline as rows, kept by triggers from status_periods: the summary and the lists
  // filtered by status or renewal state read an index instead of taking every timeline's JSON apart at
  // every request (measured at 500 certificates: 0.6 ms a summary against 6).
  [
    `CREATE TABLE certificate_periods (
      certificate_id TEXT NOT NULL,
      organization_id TEXT NOT NULL,
      mode TEXT NOT NULL,
      from_at INTEGER NOT NULL,
      until_at INTEGER NOT NULL,
      status TEXT NOT NULL,
      renewal TEXT
    )`,
    `CREATE INDEX certificate_periods_scope ON certificate_periods (organization_id, mode, until_at, from_at, status, renewal, certificate_id)`,
    `CREATE INDEX certificate_periods_certificate ON certificate_periods (certificate_id)`,
    `CREATE TRIGGER certificate_periods_inserted AFTER INSERT ON certificates BEGIN ${PERIOD_ROWS}; END`,
    `CREATE TRIGGER certificate_periods_changed AFTER UPDATE OF status_periods ON certificates WHEN NEW.status_periods IS NOT OLD.status_periods
     BEGIN DELETE FROM certificate_periods WHERE certificate_id = OLD.id; ${PERIOD_ROWS}; END`,
    `CREATE TRIGGER certificate_periods_removed AFTER DELETE ON certificates BEGIN DELETE FROM certificate_periods WHERE certificate_id = OLD.id; END`,
    `INSERT INTO certificate_periods (certificate_id, organization_id, mode, from_at, until_at, status, renewal)
     SELECT certificates.id, certificates.organization_id, certificates.mode, ${PERIOD_FIELDS} FROM certificates, json_each(certificates.status_periods) AS period`,
  ],
  // A CT log's key, so that a log the list moves to another URL keeps its place.
  [`ALTER TABLE ct_logs ADD COLUMN log_key TEXT`],
  // When a log may be asked again after a failure (its Retry-After), so that a restart waits it out.
  [`ALTER TABLE ct_logs ADD COLUMN retry_at INTEGER`],
  // Which process is asking a CA about a leaf (RFC 9773), so that processes sharing the database ask once.
  [`CREATE TABLE renewal_info_claims (cert_id TEXT PRIMARY KEY, owner TEXT NOT NULL, until INTEGER NOT NULL)`],
  // A channel's health read from the deliveries made before it was kept (a channel failing for days read
  // as never used): its last attempt, and the first failure since its last delivery. Only channels with
  // no attempt recorded yet.
  [
    `UPDATE channels SET
       last_delivery_at = (${LAST_ATTEMPT.replace("{column}", "updated_at")}),
       last_delivery_status = (${LAST_ATTEMPT.replace("{column}", "status")}),
       last_delivery_error = (${LAST_ATTEMPT.replace("{column}", "CASE WHEN status = 'delivered' THEN NULL ELSE last_error END")}),
       failing_since = (SELECT MIN(failed.updated_at) FROM deliveries AS failed
         WHERE failed.channel_id = channels.id AND failed.status != 'delivered' AND failed.attempts > 0
           AND failed.updated_at > COALESCE((SELECT MAX(ok.updated_at) FROM deliveries AS ok WHERE ok.channel_id = channels.id AND ok.status = 'delivered'), -1))
     WHERE last_delivery_at IS NULL`,
  ],
  // Certificates stored by the release before renewals were followed node by node, whose nodes serve
  // several leaves at the upgrade: those leaves, as the ones the last renewal announced was seen with.
  [seedRenewalGenerations],
  // Lists filtered by a part of the domain (`?domain=`) walk the organization's certificates in list
  // order and test each domain: with the domain in the index that walk reads no table row but the
  // matches (20,000 certificates: 57 ms a filtered page against 5.6). It serves every list as the
  // index it replaces did.
  [
    `CREATE INDEX certificates_listing ON certificates (organization_id, mode, not_after, id, domain)`,
    `DROP INDEX certificates_expiry`,
  ],
  // A watch's poll rate-limited by the CT service (429 with Retry-After): not asked before this time,
  // even when a poll is asked for through the API.
  [`ALTER TABLE watches ADD COLUMN retry_at INTEGER`],
  // Each process running checks says a new word every 15 s (core/monitor/liveness.ts): a dead one's
  // leased checks are given back about a minute after its last word, not when their leases run out.
  [`CREATE TABLE process_beats (owner TEXT PRIMARY KEY, word INTEGER NOT NULL)`],
];

/**
 * A certificate last written by the release before Part III (its details name no `issuerNames`) whose
 * nodes serve two or more leaves, after a move of its leaf that release announced as a renewal (a leaf
 * it remembers is served no more): a rollout under way. Its alert memory gets the leaves served as that
 * renewal's `generation`, as this version leaves it when it announces one: the last node reaching a leaf
 * another already serves announces nothing again; the next round is announced when its last node moves
 * on. Raises the version (the alert memory is part of what the row reads as).
 */
async function seedRenewalGenerations(tx: Executor): Promise<void> {
  let after = "";
  for (;;) {
    const { rows } = await tx.execute("SELECT id, details, endpoints, alert_memory FROM certificates WHERE id > ? ORDER BY id LIMIT 500", [after]);
    const updates: SqlValue[][] = [];
    for (const row of rows) {
      const details = JSON.parse(String(row.details));
      const memory = JSON.parse(String(row.alert_memory));
      if (details.issuerNames !== undefined || memory.generation !== undefined || memory.renewedTo !== undefined) continue;
      const served = new Set<string>();
      for (const endpoint of endpointsFrom(String(row.endpoints), details)) {
        if (endpoint.details) served.add(`${endpoint.details.serialNumber}@${endpoint.details.notAfter}`);
      }
      // Only after a move that release announced: a leaf it remembers that no node serves any more.
      const moved = (memory.leaves as Array<{ key: string }> | undefined)?.some((entry) => !served.has(entry.key)) ?? false;
      if (served.size < 2 || !moved) continue;
      const generation = [...served].slice(0, 16);
      updates.push([row.id as string, JSON.stringify({ ...memory, generation })]);
    }
    await updateCertificates(tx, ["alert_memory"], updates, ", version = version + 1");
    if (rows.length < 500) return;
    after = String(rows.at(-1)!.id);
  }
}

/** Computes every certificate's timeline anew, with its renewal state, and its names key, a page at a time (migration 8). */
async function backfillRenewalPeriods(tx: Executor): Promise<void> {
  let after = "";
  for (;;) {
    const { rows } = await tx.execute(
      "SELECT id, details, problem, failure, alert_thresholds, endpoints, alert_policy FROM certificates WHERE id > ? ORDER BY id LIMIT 500",
      [after],
    );
    const updates: SqlValue[][] = [];
    for (const row of rows) {
      const details = JSON.parse(String(row.details));
      const periods = statusPeriods({
        details,
        problem: row.problem === null ? null : (String(row.problem) as never),
        failure: row.failure === null ? null : (String(row.failure) as never),
        alertThresholds: JSON.parse(String(row.alert_thresholds)),
        endpoints: endpointsFrom(String(row.endpoints), details),
        alertPolicy: String(row.alert_policy) as never,
      });
      updates.push([row.id as string, periods, leafNamesKey(details)]);
    }
    await updateCertificates(tx, ["status_periods", "names_key"], updates);
    if (rows.length < 500) return;
    after = String(rows.at(-1)!.id);
  }
}

/** Computes the timeline of every certificate stored before migration 3, a page at a time. */
async function backfillStatusPeriods(tx: Executor): Promise<void> {
  let after = "";
  for (;;) {
    const { rows } = await tx.execute(
      "SELECT id, details, problem, failure, alert_thresholds FROM certificates WHERE id > ? ORDER BY id LIMIT 500",
      [after],
    );
    const updates: SqlValue[][] = [];
    for (const row of rows) {
      const periods = statusPeriods({
        details: JSON.parse(String(row.details)),
        problem: row.problem === null ? null : (String(row.problem) as never),
        failure: row.failure === null ? null : (String(row.failure) as never),
        alertThresholds: JSON.parse(String(row.alert_thresholds)),
      });
      updates.push([row.id as string, periods]);
    }
    await updateCertificates(tx, ["status_periods"], updates);
    if (rows.length < 500) return;
    after = String(rows.at(-1)!.id);
  }
}

/**
 * Applies the migrations this database lacks (up to `options.until`, default all); safe when several
 * processes start at once. `options.report` is told what an operator should see: an upgrade as it
 * begins and once done, and a wait longer than WAIT_NOTICE_MS for the database (not this process's
 * own upgrade).
 */
export async function migrate(executor: Executor, options: { until?: number; waitMs?: number; report?: MigrationReport } = {}): Promise<void> {
  // Another process upgrading a large database holds the write lock for longer than a write waits
  // (migration 8 recomputes every certificate's timeline: 7 s at 40,000): this one waits it out, then
  // finds the work done.
  const started = Date.now();
  const deadline = started + (options.waitMs ?? MIGRATION_WAIT_MS);
  const { report } = options;
  // Why the last attempt failed (none yet: waiting inside the first, for SQLite's busy timeout or a
  // server's answer), and whether this process is upgrading the database itself.
  let reason: "unreachable" | "busy" = "busy";
  let upgrading = false;
  let upgradeSaid = false;
  // The wait is said once, when it has lasted WAIT_NOTICE_MS, or at the first failed attempt after
  // that moment if this process was upgrading then (its upgrade since lost to another's).
  let waitSaid = false;
  const sayWait = () => {
    if (waitSaid || upgrading || Date.now() - started < WAIT_NOTICE_MS) return;
    waitSaid = true;
    const end = reason === "unreachable" ? Math.min(deadline, started + UNREACHABLE_WAIT_MS) : deadline;
    report?.waiting({ reason, upToMs: Math.max(0, end - Date.now()) });
  };
  const slow = setTimeout(sayWait, WAIT_NOTICE_MS);
  try {
    for (;;) {
      try {
        return await migrateOnce(executor, options.until, (from, to) => {
          upgrading = true;
          // Said once however many attempts it takes (an attempt ended by another process is tried again).
          if (!upgradeSaid) report?.upgrading({ from, to });
          upgradeSaid = true;
          const began = Date.now();
          return () => report?.upgraded({ from, to, ms: Date.now() - began });
        });
      } catch (error) {
        upgrading = false;
        // A server no connection can be made to is waited for briefly (one started beside this
        // process, as a compose file does), not as long as another process's upgrade.
        const unreachable = (error as { reason?: string })?.reason === "unreachable";
        const end = unreachable ? Math.min(deadline, started + UNREACHABLE_WAIT_MS) : deadline;
        if (!(unreachable || isBusy(error)) || Date.now() >= end) throw error;
        reason = unreachable ? "unreachable" : "busy";
        sayWait();
        await new Promise((resolve) => setTimeout(resolve, unreachable ? 500 : 100));
      }
    }
  } finally {
    clearTimeout(slow);
  }
}

/** What opening a database tells the operator (the wiring logs it): see {@link migrate}. */
export interface MigrationReport {
  /** A wait for a server no connection can be made to (`unreachable`), or for another process's hold on it (`busy`), at most `upToMs` more. */
  waiting(wait: { reason: "unreachable" | "busy"; upToMs: number }): void;
  /** This process begins upgrading the database from schema `from` to `to`. */
  upgrading(upgrade: { from: number; to: number }): void;
  /** ... and has committed it. */
  upgraded(upgrade: { from: number; to: number; ms: number }): void;
}

/**
 * Sets `columns` of each certificate of `rows` (`[id, ...values]`) in one statement, with `also` added
 * to the SET list. A statement a row made a large upgrade over a database server a round trip a row:
 * 20,000 certificates held the write lock for 13 s, longer than sqld lets a transaction hold it while
 * another process waits (it ends the transaction), so a second process starting beside it failed both.
 */
async function updateCertificates(tx: Executor, columns: string[], rows: SqlValue[][], also = ""): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map(() => `(${["?", ...columns.map(() => "?")].join(", ")})`).join(", ");
  await tx.execute(
    `WITH v(id, ${columns.map((_, i) => `c${i}`).join(", ")}) AS (VALUES ${values})
     UPDATE certificates SET ${columns.map((column, i) => `${column} = v.c${i}`).join(", ")}${also} FROM v WHERE certificates.id = v.id`,
    rows.flat(),
  );
}

/** How long a process starting beside another that is upgrading the database waits for it, at most. */
const MIGRATION_WAIT_MS = 10 * 60_000;
/** How long opening the database may take before the wait is said (an upgrade of a small one takes less). */
const WAIT_NOTICE_MS = 2000;
/** How long a process waits at start for a database server that refuses connections. */
const UNREACHABLE_WAIT_MS = 10_000;

/**
 * SQLite's "another connection holds the lock" (by code locally, in the message from a server), or a
 * server that held the request past its time limit (behind another process's long transaction): a
 * migration is a transaction that reads where it stands first, so trying it again is safe.
 */
function isBusy(error: unknown): boolean {
  const reason = (error as { reason?: string })?.reason;
  return reason === "busy" || reason === "no_answer" || isSqliteBusy(error);
}

/**
 * One attempt. `upgrading` is called inside the transaction once there is something to apply (never
 * for a new database: nothing is upgraded there), and the function it returns once committed.
 */
async function migrateOnce(executor: Executor, until: number | undefined, upgrading: (from: number, to: number) => () => void): Promise<void> {
  await executor.execute(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
  );
  let done: (() => void) | undefined;
  await executor.transaction(async (tx) => {
    const { rows } = await tx.execute("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations");
    const current = Number(rows[0]!.version);
    if (current > MIGRATIONS.length) {
      // Rows written by a newer certkeeper may use forms this one cannot read (e.g. compact endpoints).
      throw new Error(
        `the database was last migrated by a newer certkeeper (schema ${current}; this one knows ${MIGRATIONS.length}): run that version or newer, not an older one`,
      );
    }
    const target = until ?? MIGRATIONS.length;
    if (current > 0 && current < target) done = upgrading(current, target);
    for (let version = current + 1; version <= target; version++) {
      for (const step of MIGRATIONS[version - 1]!) {
        if (typeof step === "string") await tx.execute(step);
        else await step(tx);
      }
      await tx.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", [version, Date.now()]);
    }
  });
  done?.();
}

export const SCHEMA_VERSION = MIGRATIONS.length;
