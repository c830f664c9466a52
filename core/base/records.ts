/** The records certkeeper keeps, as core sees them (stores map them to rows). Times are ms since the epoch. */

export interface ChainEntry {
  subject: string;
  issuer: string;
  validFrom: string;
  validTo: string;
  serialNumber: string;
  fingerprintSha256: string;
}

/** Warnings a certificate chain carries by itself (CONTRACT §13); `legacy_protocol` comes from the connection. */
export type CertificateWarning = "weak_key" | "weak_signature";

/** A certificate above the leaf on the trusted path: the one that expires first. */
export interface ChainCertificate {
  subject: string;
  issuer: string;
  serialNumber: string;
  notAfter: number;
}

/** The leaf's public key as CONTRACT §13 shows it. */
export interface PublicKeyInfo {
  algorithm: "RSA" | "EC" | "Ed25519" | "Ed448" | string;
  size: number;
  curve: string | null;
}

/** `tls`: TLS from the first byte; every other protocol upgrades a plain connection first (CONTRACT §12). */
export const PROTOCOLS = ["tls", "smtp", "imap", "pop3", "ftp", "postgres", "mysql", "ldap", "xmpp"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** The negotiated connection: protocol version and OpenSSL cipher name. */
export interface TlsConnection {
  protocol: string;
  cipher: string;
}

/** What a retrieval tells about a certificate, independent of time and of who monitors it. */
export interface CertificateDetails {
  serialNumber: string;
  /** notBefore and notAfter of the leaf, in ms since the epoch. */
  notBefore: number;
  notAfter: number;
  issuer: string;
  subject: string;
  subjectAlternativeNames: string[];
  signatureAlgorithm: string;
  chain: ChainEntry[];
  /**
   * When the trusted path through the sent intermediates stops being valid (the earliest notAfter
   * among them), so an unchanged chain is judged again then; absent or null when nothing bounds it.
   */
  pathValidUntil?: number | null;
  /**
   * Which roots the chain was judged against ({@link TrustStore.id}): when they change (a root added
   * to or removed from CERTKEEPER_EXTRA_CA_FILE, another platform bundle), the chain is judged again.
   */
  trust?: string;
  /** SHA-256 of the leaf's DER, upper-case hex pairs joined by `:`. */
  fingerprintSha256?: string;
  publicKey?: PublicKeyInfo;
  warnings?: CertificateWarning[];
  /**
   * The certificate above the leaf on the trusted path (the intermediates sent and the anchoring root)
   * that expires first; null when there is no trusted path or nothing above the leaf.
   */
  chainExpiry?: ChainCertificate | null;
  /** Whether the leaf is revoked (CONTRACT §14); absent on details stored before revocation checks. */
  revocation?: RevocationState;
  /** The issuer's organization (O) and common name (CN), those it has: what ARI and CAA match issuer names against. */
  issuerNames?: string[];
  /**
   * The leaf's RFC 9773 certID (base64url AKI keyIdentifier `.` base64url serial); null when the leaf has
   * no Authority Key Identifier (it is never asked about); absent on details stored before ARI.
   */
  ariCertId?: string | null;
  /** What the CA's renewal information (ARI) last said about the leaf; absent or null: nothing yet. */
  renewalInfo?: RenewalInfo | null;
}

/** How a certificate's expiry is alerted on (CONTRACT §18): at the renewal deadline, or at fixed days. */
export const ALERT_POLICIES = ["renewal", "days"] as const;
export type AlertPolicy = (typeof ALERT_POLICIES)[number];

/** `renewal.state` (CONTRACT §18). */
export const RENEWAL_STATES = ["not_due", "overdue", "requested"] as const;
export type RenewalState = (typeof RENEWAL_STATES)[number];

/**
 * A CA's ACME Renewal Information about one leaf (RFC 9773), as certkeeper keeps it: the last answer,
 * whether the CA asked for early replacement, and when to ask again. Shared by every certificate, of
 * every organization, that serves the leaf (a store port keeps it across processes).
 */
export interface RenewalInfo {
  /** The suggested renewal window of the last good answer; null before any good answer. */
  window: { start: number; end: number } | null;
  explanationUrl: string | null;
  /** When that answer was received; null before any. */
  checkedAt: number | null;
  /**
   * The window end at which the CA asked for early replacement (a first window ending before the
   * lifetime's midpoint, or a window ending earlier than the one before); null while it has not.
   */
  requestedEnd: number | null;
  /**
   * The answer that asked (its window and explanation), as the request's event shows it whatever the
   * CA answers since; absent in information kept before it was noted.
   */
  requested?: { window: { start: number; end: number }; explanationUrl: string | null } | null;
  /**
   * The last answer's window while the CA publishes no renewal information (its directory names no
   * renewalInfo): its next answer is compared with it, as with the window before it.
   */
  previousWindow?: { start: number; end: number } | null;
  /** When to ask again (Retry-After, clamped; 6 hours after an error). */
  nextAt: number;
  /** Why the last request failed; null when it was answered. */
  lastError: string | null;
}

/** What a verified revocation source said about one certificate, and how long that answer holds. */
export interface RevocationAnswer {
  status: "good" | "revoked" | "unknown";
  source: "ocsp_stapled" | "ocsp" | "crl";
  /** When the source was asked, ms. */
  checkedAt: number;
  revokedAt: number | null;
  /** RFC 5280's CRLReason name (`keyCompromise`, `superseded`, …), or null. */
  reason: string | null;
  /** Until when the answer may be reused: the source's nextUpdate, at most 7 days after checkedAt. */
  validUntil: number;
}

/** CONTRACT §14's `revocation` field, kept with the certificate's details (times in ms). */
export interface RevocationState {
  status: "good" | "revoked" | "unknown" | "unavailable" | "not_checked";
  source: RevocationAnswer["source"] | null;
  checkedAt: number | null;
  revokedAt: number | null;
  reason: string | null;
  /** Until when this state may be reused without asking again; null: ask at every check. */
  validUntil: number | null;
}

/** What makes a retrieved certificate invalid, beyond its validity period. */
export type ChainProblem = "self_signed" | "untrusted_issuer" | "hostname_mismatch";

/**
 * Whether a chain with `problem` leads to a trusted root: a CA certkeeper trusts issued its leaf
 * (whose name may still not match), so its CA is asked about it and its renewal watched.
 */
export function isTrustedChain(problem: ChainProblem | null): boolean {
  return problem === null || problem === "hostname_mismatch";
}

/** A failure to reach a target, as CONTRACT §5's statusReason values name it. */
export type NetFailureReason = "dns_error" | "connection_refused" | "timeout" | "tls_error" | "starttls_refused";

/** CONTRACT §5's statuses, in the order the first that applies wins. */
export const CERTIFICATE_STATUSES = ["expired", "revoked", "unreachable", "invalid", "expiring", "valid"] as const;
export type CertificateStatus = (typeof CERTIFICATE_STATUSES)[number];

/** Why a certificate's status is not `valid`. */
export const STATUS_REASONS = [
  "expired",
  "not_yet_valid",
  "self_signed",
  "untrusted_issuer",
  "hostname_mismatch",
  "expiring_soon",
  "chain_expiring",
  "dns_error",
  "connection_refused",
  "timeout",
  "tls_error",
  "starttls_refused",
  "revoked",
  "renewal_overdue",
  "renewal_requested",
  "renewal_blocked",
] as const;
export type StatusReason = (typeof STATUS_REASONS)[number];

export type Mode = "live" | "test";
export type Role = "owner" | "admin" | "member";
export type Plan = "free" | "pro" | "enterprise";

/** What one API key sees: its organization's data of its own mode. */
export interface Scope {
  organizationId: string;
  mode: Mode;
}

export interface Limits {
  certificates: number;
  channels: number;
  requestsPerMinute: number;
  /** Certificate Transparency watches (CONTRACT §15). */
  watches: number;
}

export const PLAN_LIMITS: Record<Plan, Limits> = {
  free: { certificates: 25, channels: 5, requestsPerMinute: 60, watches: 1 },
  pro: { certificates: 500, channels: 50, requestsPerMinute: 600, watches: 10 },
  enterprise: { certificates: 100_000, channels: 1000, requestsPerMinute: 6000, watches: 1000 },
};

export interface OrganizationRecord {
  id: string;
  name: string;
  plan: Plan;
  limits: Limits;
  createdAt: number;
}

export interface UserRecord {
  id: string;
  organizationId: string;
  email: string;
  role: Role;
  /** A memory-hard hash (argon2id), or null for a user who cannot sign in. */
  passwordHash: string | null;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: string;
  userId: string;
  organizationId: string;
  name: string;
  mode: Mode;
  /** SHA-256 of the key; the key itself is never stored. */
  hash: string;
  last4: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** A key with the user and organization it acts for, as authentication needs them. */
export interface KeyGrant {
  key: ApiKeyRecord;
  /** Null once the user was removed (their keys were revoked with them). */
  user: UserRecord | null;
  organization: OrganizationRecord;
}

/** What one address behind a certificate's name served at the last check (CONTRACT §11). */
export interface EndpointRecord {
  address: string;
  /** The chain's fingerprint, or null when this address gave no certificate. */
  fingerprint: string | null;
  details: CertificateDetails | null;
  problem: ChainProblem | null;
  /** Why no certificate came from this address; null when one did. */
  failure: NetFailureReason | null;
  tls: TlsConnection | null;
  /**
   * Whether this address's chain matches the name's TLSA records (CONTRACT §22), for `smtp`
   * certificates; absent or null: not judged (another protocol, no certificate, no TLSA answer yet).
   */
  dane?: DaneVerdict | null;
}

/** CONTRACT §22's `dane` of one endpoint. */
export interface DaneVerdict {
  status: "match" | "mismatch" | "none";
  /** The resolver's answer carried the DNSSEC AD bit (certkeeper does not validate DNSSEC itself). */
  validated: boolean;
}

/** One CAA record as DNS gave it (RFC 8659 §4.1). */
export interface CaaRecord {
  flags: number;
  /** Lower-cased. */
  tag: string;
  value: string;
}

/** One TLSA record (RFC 6698 §2.1); `data` in lower-case hex. */
export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  data: string;
}

/** An MTA-STS policy (RFC 8461 §3.2) as certkeeper judges it. */
export interface MtaStsPolicy {
  mode: "enforce" | "testing" | "none";
  /** Lower-cased patterns; `*.` stands for exactly one label. */
  mx: string[];
  /** Seconds. */
  maxAge: number;
}

/**
 * The CAA judgement of the leaf the certificate-level fields describe: `forbidden` when a relevant
 * record set exists and does not let the leaf's CA issue the next certificate (CONTRACT §22).
 */
export interface CaaVerdict {
  status: "permitted" | "forbidden" | "no_records" | "not_judged";
  /** The CA domain the issuer maps to; null for an issuer with no known CAA domain (not judged). */
  issuerDomain: string | null;
  /** What forbids it; null unless `forbidden`. */
  blocking: CaaBlocking | null;
}

export interface CaaBlocking {
  /** The name the renewal asks for: the domain, or `*.<base>` for a wildcard. */
  name: string;
  /** Where the relevant record set was found (the climb stops there). */
  setAt: string;
  property: "issue" | "issuewild";
  /** `not_listed`: no record names the CA; `critical`: a critical property no CA knows. */
  reason: "not_listed" | "critical";
  /** The relevant record set in presentation form, e.g. `0 issue "digicert.com"`. */
  records: string[];
  /** Names the set (its place and records, not the serial): renewal_blocked is announced once per serial and key. */
  key: string;
  /**
   * The issuer names (O or CN, lower-cased) of the verdict's CA (sharing one of its CAA domains) that
   * the set forbids too: a leaf whose issuer carries one is blocked too, a leaf of another CA served at
   * another address is not. Absent on
   * verdicts stored before it: the judged leaf's own issuer names stand in.
   */
  issuers?: string[];
}

/**
 * What DNS said about a certificate (CONTRACT §22), kept with the record. A lookup that fails leaves
 * its part as it was: the last conclusive answer stands, so a flaky resolver never flaps a warning.
 */
export interface DnsFindings {
  /** The relevant CAA record sets, keyed by the name each climb started from (the domain, or a wildcard's base). */
  caaSets?: Array<{ from: string; setAt: string | null; records: CaaRecord[] }>;
  caa?: CaaVerdict;
  /** The TLSA records of an `smtp` certificate, where they were found and whether DNSSEC validated them. */
  tlsa?: { name: string | null; validated: boolean; records: TlsaRecord[] };
  /** The MTA-STS policy of an `smtp` certificate's mail domain, as senders would cache it. */
  mtaSts?: {
    mailDomain: string;
    /** The TXT record's id of the policy held; null: no policy. */
    id: string | null;
    policy: MtaStsPolicy | null;
    /** When the policy was fetched (ms); it is used until fetchedAt + maxAge, as senders cache it. */
    fetchedAt: number | null;
    /** The policy is `enforce` and the host or its certificate is not covered by it. */
    mismatch: boolean;
  };
}

/**
 * Alerts already announced for certificates other than the one the certificate-level fields show now,
 * so a name whose nodes flip between an old and a new certificate announces nothing twice.
 */
export interface AlertMemory {
  /** Per leaf (`serial@notAfter`): the lowest threshold announced and whether expiry was. */
  leaves: Array<{ key: string; notAfter: number; alertedThreshold: number | null; expiryAlerted: boolean; chainExpiry?: ChainCertificate | null }>;
  /**
   * The leaves answering nodes served at recent checks (`serial@notAfter`), with their notBefore and
   * renewal deadline as last known, the most recently issued first (absent: none noted yet). A leaf
   * issued after the certificate-level one that no node serves at a check (a rollout going back and
   * forth) keeps a check at its deadline; one whose expiry comes soon, a check at its expiry (its
   * notAfter: absent in entries noted before it was kept).
   */
  servedLately?: Array<{ key: string; notBefore: number; notAfter?: number; deadline: number }>;
  /** Per chain certificate serial: the lowest threshold announced by `certificate.chain_expiring`. */
  chain: Array<{ serial: string; alertedThreshold: number }>;
  /** Serials announced by `certificate.revoked`, the most recent first (absent: none yet). */
  revoked?: string[];
  /** Serials announced by `certificate.renewal_overdue` (or covered by a request), the most recent first. */
  overdue?: string[];
  /**
   * For a leaf another node served when its renewal_overdue was announced (or covered by a request):
   * the lowest threshold crossed then, covered by it. Restored when that leaf becomes the
   * certificate-level one, so only thresholds crossed later are raised. The most recent first.
   */
  overdueThresholds?: Array<{ serial: string; threshold: number }>;
  /**
   * The certificate-level serial's thresholds covered by its renewal_overdue (CONTRACT §18), and the
   * lowest one truly raised before it (null: none): covered is not raised, so a switch to `days`
   * raises §7's lowest crossed threshold then. Gone once a later threshold is raised.
   */
  covered?: { serial: string; raised: number | null };
  /** `serial@windowEnd` of each `certificate.renewal_requested` announced, the most recent first. */
  requested?: string[];
  /** `serial|CAA set key` pairs announced by `certificate.renewal_blocked`, the most recent first. */
  renewalBlocked?: string[];
  /**
   * A renewal seen at the certificate level (its new leaf expires before the old one, so it became the
   * certificate-level leaf at the first node serving it) while some answering node still serves the
   * old leaf: `certificate.renewed` waits until none does (CONTRACT §20). Also a move of the
   * certificate-level leaf while the old leaf's node is silent: a renewal only if that node is not back
   * with the old leaf. A later move while it waits becomes its new leaf.
   */
  renewing?: Renewing;
  /** The leaves (`serial@notAfter`) announced by `certificate.renewed`, the last eight, the most recent first: none twice. */
  renewedTo?: string[];
  /**
   * The leaves (`serial@notAfter`) the answering nodes served when `certificate.renewed` was last
   * announced (absent before the first): a move of the certificate-level leaf to one of them is no
   * renewal (nodes with certificates of their own, renewed on their own days).
   */
  generation?: string[];
  /**
   * Each node that does not answer now, with the leaf it served at its last answer: presumed still
   * served, so its moments are still looked at (and for a while it holds a renewal up), until the node
   * answers again or the name no longer resolves to it (a failed lookup keeps every node). Absent:
   * every node answers.
   */
  silent?: SilentLeaf[];
}

/** A renewal waiting to be announced (AlertMemory.renewing): leaves by `serial@notAfter`. */
export interface Renewing {
  oldKey: string;
  newKey: string;
  previous: { serialNumber: string; expiresAt: string };
  /** The old leaf's notBefore (ms); absent in renewals pending from before it was kept. */
  oldNotBefore?: number;
  /**
   * Set when the new leaf was not issued after the old one: announced only once the old leaf's node
   * answers with another leaf or is no longer listed, however long it is silent (else a node that
   * flaps for a day would be announced as a renewal).
   */
  untilBack?: true;
}

/** A leaf served by a node at its last answer, the node silent since (AlertMemory.silent). Times in ms. */
export interface SilentLeaf {
  address: string;
  key: string;
  notBefore: number;
  notAfter: number;
  /** Its renewal deadline, as judged at its last answer. */
  deadline: number;
  chainExpiry: ChainCertificate | null;
  /** When the node was first found silent (its last answer was before). */
  since: number;
}

/**
 * An issuance a watch recorded for exactly the names of a certificate's served leaf, with a later
 * notBefore, that the certificate's endpoints do not all serve yet (CONTRACT §20). Times in ms.
 */
export interface PendingDeployment {
  /** The issuance's notBefore. */
  issuedAt: number;
  notAfter: number;
  /** Of the final certificate, upper-case colon hex; null when only its precertificate was logged. */
  fingerprintSha256: string | null;
  issuer: string;
  /** When the watch recorded it: the grace runs from here. */
  seenAt: number;
  /** True once `certificate.not_deployed` was raised for it. */
  announced: boolean;
  /**
   * The earliest issuance this one replaced before it was announced or served everywhere: an endpoint
   * still behind it when its own grace ends is announced then, not a grace later. Absent or null: none.
   */
  superseded?: Omit<PendingDeployment, "superseded"> | null;
}

/** What the service last announced about a certificate's health, so each change is announced once. */
export type Health = "ok" | "invalid" | "unreachable";

export interface CertificateRecord extends Scope {
  id: string;
  domain: string;
  port: number;
  protocol: Protocol;
  /** A host name or IP literal connected to instead of the domain; null: the domain. */
  connectTo: string | null;
  /** `smtp` only: the mail domain whose MTA-STS policy applies (CONTRACT §22); null or absent: the default. */
  mailDomain?: string | null;
  name: string;
  /** Distinct, sorted descending. */
  alertThresholds: number[];
  /** Alert at the renewal deadline or at fixed days before expiry (CONTRACT §18). */
  alertPolicy: AlertPolicy;
  /** Distinct, sorted ascending (CONTRACT §16). */
  tags: string[];
  /** Until then its events are recorded muted, with no deliveries; null: not muted. */
  mutedUntil: number | null;
  createdAt: number;
  updatedAt: number;

  /** The last certificate retrieved (details stay when a later check fails). */
  fingerprint: string;
  details: CertificateDetails;
  /** A trust or hostname problem of the last retrieved chain. */
  problem: ChainProblem | null;
  /** The connection of the endpoint the details describe. */
  tls: TlsConnection | null;
  /** Every address at the last conclusive check, IPv4 first, each in numeric order. */
  endpoints: EndpointRecord[];
  alertMemory: AlertMemory;
  /** A newer issuance of the same names not yet served by every answering endpoint; null: none. */
  deployment: PendingDeployment | null;
  /** What DNS said at the checks (CAA, DANE, MTA-STS); absent or null: nothing looked up yet. */
  dns?: DnsFindings | null;
  lastCheckedAt: number;

  /** Set once a failing certificate is declared unreachable. */
  failure: NetFailureReason | null;
  /** Consecutive failed checks, counting those retried before declaring it unreachable. */
  failureCount: number;

  /** Lowest alert threshold already announced for this serial; null: none yet. */
  alertedThreshold: number | null;
  /** True once `certificate.expired` was announced for this serial. */
  expiryAlerted: boolean;
  health: Health;

  nextCheckAt: number;
  /** Bumped by every write of a check result: two writers cannot both announce one change. */
  version: number;
}

/** A domain watched in Certificate Transparency (CONTRACT §15). */
export interface WatchRecord extends Scope {
  id: string;
  domain: string;
  includeSubdomains: boolean;
  autoMonitor: boolean;
  allowedIssuers: string[];
  /** When the last poll ended (successful or not); null before the first. */
  lastPolledAt: number | null;
  lastError: string | null;
  /** Issuances recorded so far, the first poll's included. */
  issuancesSeen: number;
  /** The CT service's id of the last issuance recorded: the next poll's `after`. */
  cursor: string | null;
  /** True once a poll has completed: the first poll's issuances raise no events. */
  baselineDone: boolean;
  /** Names autoMonitor could not add yet, tried again at the next poll. */
  pendingNames: string[];
  /** When the next poll is due (a lease moves it, as for certificate checks). */
  nextPollAt: number;
  createdAt: number;
  updatedAt: number;
}

/** The channel types, as stored and shown. */
export const CHANNEL_TYPES = ["email", "discord", "slack", "webhook", "pagerduty", "teams", "telegram"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** Which events a channel receives (CONTRACT §16); absent: every event. */
export interface ChannelFilter {
  events?: EventType[];
  tags?: string[];
}

export interface ChannelRecord extends Scope {
  id: string;
  type: ChannelType;
  name: string;
  enabled: boolean;
  /** As given (secrets included); masked only when shown. */
  config: Record<string, unknown>;
  /** `whsec_…`, for webhook channels. */
  signingSecret: string | null;
  /** Null: every event of the scope. */
  filter: ChannelFilter | null;
  createdAt: number;
  updatedAt: number;
  /** How its deliveries went lately; absent: never attempted (or stored before this was kept). */
  health?: ChannelHealth;
}

/**
 * A channel's delivery health (CONTRACT §23), moved by every attempt (tests included): the last
 * attempt's time, its delivery's status after it (`pending`: failed, to be retried) and error, and
 * since when it has been failing (the first failed attempt after a success; null after a success).
 */
export interface ChannelHealth {
  lastDeliveryAt: number | null;
  lastStatus: DeliveryStatus | null;
  lastError: string | null;
  failingSince: number | null;
}

/** One attempt's outcome, as a channel's health records it. */
export interface DeliveryAttempt {
  at: number;
  /** The delivery's status after the attempt: delivered, pending (to be retried) or failed (for good). */
  status: DeliveryStatus;
  error: string | null;
}

export type EventType =
  | "certificate.expiring"
  | "certificate.expired"
  | "certificate.renewed"
  | "certificate.invalid"
  | "certificate.unreachable"
  | "certificate.recovered"
  | "certificate.chain_expiring"
  | "certificate.revoked"
  | "certificate.issued"
  | "certificate.renewal_overdue"
  | "certificate.renewal_requested"
  | "certificate.not_deployed"
  | "certificate.renewal_blocked"
  | "test";

/** Every event kind, in documentation order (CONTRACT §7 and Part II). */
export const EVENT_TYPES: readonly EventType[] = [
  "certificate.expiring",
  "certificate.expired",
  "certificate.renewed",
  "certificate.invalid",
  "certificate.unreachable",
  "certificate.recovered",
  "certificate.chain_expiring",
  "certificate.revoked",
  "certificate.issued",
  "certificate.renewal_overdue",
  "certificate.renewal_requested",
  "certificate.not_deployed",
  "certificate.renewal_blocked",
  "test",
];

export interface EventRecord extends Scope {
  id: string;
  type: EventType;
  certificateId: string | null;
  /** `{ certificate, threshold? }` as sent to channels, frozen when the event happened. */
  data: Record<string, unknown>;
  createdAt: number;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface DeliveryRecord {
  eventId: string;
  channelId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  updatedAt: number;
}

export type ImportStatus = "running" | "finished";

/** A bulk add (CONTRACT §16): its items are worked in the background, each judged as POST /v1/certificates. */
export interface ImportRecord extends Scope {
  id: string;
  /** The plan's certificate limit when the import was made. */
  certificateLimit: number;
  status: ImportStatus;
  total: number;
  processed: number;
  created: number;
  failed: number;
  createdAt: number;
  finishedAt: number | null;
}

/** The outcome of one settled item. */
export interface ImportItemResult {
  index: number;
  status: "created" | "failed";
  certificateId: string | null;
  error: { code: string; message: string } | null;
}

/**
 * A signed-in browser session of the settings area. Its id is the SHA-256 of the token in the
 * session cookie: the token itself is never stored.
 */
export interface SessionRecord {
  id: string;
  userId: string;
  organizationId: string;
  createdAt: number;
  lastSeenAt: number;
  /** When it ends unless used again before (idle timeout, capped by the absolute lifetime). */
  expiresAt: number;
}

/** Failed sign-ins counted against one key (an email or a client address), for the slowdown. */
export interface SignInFailures {
  failures: number;
  lastFailureAt: number;
}
