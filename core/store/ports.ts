/**
 * The storage interfaces core works against. Two implementations keep them: the SQL store
 * (adapters/sql, over libSQL) and the in-memory store (adapters/memory); one conformance suite
 * (test/support/store_conformance/) holds both to the same behaviour.
 */
import type {
  ApiKeyRecord,
  CertificateRecord,
  ChannelRecord,
  DeliveryAttempt,
  DeliveryRecord,
  EventRecord,
  EventType,
  ImportItemResult,
  ImportRecord,
  KeyGrant,
  OrganizationRecord,
  Limits,
  Mode,
  Plan,
  Role,
  Scope,
  SessionRecord,
  SignInFailures,
  UserRecord,
  RevocationAnswer,
  PendingDeployment,
  RenewalInfo,
  RenewalState,
  WatchRecord,
} from "../base/records.ts";
import type { CertificateStatus } from "../base/records.ts";
import { CertkeeperError } from "../base/errors.ts";

/** Thrown by `create`/`insert` methods when a unique value (an email, a key hash) is taken. */
export class DuplicateError extends Error {
  constructor(what: string) {
    super(`${what} already exists`);
    this.name = "DuplicateError";
  }
}

const STORAGE_UNAVAILABLE = {
  full: "The database's disk is full, so nothing can be saved: nothing was changed. Try again once an operator has freed space.",
  read_only: "The database is read-only, so nothing can be saved: nothing was changed. Try again once it accepts writes.",
  busy: "The database stayed busy with other processes' writes, so this one was not taken: nothing was changed. Try again in a moment.",
  no_answer: "The database server did not answer in time, so whether this change was saved is not known. Look before trying again.",
  unreachable: "The database server could not be reached (no connection could be made), so nothing was changed. Try again once it is back.",
};

/**
 * Thrown by any store method when the database refuses writes because its disk is full or it is
 * read-only, or (a database server shared by several processes) when other processes' writes held it
 * for the whole busy time limit (`busy`): nothing was written. Or when the server did not answer a
 * request in time (`no_answer`): what it did is not known. Answered as 503 `storage_unavailable`, and
 * /readyz says 503 until the database accepts writes again.
 */
export class StorageUnavailableError extends CertkeeperError {
  constructor(
    readonly reason: "full" | "read_only" | "busy" | "no_answer" | "unreachable",
    options: { cause?: unknown } = {},
  ) {
    super("storage_unavailable", STORAGE_UNAVAILABLE[reason], options);
    this.name = "StorageUnavailableError";
  }
}

/** Why a delivery was cancelled, as every store writes it in `lastError`. */
export const DELIVERY_CANCELLED = {
  /** Its channel was switched off, or deleted, before an attempt. */
  channelOff: "Cancelled: the channel was disabled or deleted",
  channelDeleted: "Cancelled: the channel was deleted",
  certificateDeleted: "Cancelled: the certificate was deleted",
} as const;

/**
 * Thrown by users.update() and users.remove() called with `keepOwner` when the change would leave the
 * user's organization without an owner; nothing is changed. The check and the write are one atomic step.
 */
export class LastOwnerError extends Error {
  constructor() {
    super("the organization's last owner cannot be removed or demoted");
    this.name = "LastOwnerError";
  }
}

/**
 * Thrown by users.update() and users.remove() called with `whenRole` when the user's role is another
 * by the time of the write (changed since it was read); nothing is changed.
 */
export class RoleChangedError extends Error {
  constructor() {
    super("the user's role changed since it was read");
    this.name = "RoleChangedError";
  }
}

/** Guards of users.update() and users.remove(), each checked in the same atomic step as the write. */
export interface KeepOwnerOption {
  /** Refuse, throwing {@link LastOwnerError}, when the user is the organization's only owner and would stop being one. */
  keepOwner?: boolean;
  /** Refuse, throwing {@link RoleChangedError}, unless the user still has this role (the one a permission was judged on). */
  whenRole?: Role;
}

/** What an organization holds in one mode, against which its limits count (CONTRACT §3, §23). */
export interface ScopeUsage {
  certificates: number;
  channels: number;
  watches: number;
}

export interface OrganizationStore {
  create(org: OrganizationRecord): Promise<void>;
  get(id: string): Promise<OrganizationRecord | null>;
  list(): Promise<OrganizationRecord[]>;
  /** Changes the name, plan or limits (a self-hoster's `org update`); the organization as it now is, or null when missing. */
  update(id: string, patch: { name?: string; plan?: Plan; limits?: Limits }): Promise<OrganizationRecord | null>;
  /** How many certificates, channels and watches the organization holds in each mode. */
  usage(id: string): Promise<Record<Mode, ScopeUsage>>;
}

export interface UserStore {
  /** Throws {@link DuplicateError} when the email is taken. */
  create(user: UserRecord): Promise<void>;
  get(id: string): Promise<UserRecord | null>;
  findByEmail(email: string): Promise<UserRecord | null>;
  list(organizationId: string): Promise<UserRecord[]>;
  update(id: string, patch: Partial<Pick<UserRecord, "role" | "passwordHash">>, options?: KeepOwnerOption): Promise<UserRecord | null>;
  /** Removes the user and revokes every key they made, at `at`. */
  remove(id: string, at: number, options?: KeepOwnerOption): Promise<boolean>;
}

export interface ApiKeyStore {
  create(key: ApiKeyRecord): Promise<void>;
  get(id: string): Promise<ApiKeyRecord | null>;
  /** Sets revokedAt (once); returns the key as it now is, or null when there is no such key. */
  revoke(id: string, at: number): Promise<ApiKeyRecord | null>;
  /** Newest first. */
  list(organizationId: string): Promise<ApiKeyRecord[]>;
  /** The key with this hash and whom it acts for. */
  findByHash(hash: string): Promise<KeyGrant | null>;
  /** Records last use; batched by the caller, so it may lag. */
  touch(uses: Array<{ id: string; at: number }>): Promise<void>;
}

export interface CertificateListQuery {
  limit: number;
  /** Keyset position: items strictly after (notAfter, id). */
  after?: { notAfter: number; id: string };
  statuses?: CertificateStatus[];
  /** Lower-case substring of the domain. */
  domainContains?: string;
  /** Certificates carrying every one of these tags. */
  tags?: string[];
  /** Certificates whose renewal state at `now` is one of these. */
  renewalStates?: RenewalState[];
  /** The time statuses are computed at. */
  now: number;
}

/** What summarize() counts: statuses at `now`, and expiries in `buckets` windows of `bucketMs` from `from`. */
export interface CertificateSummaryQuery {
  now: number;
  from: number;
  bucketMs: number;
  buckets: number;
}

export interface CertificateSummary {
  /** How many certificates have each status at `now` (statuses with none may be absent). */
  byStatus: Partial<Record<CertificateStatus, number>>;
  /** How many certificates are in each renewal state at `now` (states with none may be absent). */
  byRenewal: Partial<Record<RenewalState, number>>;
  /** How many certificates' notAfter falls in [from + i·bucketMs, from + (i+1)·bucketMs), for each i. */
  expiring: number[];
}

export type InsertCertificateResult = "created" | "duplicate" | "limit_reached";

/** A monitored target: protocol `tls` and connectTo null when not given. */
export type CertificateTarget = Pick<CertificateRecord, "domain" | "port"> & Partial<Pick<CertificateRecord, "protocol" | "connectTo">>;

/** A target as one string: what CONTRACT §11's uniqueness compares (domain, port, protocol, connectTo). */
export function targetKey(target: CertificateTarget): string {
  return `${target.domain} ${target.port} ${target.protocol ?? "tls"} ${target.connectTo ?? ""}`;
}

/** Which certificate a write changed, as the caches key it. */
export interface CertificateKey {
  organizationId: string;
  mode: Mode;
  id: string;
  /** Its leaf's notAfter once written, which orders lists; absent when not known (lists may have changed anywhere). */
  notAfter?: number;
}

export interface CertificateStore {
  /**
   * Inserts the certificate and the events its first check raised, atomically, unless its domain and
   * port are already monitored in its scope or the scope already holds `limit` certificates.
   */
  insert(record: CertificateRecord, options: { limit: number; events: EventRecord[] }): Promise<InsertCertificateResult>;
  get(scope: Scope, id: string): Promise<CertificateRecord | null>;
  /** The certificate watching this domain, port, protocol and connectTo together (CONTRACT §11's uniqueness). */
  findByDomain(scope: Scope, target: CertificateTarget): Promise<CertificateRecord | null>;
  /** Which of `targets` are monitored in the scope, as {@link targetKey} strings. */
  existing(scope: Scope, targets: CertificateTarget[]): Promise<Set<string>>;
  count(scope: Scope): Promise<number>;
  /**
   * Ordered by notAfter, then id; up to `query.limit` items. The page as it stood at one moment: each
   * record where its notAfter puts it (a write landing while it is read never leaves a row out of
   * place; the read cache keeps pages on that promise).
   */
  list(scope: Scope, query: CertificateListQuery): Promise<CertificateRecord[]>;
  /** Counts by status and expiries per window: the dashboard's overview, without reading every row. */
  summarize(scope: Scope, query: CertificateSummaryQuery): Promise<CertificateSummary>;
  /** Every certificate of every organization, in pages: for metrics. */
  listAll(query: { limit: number; afterId?: string }): Promise<CertificateRecord[]>;
  /**
   * Changes the caller-owned settings and bumps the version (a check computed with the old thresholds
   * then re-applies). New thresholds, a new alert policy or a new connectTo make the certificate due
   * now, so they are judged at once. Returns the updated record, null when missing, "duplicate" when the new connectTo makes
   * it the same target as another certificate of its scope.
   */
  updateSettings(
    scope: Scope,
    id: string,
    patch: {
      name?: string;
      alertThresholds?: number[];
      tags?: string[];
      mutedUntil?: number | null;
      connectTo?: string | null;
      alertPolicy?: CertificateRecord["alertPolicy"];
      /** CONTRACT §22 (`smtp`): null returns to the default. */
      mailDomain?: string | null;
      updatedAt: number;
    },
  ): Promise<CertificateRecord | null | "duplicate">;
  /** Deletes it and cancels its pending deliveries. */
  remove(scope: Scope, id: string, at: number): Promise<boolean>;

  /**
   * Leases up to `limit` certificates whose nextCheckAt has come, to `owner`: their nextCheckAt moves
   * to `leaseUntil`, so no other process claims them before then, and a process that dies mid-check
   * leaves them due again when the lease runs out. Returned with the nextCheckAt they had before the
   * lease; the rest as stored then, or (a store may read it just after the lease) as a write since left
   * it, at that write's version.
   */
  claimDue(options: { owner: string; now: number; leaseUntil: number; limit: number }): Promise<CertificateRecord[]>;
  /**
   * Gives back leases `owner` took and will not work (its process is stopping): each certificate still
   * leased by `owner` until `leaseUntil` is due again at `nextCheckAt` (its next check before the
   * lease), for any process, instead of when the lease runs out. One saved or leased since is left alone.
   */
  releaseLeases(owner: string, leases: ReadonlyArray<{ id: string; nextCheckAt: number; leaseUntil: number }>): Promise<void>;
  /**
   * Records a new word of `owner`'s process (core/monitor/liveness.ts: each beat changes it) and answers
   * the last word of every other process that said one. A word is a counter, not a time: whether it
   * lapsed is judged by the one who reads it, on its own clock, so that clocks need not agree.
   */
  beat(owner: string): Promise<Array<{ owner: string; word: number }>>;
  /**
   * For each process whose last word is still `word`: makes due at `now` every certificate it leased
   * beyond `now`, and forgets the process; one that said a new word since keeps both. Returns how many
   * certificates were given back.
   */
  giveBackLapsed(lapsed: ReadonlyArray<{ owner: string; word: number }>, now: number): Promise<number>;
  /**
   * Forgets `owner`'s word (its process stopped), unless it still leases certificates beyond `now`
   * (a give-back that failed): then its word stays, lapses, and the others give them back.
   */
  forgetBeat(owner: string, now: number): Promise<void>;
  /** The earliest nextCheckAt of all certificates (leases included), or null when there are none. */
  nextDueAt(): Promise<number | null>;
  /**
   * Brings the nextCheckAt of every certificate not under lease forward to at most its lastCheckedAt
   * plus `intervalMs`, leaving earlier ones (retries, alert and expiry moments) as they are: run at
   * start, so that a shortened check interval applies at once. Returns how many moved.
   */
  capNextChecks(intervalMs: number): Promise<number>;
  /**
   * Makes due at `now` every certificate whose nextCheckAt is later than `latest` (leases included) and
   * whose last check is later than `checkedAfter`, and returns how many: times chosen on a wall clock
   * that has since been set back (a last check in the future says so; processes planning with a longer
   * interval than the caller's are left alone). Only reads when there are none.
   */
  pullForwardChecks(options: { now: number; latest: number; checkedAfter: number }): Promise<number>;
  /**
   * Writes a check result and the events it raised, with a pending delivery of each event to every
   * channel routeEvent (core/channels/channel_filter.ts) gives it, in one transaction. Only when the stored version still
   * equals `record.version`; the stored version then becomes version + 1. Returns false (writing
   * nothing) when someone else wrote first (a check or a settings change), or the certificate is gone.
   * `detailsChanged: false` (default true) promises that fingerprint, details, problem, endpoints, tls
   * and alertMemory are as stored, so a store may leave them (and their indexes) untouched, and take
   * `record` for the stored certificate: the common re-check of an unchanged certificate.
   */
  saveCheck(record: CertificateRecord, events: EventRecord[], options?: { detailsChanged?: boolean }): Promise<boolean>;
  /**
   * Makes `deployment` pending on every certificate of the scope whose certificate-level leaf's DNS
   * names have this key (core/deployment namesKey) and that awaitsIssuance (core/deployment) says
   * takes it: a leaf one of its endpoints serves has these names and an earlier notBefore, and no
   * issuance as recent is pending already. What it becomes is supersedeDeployment(current, deployment)
   * (a later one replaces an earlier one, keeping the earliest not yet announced); each is due at its
   * deploymentCheckAt at the latest and its version moves (a check computed before then applies
   * again). Returns how many certificates it changed.
   */
  noteIssuance(scope: Scope, options: { namesKey: string; deployment: PendingDeployment }): Promise<number>;
}

export interface ChannelListQuery {
  limit: number;
  /** Keyset position, newest first: items strictly before (createdAt, id). */
  before?: { createdAt: number; id: string };
}

export interface ChannelStore {
  /** Inserts unless the scope already holds `limit` channels; false when it does. */
  insert(record: ChannelRecord, options: { limit: number }): Promise<boolean>;
  get(scope: Scope, id: string): Promise<ChannelRecord | null>;
  /** Newest first. */
  list(scope: Scope, query: ChannelListQuery): Promise<ChannelRecord[]>;
  update(
    scope: Scope,
    id: string,
    patch: Partial<Pick<ChannelRecord, "name" | "enabled" | "config" | "filter">> & { updatedAt: number },
  ): Promise<ChannelRecord | null>;
  /** Deletes it and cancels its pending deliveries. */
  remove(scope: Scope, id: string, at: number): Promise<boolean>;
  /** Turns a channel off from outside any scope (its endpoint answered 410 Gone). */
  disable(id: string, at: number): Promise<void>;
  /**
   * Moves the channel's health by one attempt's outcome (CONTRACT §23): last time, status and error;
   * failingSince set by a failure when not set yet, cleared by a delivery. An attempt older than the
   * last one recorded changes nothing (attempts may finish out of order). A missing channel: nothing.
   */
  recordAttempt(id: string, attempt: DeliveryAttempt): Promise<void>;
}

export interface EventWithDeliveries extends EventRecord {
  /** Insertion order, assigned by the store: the events list's order and cursor. */
  seq: number;
  deliveries: DeliveryRecord[];
}

export interface EventListQuery {
  limit: number;
  /** Keyset position, newest first: events inserted before the one with this seq. */
  beforeSeq?: number;
  /**
   * The same position named by an event of the scope (the API's cursor: a seq counts every
   * organization's events, which a cursor must not tell). When no such event is stored (pruned since,
   * or another scope's), the events created at or before `beforeCreatedAt` (one of that very
   * millisecond may come again, none is passed over); without it, none.
   */
  beforeId?: string;
  /** Where the page continues when the event `beforeId` names is gone: its creation time. */
  beforeCreatedAt?: number;
}

/** A delivery leased for sending, with what it needs. */
export interface DeliveryJob {
  delivery: DeliveryRecord;
  event: EventRecord;
  channel: ChannelRecord;
}

export interface ClaimDeliveriesOptions {
  owner: string;
  now: number;
  leaseUntil: number;
  limit: number;
  /** Most deliveries of one organization the caller may hold, `inFlight` included; default: no cap. */
  perOrganization?: number;
  /** How many deliveries of each organization (by id) the caller has in flight; default none. */
  inFlight?: Readonly<Record<string, number>>;
  /** The organization the caller claimed for last: equal ranks start after it. */
  after?: string;
}

export interface EventStore {
  /**
   * Inserts an event with exactly these deliveries (a channel test), leased to `leaseOwner` when given
   * (until their nextAttemptAt, as {@link EventStore.claimDueDeliveries} leases them).
   */
  insert(event: EventRecord, deliveries: DeliveryRecord[], options?: { leaseOwner?: string }): Promise<void>;
  /** Newest first, with their deliveries. */
  list(scope: Scope, query: EventListQuery): Promise<EventWithDeliveries[]>;
  get(scope: Scope, id: string): Promise<EventWithDeliveries | null>;
  /**
   * Whether an event of one of `types` about `certificateId` was inserted after the event `afterId` (of
   * the same scope); with `channelId`, only one routed to that channel (it has a delivery there).
   */
  hasLaterOfCertificate(scope: Scope, options: { afterId: string; certificateId: string; types: readonly EventType[]; channelId?: string }): Promise<boolean>;

  /**
   * Leases up to `limit` pending deliveries whose nextAttemptAt has come (moving it to `leaseUntil`, as
   * claimDue does; they are returned as they were before the lease). Deliveries to a channel that is
   * disabled or gone are settled as failed instead.
   *
   * Shared fairly between organizations (core/store/fair_share.ts): an organization's n-th due
   * delivery (earliest first) ranks n + its count in `inFlight`; lower ranks are claimed first, none
   * whose rank exceeds `perOrganization`; equal ranks round-robin from the organization after `after`
   * (by id, wrapping around), else earliest nextAttemptAt first. So an organization with many
   * deliveries, or many in flight, never crowds out one with a single delivery due.
   */
  claimDueDeliveries(options: ClaimDeliveriesOptions): Promise<DeliveryJob[]>;
  /** The earliest nextAttemptAt of pending deliveries, or null. */
  nextDeliveryAt(): Promise<number | null>;
  /**
   * Makes due at `now` every pending delivery whose nextAttemptAt is later than `latest` (leases
   * included) and whose updatedAt (its last attempt, or its creation) is later than `updatedAfter`, and
   * returns how many: times chosen on a wall clock that has since been set back (an update in the
   * future says so). Only reads when there are none.
   */
  pullForwardDeliveries(options: { now: number; latest: number; updatedAfter: number }): Promise<number>;
  /** How many deliveries are pending (leased ones included), over every organization: for metrics. */
  countPending(): Promise<number>;
  /**
   * Deletes up to `limit` events created before `before`, oldest first, with their deliveries, skipping
   * any event with a delivery still pending. Returns how many events were deleted.
   */
  prune(options: { before: number; limit: number }): Promise<number>;
  /**
   * Records an attempt's outcome, only while `owner` still holds the lease (false otherwise), and with
   * it, atomically, the channel's health as {@link ChannelStore.recordAttempt} moves it (at
   * `updatedAt`, the delivery's status and error). `health: false`: the delivery ends without an
   * attempt (a PagerDuty trigger whose problem was resolved since), and the channel's health, which
   * only attempts move, stays as it is.
   */
  completeDelivery(
    owner: string,
    update: Pick<DeliveryRecord, "eventId" | "channelId" | "status" | "attempts" | "nextAttemptAt" | "lastError" | "updatedAt">,
    options?: { health?: boolean },
  ): Promise<boolean>;
}

/** How one import item was judged, to be written with {@link ImportStore.settle}. */
export type ImportItemOutcome =
  | {
      index: number;
      kind: "failed";
      error: { code: string; message: string };
      /**
       * For a retrieval that failed: POST checks duplicates and the plan limit first, so at write time
       * the item fails with `duplicate` when `target` is taken in the scope, else with `limitReached`
       * when the plan is full, else with `error`.
       */
      unlessBlocked?: {
        target: CertificateTarget;
        duplicate: { code: string; message: string };
        limitReached: { code: string; message: string };
      };
    }
  | {
      index: number;
      kind: "create";
      record: CertificateRecord;
      events: EventRecord[];
      /** The item's error when, at write time, its domain and port are taken or the plan is full. */
      duplicate: { code: string; message: string };
      limitReached: { code: string; message: string };
    };

export interface ImportStore {
  /**
   * Stores a new running import and its items (raw JSON text each, by index from 0), unless its
   * organization already has `maxRunning` imports running in its mode (live and test keys see
   * separate data, and hold each other back in nothing): then it stores nothing and answers false.
   * Two creates at once never both pass the count.
   */
  create(record: ImportRecord, items: string[], maxRunning: number): Promise<boolean>;
  get(scope: Scope, id: string): Promise<ImportRecord | null>;
  /** The settled items, by index. */
  results(importId: string): Promise<ImportItemResult[]>;
  /**
   * Leases up to `limit` running imports whose lease ran out (a new one's is out at once), or ends later
   * than `latest` (taken on a wall clock since set back by a process that is gone), to `owner` until
   * `leaseUntil`. Organizations take turns: first the imports of the organization whose running
   * imports' latest lease is the oldest (one not served lately), and within it the one whose lease ran
   * out first (a new one, then one given up longest ago). Two claimers at once lease disjoint sets.
   */
  claim(options: { owner: string; now: number; leaseUntil: number; limit: number; latest?: number }): Promise<ImportRecord[]>;
  /**
   * The earliest time a running import's lease runs out (0 for a lease ending later than `latest`,
   * which claim() takes at once), or null when none is running.
   */
  nextClaimAt(options?: { latest?: number }): Promise<number | null>;
  /** Extends `owner`'s lease; false when it no longer holds it (it ran out and another took the import). */
  renew(id: string, owner: string, leaseUntil: number): Promise<boolean>;
  /** Unsettled items from index `afterIndex + 1` on, in index order, up to `limit`. */
  pending(importId: string, options: { afterIndex: number; limit: number }): Promise<Array<{ index: number; body: string }>>;
  /**
   * Writes outcomes, in one transaction, only while `owner` holds the lease (false, writing nothing,
   * otherwise): a "create" inserts the certificate and its events unless its target (CONTRACT §11) is taken
   * or the import's limit is reached (then the item fails with the error given for that), and a "failed"
   * with `unlessBlocked` fails as its comment says; outcomes are applied in the order
   * given, so limits fall in item order. An item is
   * settled at most once (one already settled is left alone), so no certificate is created twice. The
   * counters move with the items; the import is finished, at `now`, when every item is settled.
   * Answers the ids of the certificates it created (for the log), or false when not held.
   */
  settle(importId: string, owner: string, outcomes: ImportItemOutcome[], now: number): Promise<string[] | false>;
  /** Deletes up to `limit` imports finished before `before`, with their items; returns how many. */
  prune(options: { before: number; limit: number }): Promise<number>;
  /** Deletes the scope's finished imports but its `keep` last finished, with their items; returns how many. */
  trim(scope: Scope, keep: number): Promise<number>;
}

export interface RateLimitStore {
  /**
   * Counts one request of `keyId` in its current fixed window, opening a new window when the last ran
   * out, or when it begins more than `windowMs` + `aheadMs` after `now` (it was opened on a wall clock
   * since set back).
   */
  hit(keyId: string, now: number, windowMs: number, aheadMs: number): Promise<{ count: number; windowStart: number }>;
  /**
   * Deletes the windows opened before `before` (long over: a key's next request opens a new one), so
   * that revoked keys and removed users leave nothing behind; returns how many.
   */
  prune(before: number): Promise<number>;
}

/** Browser sessions of the settings area, shared by every process of one database. */
export interface SessionStore {
  create(session: SessionRecord): Promise<void>;
  /** The session with this id (a hash of its token), expired or not; null when there is none. */
  get(id: string): Promise<SessionRecord | null>;
  /** Records use: moves lastSeenAt and expiresAt. False when the session is gone. */
  touch(id: string, use: { lastSeenAt: number; expiresAt: number }): Promise<boolean>;
  remove(id: string): Promise<boolean>;
  /** Removes every session of the user; returns how many there were. */
  removeByUser(userId: string): Promise<number>;
  /** Removes the sessions whose expiresAt is at or before `now`; returns how many. */
  removeExpired(now: number): Promise<number>;
}

/** Failed sign-ins per key (an email or a client address): the sign-in slowdown, across processes. */
export interface SignInAttemptStore {
  /**
   * Counts one failure of `key` at `now`, atomically: the count starts again at 1 when the previous
   * failure is `windowMs` or more before `now`. Returns the count after this failure.
   */
  fail(key: string, at: { now: number; windowMs: number }): Promise<SignInFailures>;
  get(key: string): Promise<SignInFailures | null>;
  /** Forgets the key's failures (a successful sign-in). */
  clear(key: string): Promise<void>;
  /** Forgets every key whose last failure is before `before`; returns how many. */
  prune(before: number): Promise<number>;
}

/** Verified revocation answers by issuer and serial, shared by every process of one database. */
export interface RevocationCache {
  /** The answer stored under `key` while `now` is before its validUntil; null otherwise. */
  get(key: string, now: number): Promise<RevocationAnswer | null>;
  /** Stores (or replaces) the answer; answers past their validUntil may be dropped at any time. */
  put(key: string, answer: RevocationAnswer): Promise<void>;
}

/**
 * What CAs said about leaves in their renewal information (RFC 9773), by certID, shared by every
 * process of one database.
 */
export interface RenewalInfoCache {
  get(certId: string): Promise<RenewalInfo | null>;
  /**
   * Stores (or replaces) what is known of the leaf, at `now`; it may be dropped once the leaf has
   * expired (`expiresAt`): leaves expired by `now` may be swept meanwhile.
   */
  put(certId: string, info: RenewalInfo, expiresAt: number, now: number): Promise<void>;
  /**
   * Takes the right to ask the CA about the leaf until `until`, so that processes sharing the store do
   * not ask at once: true when taken, or already held by `owner`; false while another owner holds it,
   * that is while its claim ends after `now` and no later than `latest` (one ending later was taken on
   * a wall clock since set back, and is taken over).
   */
  claim(certId: string, owner: string, now: number, until: number, latest: number): Promise<boolean>;
}

export type InsertWatchResult = "created" | "duplicate" | "limit_reached";

export interface WatchListQuery {
  limit: number;
  /** Keyset position, newest first: items strictly before (createdAt, id). */
  before?: { createdAt: number; id: string };
}

/** What one page of a poll changes, written only while the poller still holds the watch's lease. */
/** A CT service's wait (Retry-After) is honoured up to a day; pollSoon ignores one further ahead than this (a clock set back). */
export const LONGEST_RETRY_AFTER_MS = 24 * 60 * 60 * 1000 + 10 * 60 * 1000;

export interface WatchPollProgress {
  id: string;
  owner: string;
  cursor: string | null;
  /** Added to issuancesSeen. */
  newIssuances: number;
  baselineDone: boolean;
  pendingNames: string[];
  lastPolledAt: number | null;
  lastError: string | null;
  /** The lease continues until then (mid-poll) or the next poll is due then (poll done). */
  nextPollAt: number;
  /** False: the lease is kept (more pages follow). */
  release: boolean;
  updatedAt: number;
  /**
   * The watch's issuancesSeen as this poll knows it once this save is written (as claimed, plus its
   * own newIssuances). A release that finds more makes the next poll due at `updatedAt`: the CT
   * follower recorded issuances while the lease kept its commit from bringing the poll forward, and
   * this poll may have read its pages before them.
   */
  issuancesSeen?: number;
  /**
   * With `release`: the CT service asked for this wait (429 with Retry-After) until `nextPollAt`, which
   * a poll asked for through the API (pollSoon) then does not bring forward.
   */
  rateLimited?: boolean;
}

export interface WatchStore {
  /** Inserts unless the domain is already watched in the scope or the scope holds `limit` watches. */
  insert(record: WatchRecord, options: { limit: number }): Promise<InsertWatchResult>;
  get(scope: Scope, id: string): Promise<WatchRecord | null>;
  /** Newest first. */
  list(scope: Scope, query: WatchListQuery): Promise<WatchRecord[]>;
  update(
    scope: Scope,
    id: string,
    patch: Partial<Pick<WatchRecord, "includeSubdomains" | "autoMonitor" | "allowedIssuers">> & { updatedAt: number },
  ): Promise<WatchRecord | null>;
  remove(scope: Scope, id: string): Promise<boolean>;
  /**
   * Makes the watch due at `at` (or keeps an earlier time) unless a poll of it is under way; returns the
   * watch, or null when it is not in the scope. The "Poll now" of the API and the settings area. A wait
   * the CT service asked for (its last poll rate-limited: savePoll's `rateLimited`) is kept: due at its
   * end at the earliest (CONTRACT §15: a 429's Retry-After holds for that watch's next request), unless
   * that end is more than a day and a clock step's slack past `at` (planned on a clock since set back).
   */
  pollSoon(scope: Scope, id: string, at: number): Promise<WatchRecord | null>;
  /** Leases up to `limit` due watches to `owner` (their nextPollAt moves to `leaseUntil`), as claimDue does. */
  claimDue(options: { owner: string; now: number; leaseUntil: number; limit: number }): Promise<WatchRecord[]>;
  /**
   * Makes due at `now` every watch whose nextPollAt is later than `latest` (leases included) and whose
   * last poll ended later than `polledAfter` (never polled: whose creation was), and returns how many:
   * times chosen on a wall clock since set back, as CertificateStore's pullForwardChecks. Watches
   * `owner` is polling are left to its poll (its save plans the next). Only reads when there are none.
   */
  pullForwardPolls(options: { now: number; latest: number; polledAfter: number; owner: string }): Promise<number>;
  /** The earliest nextPollAt of all watches (leases included), or null when there are none. */
  nextPollAt(): Promise<number | null>;
  /**
   * Writes a page's progress and the events it raised (with their deliveries), in one transaction,
   * only while `progress.owner` holds the lease; false (writing nothing) otherwise or when the watch is gone.
   */
  savePoll(progress: WatchPollProgress, events: EventRecord[]): Promise<boolean>;
}

/** One log the follower reads (CONTRACT §21), as GET /v1/ct/logs shows it and the follower resumes it. */
export interface CtLogRecord {
  /** Where its entries are read (the list's `url`, or a tile log's `monitoring_url`), with a trailing slash. */
  url: string;
  kind: "rfc6962" | "tiled";
  /** Size, root (base64) and timestamp of the newest head that verified; null before the first. */
  treeSize: number | null;
  rootHash: string | null;
  headTimestamp: number | null;
  /** Entries before it are matched; null until the log is first seen (it is then followed from its size). */
  position: number | null;
  /** The compact range of the first `position` leaves: base64 subtree roots, largest first. */
  compactRange: string[];
  lastError: string | null;
  /**
   * Not to be asked before this time (ms): the wait after its last failure (its Retry-After, else the
   * backoff), kept so that a restart or another process taking over waits it out too. Null when none.
   */
  retryAt: number | null;
  /** Whether the current log list names it (logs it no longer names are kept, not followed). */
  listed: boolean;
  updatedAt: number;
}

/** An issuance the follower matched to a watch: once per watch and issuance, whatever the logs. */
export interface CtIssuanceRecord {
  watchId: string;
  /** Hex SHA-256 of the TBSCertificate without the poison and SCT-list extensions. */
  issuanceKey: string;
  dnsNames: string[];
  issuerOrganization: string | null;
  issuerCommonName: string | null;
  notBefore: number;
  notAfter: number;
  /** Hex SHA-256 of the final certificate; null while only the precertificate was seen. */
  fingerprint: string | null;
  /** The log entry's timestamp. */
  loggedAt: number;
}

/** What one verified run of a log's entries changes, written at once. */
export interface CtBatch {
  /** Written only while this process holds the follower's lease. */
  owner: string;
  url: string;
  /** Where the run starts: written only if the log's position is still there. */
  from: number;
  position: number;
  compactRange: string[];
  /**
   * Its matches, each with the event it raises if the watch has not recorded the issuance yet (null:
   * recorded without one). A match for a watch that is gone is dropped.
   */
  matches: Array<{ issuance: CtIssuanceRecord; event: EventRecord | null }>;
  updatedAt: number;
}

export interface CtLogStore {
  /**
   * Takes the follower's lease for `owner` until `leaseUntil` when it is free, run out at `now`,
   * already `owner`'s (then extends it), or ending later than `latest` (taken on a wall clock since set
   * back by a process that is gone); true when `owner` holds it afterwards.
   */
  leaseFollower(options: { owner: string; now: number; leaseUntil: number; latest?: number }): Promise<boolean>;
  /** Gives the lease up, if `owner` holds it. */
  releaseFollower(owner: string): Promise<void>;
  /** Every log known, by url. */
  list(): Promise<CtLogRecord[]>;
  /**
   * Marks the logs of `logs` listed (adding those not known, unseen) and every other log not listed,
   * only while `owner` holds the lease; false otherwise. A listed log whose URL is not known, but whose
   * key (`keyBase64`) and kind are those of a known log the list no longer names, is that log moved:
   * its record takes the new URL, its head and position kept.
   */
  setListed(owner: string, logs: Array<Pick<CtLogRecord, "url" | "kind"> & { keyBase64?: string }>, now: number): Promise<boolean>;
  /** Writes a log's head and error fields, only while `owner` holds the lease; false otherwise. */
  updateLog(
    owner: string,
    url: string,
    patch: Partial<Pick<CtLogRecord, "treeSize" | "rootHash" | "headTimestamp" | "lastError" | "retryAt">> & { updatedAt: number },
  ): Promise<boolean>;
  /** Sets where a log first seen is followed from (only while it has no position and `owner` holds the lease). */
  startLog(owner: string, url: string, start: Pick<CtLogRecord, "position" | "compactRange"> & { updatedAt: number }): Promise<boolean>;
  /**
   * In one transaction, while `batch.owner` holds the lease and the log is at `batch.from`: moves the
   * log to `batch.position`, records each match new to its watch with its event (and deliveries),
   * counts it in the watch's issuancesSeen and makes the watch's poll due (unless under way: the poll
   * adds autoMonitor's names and notes pending deployments); a match the watch had without a
   * fingerprint gains this one's. `saved` false: nothing written.
   */
  commit(batch: CtBatch): Promise<{ saved: boolean; events: EventRecord[] }>;
  /** A token that changes whenever a watch is added, changed or deleted. */
  watchesVersion(): Promise<string>;
  /** Every watch of every organization and mode. */
  allWatches(): Promise<WatchRecord[]>;
  /** The issuances recorded for a watch after `after` (a seq; 0: from the first), oldest first. */
  issuances(watchId: string, after: number, limit: number): Promise<Array<CtIssuanceRecord & { seq: number }>>;
  /**
   * Records issuances a poll of the search service went through (CERTKEEPER_CT_SOURCE=search), by the
   * key the follower records its own under (the service's `tbs_sha256`): were the logs followed again
   * later, from where they were left, none of them would be announced a second time. Nothing is
   * counted and no poll made due; one already recorded, or of a watch that is gone, is left alone.
   */
  recordSearched(issuances: CtIssuanceRecord[], now: number): Promise<void>;
  /** Forgets the issuances of watches that are gone and of certificates that expired before `notAfterBefore`; how many. */
  pruneIssuances(notAfterBefore: number): Promise<number>;
}

export interface Store {
  organizations: OrganizationStore;
  users: UserStore;
  apiKeys: ApiKeyStore;
  certificates: CertificateStore;
  channels: ChannelStore;
  events: EventStore;
  imports: ImportStore;
  rateLimits: RateLimitStore;
  sessions: SessionStore;
  signInAttempts: SignInAttemptStore;
  revocations: RevocationCache;
  renewalInfo: RenewalInfoCache;
  watches: WatchStore;
  /** The CT log follower's lease, positions and recorded issuances (CONTRACT §21). */
  ctLogs: CtLogStore;
  /**
   * True when other processes may write to this store (a libSQL server): rate limits are then counted
   * in the store rather than in memory.
   */
  readonly shared: boolean;
  /**
   * A token that changes whenever anyone (this process or another) commits a write, cheap enough to
   * read on every request; undefined when the store cannot tell, and nothing may be cached. It may
   * leave out only two kinds of this process's writes: those told to {@link onCertificatesWritten}
   * listeners, and bookkeeping that changes no key grant and no certificate: the CT follower's
   * ({@link CtLogStore}: its lease, the logs' heads and positions, the issuances it records with their
   * events), a watch's poll (WatchStore's pollSoon, claimDue and savePoll, with its events), and the
   * revocation and renewal information caches. Whoever caches other records by this token must not
   * rely on it for those.
   */
  changeToken?(): string;
  /**
   * Registers a listener told of this process's writes that changeToken leaves out: a check's save and
   * lease (the most frequent writes of a running server), each changing only the certificates named.
   * Told once the write has ended (committed or not). Absent when every write moves the token. Whoever
   * caches by changeToken must listen here too: those writes never move it.
   */
  onCertificatesWritten?(listener: (certificates: readonly CertificateKey[]) => void): () => void;
  /**
   * Resolves when the store answers and accepts writes (it writes a little to find out); throws
   * {@link StorageUnavailableError} when it refuses them, or whatever else prevents an answer.
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}
