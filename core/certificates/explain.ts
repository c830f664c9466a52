/**
 * What a certificate's state means for the person who has to act, in one plain sentence: what is
 * wrong, and what to do (CONTRACT §23). The settings area opens a certificate's page with it. Written
 * against the certificate as the API shows it, reading `renewal` when present; every statusReason of
 * the contract has its sentence here, `renewal_blocked` (CONTRACT §22) included.
 *
 * Also the dashboard's problems-first order: {@link PROBLEM_GROUPS}.
 */
import { relativeDays } from "../base/time.ts";
import { nameShown } from "../base/log.ts";

/** The fields of a certificate view the sentence reads (get and list views have them all). */
export interface ExplainedCertificate {
  domain: string;
  port: number;
  status: string;
  statusReason: string | null;
  daysUntilExpiry: number;
  expiresAt: string;
  issuedAt?: string;
  issuer?: string;
  subject?: string;
  subjectAlternativeNames?: string[];
  chainExpiresAt?: string | null;
  protocol?: string;
  connectTo?: string | null;
  endpoints?: Array<{ address: string; status: string; statusReason: string | null }>;
  revocation?: { revokedAt?: string | null; reason?: string | null } | null;
  /** weak_key, weak_signature, legacy_protocol (CONTRACT §13), caa_forbids_issuer, dane_mismatch, mta_sts_mismatch (§22). */
  warnings?: string[];
  /** A newer issuance not yet served everywhere (CONTRACT §20). */
  deployment?: { issuedAt?: string; servedBy?: number; endpoints?: number } | null;
  publicKey?: { algorithm?: string; size?: number } | null;
  tls?: { protocol?: string } | null;
  mailDomain?: string | null;
  /** CONTRACT §18 (when the server has it). */
  renewal?: { deadline?: string | null; state?: string | null; window?: { start?: string; end?: string } | null; explanationUrl?: string | null } | null;
}

/** The statusReason values under which a renewal, not the days left, is the news (CONTRACT §18, §19, §22). */
export const RENEWAL_REASONS = ["renewal_overdue", "renewal_requested", "renewal_blocked"] as const;

/** The renewal states under which a renewal is the news whatever the alert policy (CONTRACT §18: the same under both). */
const URGENT_RENEWAL_STATES = ["overdue", "requested"] as const;

/** What places a certificate among the groups: its status, its reason and its renewal state. */
export type RankedCertificate = Pick<ExplainedCertificate, "status" | "statusReason"> & { renewal?: { state?: string | null } | null };

export interface ProblemGroup {
  name: string;
  /** The statuses the group is read from. */
  statuses: readonly string[];
  /** The renewal states it is narrowed to (the list's `renewal` filter); every state when absent. */
  renewal?: readonly string[];
}

/**
 * The dashboard's groups, problems first (CONTRACT §23): expired, revoked, unreachable, invalid,
 * renewal overdue or requested, expiring, then valid; within a group, soonest expiry first, then
 * domain. A renewal overdue or requested by the CA is that group's under either alert policy: under
 * `days` such a certificate may still be `valid` (its days decide the status), and it is still the one
 * whose renewal someone has to look at before the merely expiring ones. Each group is one read of the
 * certificate list (statuses and renewal states), so that no certificate falls in two.
 */
export const PROBLEM_GROUPS: ReadonlyArray<ProblemGroup> = [
  { name: "expired", statuses: ["expired"] },
  { name: "revoked", statuses: ["revoked"] },
  { name: "unreachable", statuses: ["unreachable"] },
  { name: "invalid", statuses: ["invalid"] },
  { name: "renewal overdue or requested", statuses: ["expiring", "valid"], renewal: URGENT_RENEWAL_STATES },
  { name: "expiring", statuses: ["expiring"], renewal: ["not_due"] },
  { name: "valid", statuses: ["valid"], renewal: ["not_due"] },
];

export function isRenewalReason(reason: string | null | undefined): boolean {
  return (RENEWAL_REASONS as readonly string[]).includes(reason ?? "");
}

/** Whether the certificate's renewal, not its days left, is the news: a renewal reason, or a renewal overdue or requested. */
function renewalIsUrgent(c: RankedCertificate): boolean {
  return isRenewalReason(c.statusReason) || (URGENT_RENEWAL_STATES as readonly string[]).includes(c.renewal?.state ?? "");
}

/** Where a certificate falls in {@link PROBLEM_GROUPS} (0: the worst); unknown statuses last. */
export function problemRank(c: RankedCertificate): number {
  // A view without `renewal` (a reason alone) counts as the state its reason implies.
  const state = !renewalIsUrgent(c) ? "not_due" : c.renewal?.state === "requested" || c.statusReason === "renewal_requested" ? "requested" : "overdue";
  const index = PROBLEM_GROUPS.findIndex((group) => group.statuses.includes(c.status) && (group.renewal?.includes(state) ?? true));
  return index === -1 ? PROBLEM_GROUPS.length : index;
}

/** "2026-05-12 10:00 UTC". */
function date(isoTime: string | null | undefined): string {
  return isoTime ? `${isoTime.slice(0, 10)} ${isoTime.slice(11, 16)} UTC` : "an unknown date";
}

/** "example.com", or "example.com:8443" off the default port. */
function target(c: ExplainedCertificate): string {
  return c.port === 443 && (c.protocol ?? "tls") === "tls" ? c.domain : `${c.domain}:${c.port}`;
}

/** The names a certificate covers, as a reader wants them: "a.example, b.example and 3 more". */
function names(c: ExplainedCertificate): string {
  const all = c.subjectAlternativeNames && c.subjectAlternativeNames.length > 0 ? c.subjectAlternativeNames : c.subject ? [c.subject] : [];
  if (all.length === 0) return "other names";
  if (all.length <= 3) return all.length === 1 ? all[0]! : `${all.slice(0, -1).join(", ")} and ${all.at(-1)}`;
  return `${all.slice(0, 2).join(", ")} and ${all.length - 2} more`;
}

/** " (at 10.0.0.2)" when only some of several addresses have the reason; "" otherwise. */
function where(c: ExplainedCertificate): string {
  const endpoints = c.endpoints ?? [];
  if (endpoints.length < 2 || !c.statusReason) return "";
  const affected = endpoints.filter((e) => e.statusReason === c.statusReason).map((e) => e.address);
  if (affected.length === 0 || affected.length === endpoints.length) return "";
  return ` (at ${affected.length <= 2 ? affected.join(" and ") : `${affected.length} of its ${endpoints.length} addresses`})`;
}

/** "in 5 days (2026-05-12 10:00 UTC)". */
function expiry(c: ExplainedCertificate): string {
  return `${relativeDays(c.daysUntilExpiry)} (${date(c.expiresAt)})`;
}

/**
 * One sentence: what is wrong with the certificate and what to do, or that nothing is.
 *
 * @example
 * explainCertificate({ domain: "mail.internal", port: 443, status: "invalid", statusReason: "hostname_mismatch",
 *   subjectAlternativeNames: ["app.internal"], daysUntilExpiry: 80, expiresAt: "2026-08-01T00:00:00.000Z" });
 * // "Serves a certificate for app.internal, not mail.internal: install a certificate that names mail.internal."
 */
export function explainCertificate(c: ExplainedCertificate): string {
  const at = where(c);
  const t = target(c);
  switch (c.statusReason) {
    case "expired":
      return `Expired ${relativeDays(c.daysUntilExpiry)} (${date(c.expiresAt)})${at}: clients refuse it; install a renewed certificate for ${c.domain} now.`;
    case "revoked": {
      const why = c.revocation?.reason ? ` (${c.revocation.reason})` : "";
      const since = c.revocation?.revokedAt ? ` on ${date(c.revocation.revokedAt)}` : "";
      return `Revoked by its certificate authority${since}${why}${at}: clients that check revocation refuse it; install a new certificate now.`;
    }
    case "dns_error":
      return c.connectTo
        ? `The name ${c.connectTo}, where it connects instead of the domain, does not resolve: fix its DNS records or the connect-to address, then check again.`
        : `The name ${c.domain} does not resolve: fix its DNS records (or give the address to connect to), then check again.`;
    case "connection_refused":
      return `Nothing accepted a connection to ${t}${at}, or its address is one certkeeper may not connect to: check that the server listens on port ${c.port}, then check again.`;
    case "timeout":
      return `${t} did not answer in time${at}: check that the server is up and that no firewall drops the connection, then check again.`;
    case "tls_error":
      return `${t} answers, but the TLS handshake fails${at}: check that it speaks TLS on port ${c.port} (or set the protocol whose STARTTLS it uses), then check again.`;
    case "starttls_refused":
      return `The ${c.protocol ?? "server"} server at ${t} does not offer the STARTTLS upgrade${at}: enable TLS in its configuration, then check again.`;
    case "not_yet_valid":
      return `Serves a certificate that is not valid before ${date(c.issuedAt)}${at}: check the server's clock, or install the certificate in use until then.`;
    case "self_signed":
      return `Serves a self-signed certificate${at}: clients do not trust it; install a certificate issued by a trusted certificate authority.`;
    case "untrusted_issuer":
      return (
        `Serves a certificate whose chain does not lead to a trusted root${c.issuer ? ` (issuer: ${nameShown(c.issuer)})` : ""}${at}: install the full chain ` +
        `(the certificate and its intermediates), or, for an internal CA, give certkeeper its root with CERTKEEPER_EXTRA_CA_FILE.`
      );
    case "hostname_mismatch":
      return `Serves a certificate for ${names(c)}, not ${c.domain}${at}: install a certificate that names ${c.domain}.`;
    case "expiring_soon":
      return `Expires ${expiry(c)}${at}: renew it and install the new certificate before then.`;
    case "chain_expiring":
      return (
        `A certificate of its chain expires ${c.chainExpiresAt ? `on ${date(c.chainExpiresAt)}` : "soon"}, before the certificate itself${at}: ` +
        `install the current intermediate certificates from your certificate authority.`
      );
    case "renewal_overdue":
      return (
        `Should have been renewed by ${date(c.renewal?.deadline)} and still serves the old certificate, which expires ${expiry(c)}${at}: ` +
        `find out why the renewal did not happen (your ACME client's log) and renew it now.`
      );
    case "renewal_requested":
      return (
        `Its certificate authority asks for this certificate to be replaced early${c.renewal?.window?.end ? `, by ${date(c.renewal.window.end)}` : ""}` +
        `${c.renewal?.explanationUrl ? ` (see ${c.renewal.explanationUrl})` : ""}${at}: renew it now, before a revocation.`
      );
    case "renewal_blocked":
      return (
        `Should have been renewed by ${date(c.renewal?.deadline)}, and the domain's CAA records do not allow its issuer${c.issuer ? ` (${nameShown(c.issuer)})` : ""} to issue the next one${at}: ` +
        `allow that certificate authority in CAA (or change CA), then renew it.`
      );
    case null:
    case undefined:
      return valid(c);
    default:
      return `Is ${c.status} (${c.statusReason.replace(/_/g, " ")})${at}: see the details below.`;
  }
}

/**
 * A certificate whose status has no reason: what still needs someone, the most pressing first (a
 * renewal overdue or requested under the days policy, a newer certificate not installed everywhere,
 * DNS that will refuse the next one or the mail it protects, a weak key or protocol), else nothing.
 */
function valid(c: ExplainedCertificate): string {
  const attention = explainAttention(c);
  if (attention) return attention;
  const deadline = c.renewal?.deadline;
  const renewal = deadline && c.renewal?.state === "not_due" ? `; renewal is due by ${date(deadline)}` : "";
  return `Valid, expires ${expiry(c)}${renewal}: nothing to do.`;
}

/**
 * What still needs someone about a certificate whose status has no reason (the sentence its page opens
 * with), or null when nothing does. `certkeeper check` notes it under the certificate, as it notes a
 * reason.
 */
export function explainAttention(c: ExplainedCertificate): string | null {
  const state = c.renewal?.state;
  const warnings = c.warnings ?? [];
  const caa = warnings.includes("caa_forbids_issuer");
  if (state === "overdue" && caa) return explainCertificate({ ...c, statusReason: "renewal_blocked" });
  if (state === "overdue" || state === "requested") return explainCertificate({ ...c, statusReason: `renewal_${state}` });
  const expires = `Valid, expires ${expiry(c)}`;
  const deployment = c.deployment;
  if (deployment) {
    const served = deployment.servedBy !== undefined && deployment.endpoints !== undefined ? ` is served by ${deployment.servedBy} of its ${deployment.endpoints} addresses` : " is not served everywhere yet";
    return `A newer certificate, issued ${date(deployment.issuedAt)},${served}: install it on the others (the addresses below that still serve the older one).`;
  }
  if (caa) {
    return (
      `${expires}, but the domain's CAA records do not allow its issuer${c.issuer ? ` (${nameShown(c.issuer)})` : ""} to issue the next one: ` +
      `allow that certificate authority in CAA (or change CA) before it is due for renewal.`
    );
  }
  if (warnings.includes("dane_mismatch")) {
    return `${expires}, but it matches none of the domain's TLSA records (DANE): mail servers that check DANE will not deliver; publish TLSA records for this certificate, or serve the one they name.`;
  }
  if (warnings.includes("mta_sts_mismatch")) {
    const policy = c.mailDomain ? ` of ${c.mailDomain}` : "";
    return `${expires}, but the MTA-STS policy${policy} does not accept ${c.domain} with this certificate: senders that enforce it will not deliver; list ${c.domain} in the policy's mx lines, or install a certificate that names it.`;
  }
  if (warnings.includes("weak_key")) {
    const key = c.publicKey?.algorithm && c.publicKey.size ? ` (${c.publicKey.algorithm} ${c.publicKey.size} bits)` : "";
    return `${expires}, but its key is weak${key}: have the next one issued with at least a 2048-bit RSA or a 256-bit EC key.`;
  }
  if (warnings.includes("weak_signature")) {
    return `${expires}, but a certificate of its chain is signed with SHA-1 or MD5: install the chain your certificate authority issues today.`;
  }
  if (warnings.includes("legacy_protocol")) {
    return `${expires}, but the server negotiated ${c.tls?.protocol ?? "an old TLS version"}: enable TLS 1.2 or 1.3 on it.`;
  }
  return null;
}
