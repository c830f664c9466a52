/** Rows to records and back. Times are INTEGER milliseconds; structured fields are JSON text. */
import type {
  ApiKeyRecord,
  CertificateRecord,
  CertificateDetails,
  ChannelRecord,
  DeliveryAttempt,
  DeliveryRecord,
  EndpointRecord,
  EventRecord,
  OrganizationRecord,
  UserRecord,
} from "../../core/base/mod.ts";
import { statusTimeline } from "../../core/certificates/mod.ts";
import { leafNamesKey } from "../../core/deployment/mod.ts";
import type { Executor, Row, SqlValue, Statement } from "./executor.ts";

const num = (value: unknown) => Number(value);
const numOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));
const str = (value: unknown) => String(value);
const strOrNull = (value: unknown) => (value === null || value === undefined ? null : String(value));

export function organizationFrom(row: Row, prefix = ""): OrganizationRecord {
  return {
    id: str(row[`${prefix}id`]),
    name: str(row[`${prefix}name`]),
    plan: str(row[`${prefix}plan`]) as OrganizationRecord["plan"],
    limits: {
      certificates: num(row[`${prefix}certificate_limit`]),
      channels: num(row[`${prefix}channel_limit`]),
      requestsPerMinute: num(row[`${prefix}rate_limit`]),
      watches: num(row[`${prefix}watch_limit`] ?? 1),
    },
    createdAt: num(row[`${prefix}created_at`]),
  };
}

export function userFrom(row: Row, prefix = ""): UserRecord {
  return {
    id: str(row[`${prefix}id`]),
    organizationId: str(row[`${prefix}organization_id`]),
    email: str(row[`${prefix}email`]),
    role: str(row[`${prefix}role`]) as UserRecord["role"],
    passwordHash: strOrNull(row[`${prefix}password_hash`]),
    createdAt: num(row[`${prefix}created_at`]),
  };
}

export function apiKeyFrom(row: Row, prefix = ""): ApiKeyRecord {
  return {
    id: str(row[`${prefix}id`]),
    userId: str(row[`${prefix}user_id`]),
    organizationId: str(row[`${prefix}organization_id`]),
    name: str(row[`${prefix}name`]),
    mode: str(row[`${prefix}mode`]) as ApiKeyRecord["mode"],
    hash: str(row[`${prefix}hash`]),
    last4: str(row[`${prefix}last4`]),
    createdAt: num(row[`${prefix}created_at`]),
    lastUsedAt: numOrNull(row[`${prefix}last_used_at`]),
    revokedAt: numOrNull(row[`${prefix}revoked_at`]),
  };
}

export const CERTIFICATE_COLUMNS =
  "id, organization_id, mode, domain, port, name, alert_thresholds, status_periods, created_at, updated_at, " +
  "fingerprint, not_before, not_after, details, problem, last_checked_at, failure, failure_count, " +
  "alerted_threshold, expiry_alerted, health, next_check_at, lease_owner, version, tags, muted_until, " +
  "protocol, connect_to, endpoints, tls, alert_memory, alert_policy, names_key, deployment, mail_domain, dns";

/** connect_to is '' for "the domain", so that the UNIQUE constraint treats it as a value. */
export const connectToValue = (connectTo: string | null) => connectTo ?? "";

export function certificateFrom(row: Row): CertificateRecord {
  const details: CertificateDetails = JSON.parse(str(row.details));
  return {
    id: str(row.id),
    organizationId: str(row.organization_id),
    mode: str(row.mode) as CertificateRecord["mode"],
    domain: str(row.domain),
    port: num(row.port),
    name: str(row.name),
    alertThresholds: JSON.parse(str(row.alert_thresholds)),
    alertPolicy: (strOrNull(row.alert_policy) ?? "days") as CertificateRecord["alertPolicy"],
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    fingerprint: str(row.fingerprint),
    details,
    problem: strOrNull(row.problem) as CertificateRecord["problem"],
    lastCheckedAt: num(row.last_checked_at),
    failure: strOrNull(row.failure) as CertificateRecord["failure"],
    failureCount: num(row.failure_count),
    alertedThreshold: numOrNull(row.alerted_threshold),
    expiryAlerted: num(row.expiry_alerted) === 1,
    health: str(row.health) as CertificateRecord["health"],
    nextCheckAt: num(row.next_check_at),
    version: num(row.version),
    tags: JSON.parse(str(row.tags ?? "[]")),
    mutedUntil: numOrNull(row.muted_until),
    protocol: str(row.protocol) as CertificateRecord["protocol"],
    connectTo: str(row.connect_to) === "" ? null : str(row.connect_to),
    endpoints: endpointsFrom(str(row.endpoints), details),
    tls: row.tls === null || row.tls === undefined ? null : JSON.parse(str(row.tls)),
    alertMemory: JSON.parse(str(row.alert_memory)),
    deployment: row.deployment === null || row.deployment === undefined ? null : JSON.parse(str(row.deployment)),
    // Absent rather than null when unset, as a record made before these fields reads.
    ...(row.mail_domain === null || row.mail_domain === undefined ? {} : { mailDomain: str(row.mail_domain) }),
    ...(row.dns === null || row.dns === undefined ? {} : { dns: JSON.parse(str(row.dns)) }),
  };
}

/**
 * In the `endpoints` column, an endpoint whose details are the certificate's own (every address of a
 * name with one node, and the node whose leaf expires first) stores this mark instead of a second copy:
 * a row then fits one database page, and a re-check rewrites one page where it rewrote two or three.
 * Rows written before the mark hold full copies and read the same.
 */
const SAME_DETAILS = "=";

/** The `endpoints` column for `r` (see SAME_DETAILS). */
export function endpointsValue(r: Pick<CertificateRecord, "details" | "endpoints">): string {
  return JSON.stringify(r.endpoints.map((endpoint) => (endpoint.details === r.details ? { ...endpoint, details: SAME_DETAILS } : endpoint)));
}

export function endpointsFrom(text: string, details: CertificateDetails): EndpointRecord[] {
  const endpoints = JSON.parse(text) as (Omit<EndpointRecord, "details"> & { details: EndpointRecord["details"] | typeof SAME_DETAILS })[];
  // The certificate's own object, not a copy: an unchanged re-check then sees its details unchanged by identity.
  for (const endpoint of endpoints) if (endpoint.details === SAME_DETAILS) endpoint.details = details;
  return endpoints as EndpointRecord[];
}

/**
 * The `status_periods` column: core's timeline of the certificate's status and renewal state as
 * `[[from, until, status, renewal], …]` (ms, `until` exclusive), so SQL filters by either by comparing
 * times (certificate_periods holds it as rows, kept by triggers: see migrations.ts).
 */
export function statusPeriods(
  r: Pick<CertificateRecord, "details" | "problem" | "failure" | "alertThresholds"> & Partial<Pick<CertificateRecord, "endpoints" | "alertPolicy" | "dns">>,
): string {
  return JSON.stringify(statusTimeline(r).map((period) => [period.from, period.until, period.status, period.renewal]));
}

/** Values for CERTIFICATE_COLUMNS, in order (lease_owner is null: a new or saved record holds no lease). */
export function certificateValues(r: CertificateRecord): SqlValue[] {
  return [
    r.id,
    r.organizationId,
    r.mode,
    r.domain,
    r.port,
    r.name,
    JSON.stringify(r.alertThresholds),
    statusPeriods(r),
    r.createdAt,
    r.updatedAt,
    r.fingerprint,
    r.details.notBefore,
    r.details.notAfter,
    JSON.stringify(r.details),
    r.problem,
    r.lastCheckedAt,
    r.failure,
    r.failureCount,
    r.alertedThreshold,
    r.expiryAlerted ? 1 : 0,
    r.health,
    r.nextCheckAt,
    null,
    r.version,
    JSON.stringify(r.tags),
    r.mutedUntil,
    r.protocol,
    connectToValue(r.connectTo),
    endpointsValue(r),
    r.tls ? JSON.stringify(r.tls) : null,
    JSON.stringify(r.alertMemory),
    r.alertPolicy,
    leafNamesKey(r.details),
    r.deployment ? JSON.stringify(r.deployment) : null,
    r.mailDomain ?? null,
    dnsValue(r),
  ];
}

/** The `dns` column: CONTRACT §22's findings as JSON, or NULL before any lookup. */
export function dnsValue(r: Pick<CertificateRecord, "dns">): string | null {
  return r.dns ? JSON.stringify(r.dns) : null;
}

export function channelFrom(row: Row, prefix = ""): ChannelRecord {
  return {
    id: str(row[`${prefix}id`]),
    organizationId: str(row[`${prefix}organization_id`]),
    mode: str(row[`${prefix}mode`]) as ChannelRecord["mode"],
    type: str(row[`${prefix}type`]) as ChannelRecord["type"],
    name: str(row[`${prefix}name`]),
    enabled: num(row[`${prefix}enabled`]) === 1,
    config: JSON.parse(str(row[`${prefix}config`])),
    signingSecret: strOrNull(row[`${prefix}signing_secret`]),
    filter: row[`${prefix}filter`] === null || row[`${prefix}filter`] === undefined ? null : JSON.parse(str(row[`${prefix}filter`])),
    createdAt: num(row[`${prefix}created_at`]),
    updatedAt: num(row[`${prefix}updated_at`]),
    // Read where the query selected CHANNEL_HEALTH_COLUMNS and an attempt was recorded.
    ...(numOrNull(row[`${prefix}last_delivery_at`]) === null
      ? {}
      : {
          health: {
            lastDeliveryAt: num(row[`${prefix}last_delivery_at`]),
            lastStatus: strOrNull(row[`${prefix}last_delivery_status`]) as DeliveryRecord["status"] | null,
            lastError: strOrNull(row[`${prefix}last_delivery_error`]),
            failingSince: numOrNull(row[`${prefix}failing_since`]),
          },
        }),
  };
}

/** A channel's delivery health (CONTRACT §23), selected beside CHANNEL_COLUMNS where it is shown. */
export const CHANNEL_HEALTH_COLUMNS = "last_delivery_at, last_delivery_status, last_delivery_error, failing_since";

export function eventFrom(row: Row, prefix = ""): EventRecord & { seq: number } {
  return {
    seq: num(row[`${prefix}seq`]),
    id: str(row[`${prefix}id`]),
    organizationId: str(row[`${prefix}organization_id`]),
    mode: str(row[`${prefix}mode`]) as EventRecord["mode"],
    type: str(row[`${prefix}type`]) as EventRecord["type"],
    certificateId: strOrNull(row[`${prefix}certificate_id`]),
    data: JSON.parse(str(row[`${prefix}data`])),
    createdAt: num(row[`${prefix}created_at`]),
  };
}

export function deliveryFrom(row: Row, prefix = ""): DeliveryRecord {
  return {
    eventId: str(row[`${prefix}event_id`]),
    channelId: str(row[`${prefix}channel_id`]),
    status: str(row[`${prefix}status`]) as DeliveryRecord["status"],
    attempts: num(row[`${prefix}attempts`]),
    nextAttemptAt: num(row[`${prefix}next_attempt_at`]),
    lastError: strOrNull(row[`${prefix}last_error`]),
    updatedAt: num(row[`${prefix}updated_at`]),
  };
}

/**
 * `items` in runs of 128, 64, …, 1 (largest first): a multi-row statement over them takes one of eight
 * shapes whatever the count, so the connection's prepared statements are not crowded out by one
 * shape per count (a statement of 200 rows of a certificate is a large program).
 */
export function powerOfTwoRuns<T>(items: readonly T[]): T[][] {
  const runs: T[][] = [];
  let at = 0;
  for (let size = 128; size >= 1; size /= 2) {
    while (items.length - at >= size) {
      runs.push(items.slice(at, at + size));
      at += size;
    }
  }
  return runs;
}

/** `?, ?, ?` for n values. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}

/**
 * The statement that moves channel `id`'s health by one attempt (ChannelStore.recordAttempt), with
 * `also` as a further condition (SQL, with its arguments).
 */
export function healthStatement(id: string, { at, status, error }: DeliveryAttempt, also?: { sql: string; args: SqlValue[] }): Statement {
  const delivered = status === "delivered" ? 1 : 0;
  return {
    sql: `UPDATE channels SET last_delivery_at = ?, last_delivery_status = ?, last_delivery_error = CASE WHEN ? THEN NULL ELSE ? END,
            failing_since = CASE WHEN ? THEN NULL ELSE COALESCE(failing_since, ?) END
          WHERE id = ? AND (last_delivery_at IS NULL OR last_delivery_at <= ?)${also ? ` AND ${also.sql}` : ""}`,
    args: [at, status, delivered, error, delivered, at, id, at, ...(also?.args ?? [])],
  };
}

/** Deliveries cancelled: why (`reason`, their `last_error`), when (`at`), and which (`where`, SQL over deliveries, with `args`). */
export interface Cancellation {
  reason: string;
  at: number;
  where: string;
  args: SqlValue[];
}

/**
 * Cancels the pending deliveries `where` picks, and settles their channels' health: the memory
 * store's cancelDeliveries, in SQL. Every cancellation but the deliverer's own goes through here.
 */
export async function cancelDeliveries(tx: Executor, cancellation: Cancellation): Promise<void> {
  await tx.execute(`UPDATE deliveries SET status = 'failed', last_error = ?, updated_at = ? WHERE status = 'pending' AND ${cancellation.where}`, [
    cancellation.reason,
    cancellation.at,
    ...cancellation.args,
  ]);
  const settle = settleHealthStatement(cancellation);
  await tx.execute(settle.sql, settle.args);
}

/**
 * After deliveries were cancelled: each channel one of whose tried deliveries was among them, whose
 * health says `pending` (a failed attempt to be made again) while none of its tried deliveries is still
 * pending, says `failed`, as the delivery its last attempt was for now is.
 */
export function settleHealthStatement(cancelled: Cancellation): Statement {
  return {
    sql: `UPDATE channels SET last_delivery_status = 'failed'
          WHERE last_delivery_status = 'pending'
            AND id IN (SELECT channel_id FROM deliveries
                       WHERE status = 'failed' AND attempts > 0 AND last_error = ? AND updated_at = ? AND ${cancelled.where})
            AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.channel_id = channels.id AND d.status = 'pending' AND d.attempts > 0)`,
    args: [cancelled.reason, cancelled.at, ...cancelled.args],
  };
}

/**
 * Makes due at `now` (its `column`) every row of `table` that `where` (with `args`) finds: times planned
 * on a wall clock since set back. A read first, through `read`: nearly always nothing, and then no write
 * lock is taken; the write through `write`. Returns how many rows moved.
 */
export async function makeDueNow(
  read: Executor,
  write: Executor,
  target: { table: string; column: string; where: string; args: SqlValue[] },
  now: number,
): Promise<number> {
  const found = `FROM ${target.table} WHERE ${target.where}`;
  const { rows } = await read.execute(`SELECT 1 ${found} LIMIT 1`, target.args);
  if (rows.length === 0) return 0;
  const { rowsAffected } = await write.execute(`UPDATE ${target.table} SET ${target.column} = ? WHERE rowid IN (SELECT rowid ${found})`, [now, ...target.args]);
  return rowsAffected;
}
