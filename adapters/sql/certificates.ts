/** Certificates in SQL: keyset listing, leases for the scheduler, and check results written atomically. */
import { DELIVERY_CANCELLED, targetKey, type CertificateKey, type CertificateStore, type CertificateTarget, type InsertCertificateResult } from "../../core/store/mod.ts";
import type { CertificateRecord, EventRecord, Mode, Protocol, Scope } from "../../core/base/mod.ts";
import { ConstraintError, type Executor, type Row, type SqlValue } from "./executor.ts";
import { CERTIFICATE_COLUMNS, certificateFrom, certificateValues, connectToValue, dnsValue, endpointsValue, makeDueNow, placeholders, powerOfTwoRuns, cancelDeliveries, statusPeriods } from "./rows.ts";
import { awaitsIssuance, deploymentCheckAt, leafNamesKey, supersedeDeployment } from "../../core/deployment/mod.ts";
import { insertEvents } from "./events.ts";
import { RecheckBatcher } from "./recheck_batch.ts";
import { RecentSaves } from "./recent_saves.ts";
import { ParsedRows } from "./parsed_rows.ts";

const SELECT = `SELECT ${CERTIFICATE_COLUMNS} FROM certificates`;

/**
 * "The status (or renewal state) at `now` is one of …", over the timeline core computed (rows.ts
 * statusPeriods), as rows of certificate_periods: no status rule here, only times compared. Binds the
 * organization, the mode, `now` twice, then the values.
 */
function periodAt(column: "status" | "renewal", values: number): string {
  return `id IN (SELECT certificate_id FROM certificate_periods
    WHERE organization_id = ? AND mode = ? AND until_at > ? AND from_at <= ? AND ${column} IN (${placeholders(values)}))`;
}

/**
 * Writes a check result over the stored version. An unchanged chain leaves the details, their 1 KB of
 * JSON and the expiry index untouched.
 */
function updateChecked(target: Executor, r: CertificateRecord, detailsChanged: boolean) {
  // Endpoints, the connection, the alert memory, DNS findings and a pending deployment change only with
  // the details or with events.
  const details = detailsChanged
    ? ["fingerprint", "not_before", "not_after", "details", "problem", "endpoints", "tls", "alert_memory", "names_key", "deployment", "dns"]
    : [];
  const detailValues: SqlValue[] = detailsChanged
    ? [
        r.fingerprint,
        r.details.notBefore,
        r.details.notAfter,
        JSON.stringify(r.details),
        r.problem,
        endpointsValue(r),
        r.tls ? JSON.stringify(r.tls) : null,
        JSON.stringify(r.alertMemory),
        leafNamesKey(r.details),
        r.deployment ? JSON.stringify(r.deployment) : null,
        dnsValue(r),
      ]
    : [];
  // The failure can change without the details: the timeline is written with every check.
  return target.execute(
    `UPDATE certificates SET ${details.map((column) => `${column} = ?, `).join("")}last_checked_at = ?,
       failure = ?, failure_count = ?, alerted_threshold = ?, expiry_alerted = ?, health = ?,
       next_check_at = ?, updated_at = ?, status_periods = ?, lease_owner = NULL, version = version + 1
     WHERE id = ? AND version = ?`,
    [
      ...detailValues,
      r.lastCheckedAt,
      r.failure,
      r.failureCount,
      r.alertedThreshold,
      r.expiryAlerted ? 1 : 0,
      r.health,
      r.nextCheckAt,
      r.updatedAt,
      statusPeriods(r),
      r.id,
      r.version,
    ],
  );
}

/**
 * Writes a patch's settings; the updated record, or null when no such certificate is in scope. A new
 * connectTo that makes it the target of another certificate violates UNIQUE (ConstraintError).
 */
async function updateSettingsRow(
  target: Executor,
  { scope, id, patch }: { scope: Scope; id: string; patch: Parameters<CertificateStore["updateSettings"]>[2] },
): Promise<CertificateRecord | null> {
  const thresholds = patch.alertThresholds;
  const newTarget = patch.connectTo !== undefined;
  const { rows } = await target.execute(
    `UPDATE certificates SET
       name = COALESCE(?, name),
       alert_thresholds = COALESCE(?, alert_thresholds),
       tags = COALESCE(?, tags),
       muted_until = CASE WHEN ? THEN ? ELSE muted_until END,
       connect_to = COALESCE(?, connect_to),
       alert_policy = COALESCE(?, alert_policy),
       mail_domain = CASE WHEN ? THEN ? ELSE mail_domain END,
       next_check_at = CASE WHEN ? OR COALESCE(?, alert_policy) IS NOT alert_policy THEN MIN(next_check_at, ?) ELSE next_check_at END,
       updated_at = ?,
       version = version + 1
     WHERE id = ? AND organization_id = ? AND mode = ?
     RETURNING ${CERTIFICATE_COLUMNS}`,
    [
      patch.name ?? null,
      thresholds ? JSON.stringify(thresholds) : null,
      patch.tags ? JSON.stringify(patch.tags) : null,
      patch.mutedUntil === undefined ? 0 : 1,
      patch.mutedUntil ?? null,
      newTarget ? connectToValue(patch.connectTo!) : null,
      patch.alertPolicy ?? null,
      patch.mailDomain === undefined ? 0 : 1,
      patch.mailDomain ?? null,
      // New thresholds or a new target, re-judged at once; a policy only when it changes (the row's
      // alert_policy is its old value here).
      thresholds || newTarget ? 1 : 0,
      patch.alertPolicy ?? null,
      patch.updatedAt,
      patch.updatedAt,
      id,
      scope.organizationId,
      scope.mode,
    ],
  );
  return rows[0] ? certificateFrom(rows[0]) : null;
}

/**
 * Inserts a certificate, its tags and the events of its first check, inside the caller's write
 * transaction, unless its domain and port are taken in its scope or the scope is full. A UNIQUE
 * violation (a concurrent insert) throws ConstraintError.
 */
export async function insertCertificate(
  tx: Executor,
  record: CertificateRecord,
  { limit, events }: { limit: number; events: EventRecord[] },
): Promise<InsertCertificateResult> {
  const values = certificateValues(record);
  // The count guard and the insert are one statement inside a write transaction: concurrent
  // adds cannot both slip under the limit. The UNIQUE constraint decides duplicates.
  const { rowsAffected } = await tx.execute(
    `INSERT INTO certificates (${CERTIFICATE_COLUMNS}) SELECT ${placeholders(values.length)}
     WHERE (SELECT COUNT(*) FROM certificates WHERE organization_id = ? AND mode = ?) < ?`,
    [...values, record.organizationId, record.mode, limit],
  );
  if (rowsAffected === 0) {
    const { rows } = await tx.execute(
      "SELECT 1 FROM certificates WHERE organization_id = ? AND mode = ? AND domain = ? AND port = ? AND protocol = ? AND connect_to = ?",
      [record.organizationId, record.mode, record.domain, record.port, record.protocol, connectToValue(record.connectTo)],
    );
    return rows.length > 0 ? "duplicate" : "limit_reached";
  }
  if (record.tags.length > 0) await writeTags(tx, record, record.tags, { fresh: true });
  await insertEvents(tx, events);
  return "created";
}

/**
 * The new certificates of an import's batch, inside its write transaction, which already judged each
 * one (not taken, within the plan): their rows, tags and events in a few statements, whatever their
 * number, rather than two or three each (at most 128 rows a statement: 4,608 bound variables, well
 * within SQLite's 32,766). Each statement is a round trip to the database's thread, and the event loop
 * waits for it while the transaction holds SQLite's lock.
 */
export async function insertJudged(tx: Executor, created: Array<{ record: CertificateRecord; events: EventRecord[] }>): Promise<void> {
  for (const run of powerOfTwoRuns(created)) {
    const rows = run.map(({ record }) => certificateValues(record));
    await tx.execute(
      `INSERT INTO certificates (${CERTIFICATE_COLUMNS}) VALUES ${rows.map((values) => `(${placeholders(values.length)})`).join(", ")}`,
      rows.flat(),
    );
  }
  const tags = created.flatMap(({ record }) => record.tags.map((tag) => [record.organizationId, record.mode, tag, record.id]));
  for (const rows of powerOfTwoRuns(tags)) {
    await tx.execute(`INSERT INTO certificate_tags (organization_id, mode, tag, certificate_id) VALUES ${rows.map(() => "(?, ?, ?, ?)").join(", ")}`, rows.flat());
  }
  const events = created.flatMap((item) => item.events);
  if (events.length > 0) await insertEvents(tx, events);
}

/** Which of `targets` are monitored in the scope (the whole target, CONTRACT §11), as {@link targetKey} strings. */
export async function takenTargets(db: Executor, scope: { organizationId: string; mode: string }, targets: CertificateTarget[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (const run of powerOfTwoRuns(targets)) {
    const { rows } = await db.execute(
      `SELECT domain, port, protocol, connect_to FROM certificates
        WHERE organization_id = ? AND mode = ? AND (domain, port, protocol, connect_to) IN (VALUES ${run.map(() => "(?, ?, ?, ?)").join(", ")})`,
      [scope.organizationId, scope.mode, ...run.flatMap((t) => [t.domain, t.port, t.protocol ?? "tls", connectToValue(t.connectTo ?? null)])],
    );
    for (const row of rows) taken.add(targetKey({ domain: String(row.domain), port: Number(row.port), protocol: String(row.protocol) as Protocol, connectTo: String(row.connect_to) }));
  }
  return taken;
}

/** Replaces the certificate's rows in certificate_tags (what `tag=` filters on). */
async function writeTags(
  tx: Executor,
  scope: { id: string; organizationId: string; mode: string },
  tags: string[],
  options: { fresh?: boolean } = {},
): Promise<void> {
  if (!options.fresh) await tx.execute("DELETE FROM certificate_tags WHERE certificate_id = ?", [scope.id]);
  if (tags.length === 0) return;
  await tx.execute(
    `INSERT INTO certificate_tags (organization_id, mode, tag, certificate_id) VALUES ${tags.map(() => "(?, ?, ?, ?)").join(", ")}`,
    tags.flatMap((tag) => [scope.organizationId, scope.mode, tag, scope.id]),
  );
}

/** Gives leases back: each certificate still leased by `owner` until its `leaseUntil` is due at its old next check again. */
async function releaseLeases(db: Executor, owner: string, leases: ReadonlyArray<{ id: string; nextCheckAt: number; leaseUntil: number }>): Promise<void> {
  if (leases.length === 0) return;
  await db.execute(
    `UPDATE certificates SET next_check_at = v.column2, lease_owner = NULL
       FROM (VALUES ${leases.map(() => "(?, ?, ?)").join(", ")}) AS v
      WHERE certificates.id = v.column1 AND certificates.lease_owner = ? AND certificates.next_check_at = v.column3`,
    [...leases.flatMap((lease) => [lease.id, lease.nextCheckAt, lease.leaseUntil]), owner],
  );
}

/**
 * Where a check's save and lease go when the change token leaves them out (SqlStoreOptions.quiet),
 * and whom to tell which certificates they changed.
 */
export interface QuietWrites {
  db: Executor;
  told: (certificates: readonly CertificateKey[]) => void;
}

/** The certificates a lease's rows name, read from the columns alone (told before anything else can fail). */
function leasedKeys(rows: Row[]): CertificateKey[] {
  return rows.map((row) => ({ organizationId: String(row.organization_id), mode: row.mode as Mode, id: String(row.id), notAfter: Number(row.not_after) }));
}

export function sqlCertificates(db: Executor, quiet?: QuietWrites): CertificateStore {
  // A check's bookkeeping: quiet where it can be, each write told once it has ended.
  const checks = quiet?.db ?? db;
  const told = (certificates: readonly CertificateKey[]) => {
    if (quiet && certificates.length > 0) quiet.told(certificates);
  };
  const rechecks = new RecheckBatcher(checks, async (record) => (await updateChecked(checks, record, false)).rowsAffected > 0);
  const recent = new RecentSaves();
  const parsed = new ParsedRows();
  // Whether most of the last claim's rows were kept here. When they were not (other processes check
  // them too, or the fleet is checked rarely), a claim reads whole rows in its one request, as it
  // would with nothing kept, rather than ids first and the rows after.
  let mostlyKept = true;
  const kept = (record: CertificateRecord) => (saved: boolean) => {
    if (saved) recent.keep(record);
    return saved;
  };
  const store: CertificateStore = {
    async insert(record, { limit, events }) {
      try {
        return await db.transaction((tx) => insertCertificate(tx, record, { limit, events }));
      } catch (error) {
        if (error instanceof ConstraintError) return "duplicate";
        throw error;
      }
    },

    async get(scope, id) {
      const { rows } = await db.execute(`${SELECT} WHERE id = ? AND organization_id = ? AND mode = ?`, [id, scope.organizationId, scope.mode]);
      return rows[0] ? certificateFrom(rows[0]) : null;
    },

    async findByDomain(scope, target) {
      const { rows } = await db.execute(
        `${SELECT} WHERE organization_id = ? AND mode = ? AND domain = ? AND port = ? AND protocol = ? AND connect_to = ?`,
        [scope.organizationId, scope.mode, target.domain, target.port, target.protocol ?? "tls", connectToValue(target.connectTo ?? null)],
      );
      return rows[0] ? certificateFrom(rows[0]) : null;
    },

    existing(scope, targets) {
      return takenTargets(db, scope, targets);
    },

    async count(scope) {
      const { rows } = await db.execute("SELECT COUNT(*) AS n FROM certificates WHERE organization_id = ? AND mode = ?", [
        scope.organizationId,
        scope.mode,
      ]);
      return Number(rows[0]!.n);
    },

    async list(scope, query) {
      const where = ["organization_id = ?", "mode = ?"];
      const args: SqlValue[] = [scope.organizationId, scope.mode];
      if (query.after) {
        where.push("(not_after > ? OR (not_after = ? AND id > ?))");
        args.push(query.after.notAfter, query.after.notAfter, query.after.id);
      }
      if (query.domainContains) {
        where.push("instr(domain, ?) > 0");
        args.push(query.domainContains);
      }
      for (const tag of query.tags ?? []) {
        where.push("id IN (SELECT certificate_id FROM certificate_tags WHERE organization_id = ? AND mode = ? AND tag = ?)");
        args.push(scope.organizationId, scope.mode, tag);
      }
      if (query.statuses) {
        where.push(periodAt("status", query.statuses.length));
        args.push(scope.organizationId, scope.mode, query.now, query.now, ...query.statuses);
      }
      if (query.renewalStates) {
        where.push(periodAt("renewal", query.renewalStates.length));
        args.push(scope.organizationId, scope.mode, query.now, query.now, ...query.renewalStates);
      }
      // Which rows, at which version; then whole only those not kept at it (parsed_rows.ts). The page
      // is the one the first read saw: a row written between the two reads (a check saved, its expiry
      // moved) would stand where it no longer belongs, so the page is read again, and after a few
      // tries whole in one statement (one snapshot, no write lock taken).
      const order = `FROM certificates WHERE ${where.join(" AND ")} ORDER BY not_after, id LIMIT ?`;
      const readPage = async (): Promise<CertificateRecord[] | null> => {
        const { rows: keys } = await db.execute(`SELECT id, version, next_check_at ${order}`, [...args, query.limit]);
        const page = keys.map((key) => ({ id: String(key.id), version: Number(key.version), kept: parsed.get(String(key.id), Number(key.version), Number(key.next_check_at)) }));
        const missing = page.filter((entry) => !entry.kept).map((entry) => entry.id);
        const read = new Map<string, CertificateRecord>();
        for (let start = 0; start < missing.length; start += 500) {
          const chunk = missing.slice(start, start + 500);
          const { rows } = await db.execute(`${SELECT} WHERE id IN (${placeholders(chunk.length)})`, chunk);
          for (const row of rows) read.set(String(row.id), parsed.keep(certificateFrom(row)));
        }
        const records: CertificateRecord[] = [];
        for (const entry of page) {
          const record = entry.kept ?? read.get(entry.id);
          if (!record || record.version !== entry.version) return null;
          records.push(record);
        }
        return records;
      };
      for (let tries = 0; tries < 3; tries++) {
        const records = await readPage();
        if (records) return records;
      }
      const { rows } = await db.execute(`SELECT ${CERTIFICATE_COLUMNS} ${order}`, [...args, query.limit]);
      return rows.map((row) => parsed.keep(certificateFrom(row)));
    },

    async summarize(scope, query) {
      // One statement (one message to the database thread, one round trip to sqld): the counts by status
      // and renewal state now, then the expiries by window.
      const until = query.from + query.bucketMs * query.buckets;
      const { rows } = await db.execute(
        `SELECT 0 AS part, status AS a, renewal AS b, count(*) AS n FROM certificate_periods
          WHERE organization_id = ? AND mode = ? AND until_at > ? AND from_at <= ?
          GROUP BY 2, 3
         UNION ALL
         SELECT 1, CAST((not_after - ?) / ? AS INTEGER), NULL, count(*) FROM certificates
          WHERE organization_id = ? AND mode = ? AND not_after >= ? AND not_after < ? GROUP BY 2`,
        [scope.organizationId, scope.mode, query.now, query.now, query.from, query.bucketMs, scope.organizationId, scope.mode, query.from, until],
      );
      const byStatus: Record<string, number> = {};
      const byRenewal: Record<string, number> = {};
      const expiring = new Array<number>(query.buckets).fill(0);
      for (const row of rows) {
        const n = Number(row.n);
        if (Number(row.part) === 1) {
          expiring[Number(row.a)] = n;
          continue;
        }
        byStatus[String(row.a)] = (byStatus[String(row.a)] ?? 0) + n;
        byRenewal[String(row.b)] = (byRenewal[String(row.b)] ?? 0) + n;
      }
      return { byStatus, byRenewal, expiring };
    },

    async listAll({ limit, afterId }) {
      const { rows } = await db.execute(`${SELECT} WHERE id > ? ORDER BY id LIMIT ?`, [afterId ?? "", limit]);
      return rows.map(certificateFrom);
    },

    async updateSettings(scope, id, patch) {
      const thresholds = patch.alertThresholds;
      const rejudged = thresholds || patch.alertPolicy;
      try {
        if (rejudged || patch.tags) {
          // New thresholds or a new alert policy move the moment the certificate becomes expiring: its
          // timeline is written anew, from the row as it is inside the same write transaction. New tags
          // replace its rows in certificate_tags.
          return await db.transaction(async (tx) => {
            const updated = await updateSettingsRow(tx, { scope, id, patch });
            if (!updated) return null;
            if (rejudged) await tx.execute("UPDATE certificates SET status_periods = ? WHERE id = ?", [statusPeriods(updated), id]);
            if (patch.tags) await writeTags(tx, { id, ...scope }, patch.tags);
            return updated;
          });
        }
        return await updateSettingsRow(db, { scope, id, patch });
      } catch (error) {
        // A new connectTo that is another certificate's target.
        if (error instanceof ConstraintError) return "duplicate";
        throw error;
      }
    },

    async remove(scope, id, at) {
      const removed = await db.transaction(async (tx) => {
        const { rowsAffected } = await tx.execute("DELETE FROM certificates WHERE id = ? AND organization_id = ? AND mode = ?", [
          id,
          scope.organizationId,
          scope.mode,
        ]);
        if (rowsAffected === 0) return false;
        await tx.execute("DELETE FROM certificate_tags WHERE certificate_id = ?", [id]);
        await cancelDeliveries(tx, { reason: DELIVERY_CANCELLED.certificateDeleted, at, where: "event_id IN (SELECT id FROM events WHERE certificate_id = ?)", args: [id] });
        return true;
      });
      if (removed) {
        recent.forget(id);
        parsed.forget(id);
      }
      return removed;
    },

    async claimDue({ owner, now, leaseUntil, limit }) {
      // Read, then lease, in one write transaction sent as one request (a message to the connection's
      // thread, a round trip to a server): two processes running it at once lease disjoint sets, and
      // the caller gets the rows as they were (RETURNING would give the leased nextCheckAt). Both
      // statements pick the same rows: the same order, total (rowid breaks ties), in one transaction.
      const due = `FROM certificates WHERE next_check_at <= ? ORDER BY next_check_at, rowid LIMIT ?`;
      const lease = { sql: `UPDATE certificates SET next_check_at = ?, lease_owner = ? WHERE rowid IN (SELECT rowid ${due})`, args: [leaseUntil, owner, now, limit] };
      if (recent.size === 0 || !mostlyKept) {
        const [picked] = await checks.batch([{ sql: `SELECT ${CERTIFICATE_COLUMNS} ${due}`, args: [now, limit] }, lease]);
        told(leasedKeys(picked!.rows));
        const records = picked!.rows.map(certificateFrom);
        if (records.length > 0) mostlyKept = records.filter((r) => recent.drop(r.id, r.version)).length * 2 >= records.length;
        return records;
      }
      // Rows this process saved lately come from memory (recent_saves.ts); the others are read whole
      // once leased, their next check as it was before the lease.
      const [picked] = await checks.batch([{ sql: `SELECT id, organization_id, mode, version, next_check_at, not_after ${due}`, args: [now, limit] }, lease]);
      told(leasedKeys(picked!.rows));
      const leased: (CertificateRecord | string)[] = [];
      const missing: string[] = [];
      const nextCheckAt = new Map<string, number>();
      for (const row of picked!.rows) {
        const id = String(row.id);
        nextCheckAt.set(id, Number(row.next_check_at));
        const record = recent.take(id, Number(row.version), Number(row.next_check_at));
        if (record) {
          leased.push(record);
        } else {
          leased.push(id);
          missing.push(id);
        }
      }
      if (leased.length > 0) mostlyKept = missing.length * 2 <= leased.length;
      if (missing.length === 0) return leased as CertificateRecord[];
      let rows;
      try {
        ({ rows } = await db.execute(`${SELECT} WHERE id IN (${placeholders(missing.length)})`, missing));
      } catch (error) {
        // Nothing is handed out: the lease is given back, so that they are due again at once rather
        // than when it runs out (if this fails too, they are, as for a process that died).
        const ids = leased.map((entry) => (typeof entry === "string" ? entry : entry.id));
        await releaseLeases(db, owner, ids.map((id) => ({ id, nextCheckAt: nextCheckAt.get(id)!, leaseUntil }))).catch(() => {});
        throw error;
      }
      const read = new Map<string, CertificateRecord>();
      for (const row of rows) read.set(String(row.id), { ...certificateFrom(row), nextCheckAt: nextCheckAt.get(String(row.id))! });
      // A row deleted since its lease is left out.
      return leased.flatMap((entry) => (typeof entry === "string" ? (read.get(entry) ?? []) : [entry]));
    },

    releaseLeases(owner, leases) {
      return releaseLeases(db, owner, leases);
    },

    async beat(owner) {
      // Bookkeeping no reader sees: quiet where the store can be.
      const [, others] = await checks.batch([
        {
          sql: `INSERT INTO process_beats (owner, word) VALUES (?, 1)
                ON CONFLICT (owner) DO UPDATE SET word = process_beats.word + 1`,
          args: [owner],
        },
        { sql: "SELECT owner, word FROM process_beats WHERE owner <> ?", args: [owner] },
      ]);
      return others!.rows.map((row) => ({ owner: String(row.owner), word: Number(row.word) }));
    },

    async giveBackLapsed(lapsed, now) {
      if (lapsed.length === 0) return 0;
      // One transaction, each process matched with the word judged lapsed: one that spoke since keeps
      // its leases and its word. Rare (a process died): the scan of lease owners is paid then only.
      const words = `(VALUES ${lapsed.map(() => "(?, ?)").join(", ")})`;
      const args = lapsed.flatMap(({ owner, word }) => [owner, word]);
      const [given] = await db.batch([
        {
          sql: `UPDATE certificates SET next_check_at = ?, lease_owner = NULL
                 WHERE next_check_at > ? AND lease_owner IN (SELECT owner FROM process_beats WHERE (owner, word) IN ${words})`,
          args: [now, now, ...args],
        },
        { sql: `DELETE FROM process_beats WHERE (owner, word) IN ${words}`, args },
      ]);
      return given!.rowsAffected;
    },

    async forgetBeat(owner, now) {
      await checks.execute(
        `DELETE FROM process_beats WHERE owner = ?
           AND NOT EXISTS (SELECT 1 FROM certificates WHERE lease_owner = ? AND next_check_at > ?)`,
        [owner, owner, now],
      );
    },

    async nextDueAt() {
      const { rows } = await db.execute("SELECT MIN(next_check_at) AS at FROM certificates");
      return rows[0]?.at === null || rows[0]?.at === undefined ? null : Number(rows[0].at);
    },

    pullForwardChecks({ now, latest, checkedAfter }) {
      return makeDueNow(db, db, { table: "certificates", column: "next_check_at", where: "next_check_at > ? AND last_checked_at > ?", args: [latest, checkedAfter] }, now);
    },

    async capNextChecks(intervalMs) {
      // lease_owner is cleared by every save: a set one marks a check in flight (or a dead process's
      // lease, which runs out by itself), whose own save decides the next check.
      const { rowsAffected } = await db.execute(
        `UPDATE certificates SET next_check_at = last_checked_at + ?
         WHERE lease_owner IS NULL AND next_check_at > last_checked_at + ?`,
        [intervalMs, intervalMs],
      );
      return rowsAffected;
    },

    async noteIssuance(scope, { namesKey, deployment }) {
      // Which certificates take it is core's rule (awaitsIssuance, over every endpoint's leaf), not SQL's;
      // the names index narrows it to the rows whose own leaf has these names, usually none or one.
      // Each is written only if no one wrote it since it was read; one that a check saved meanwhile is
      // read and judged again.
      const issuance = { namesKey, issuedAt: deployment.issuedAt };
      let changed = 0;
      let ids: string[] | null = null;
      for (;;) {
        const only = ids ? ` AND id IN (${placeholders(ids.length)})` : "";
        const { rows } = await db.execute(`${SELECT} WHERE organization_id = ? AND mode = ? AND names_key = ?${only}`, [
          scope.organizationId,
          scope.mode,
          namesKey,
          ...(ids ?? []),
        ]);
        const taking = rows.map(certificateFrom).filter((record) => awaitsIssuance(record, issuance));
        if (taking.length === 0) return changed;
        const written = await db.batch(
          taking.map((record) => {
            const pending = supersedeDeployment(record.deployment, deployment);
            return {
              sql: "UPDATE certificates SET deployment = ?, next_check_at = MIN(next_check_at, ?), version = version + 1 WHERE id = ? AND version = ?",
              args: [JSON.stringify(pending), deploymentCheckAt(pending), record.id, record.version],
            };
          }),
        );
        for (const record of taking) recent.forget(record.id);
        changed += written.reduce((sum, result) => sum + result.rowsAffected, 0);
        ids = taking.filter((_, i) => written[i]!.rowsAffected === 0).map((record) => record.id);
        if (ids.length === 0) return changed;
      }
    },

    async saveCheck(record, events, options = {}) {
      try {
        const detailsChanged = options.detailsChanged !== false;
        if (!detailsChanged && events.length === 0) return await rechecks.save(record).then(kept(record));
        const update = (target: Executor) => updateChecked(target, record, detailsChanged);
        // Most checks raise nothing: one UPDATE is atomic on its own, and a transaction would cost two
        // more statements (the most frequent write of a running server).
        if (events.length === 0) return kept(record)((await update(checks)).rowsAffected > 0);
        // The row, its events and their deliveries: what the caches keep is only the row.
        return kept(record)(
          await checks.transaction(async (tx) => {
            if ((await update(tx)).rowsAffected === 0) return false;
            await insertEvents(tx, events);
            return true;
          }),
        );
      } finally {
        told([{ organizationId: record.organizationId, mode: record.mode, id: record.id, notAfter: record.details.notAfter }]);
      }
    },
  };
  return store;
}
