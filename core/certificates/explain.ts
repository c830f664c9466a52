/**
 * What a certificate's state means for the person who has to act, in one plain sentence: what is
 * wrong, and what to do (CONTRACT §23). The settings area opens a certificate's page with it. Written
 * against the certificate as the API shows it, reading `renewal` when present; every statusReason of
 * the contract has its sentence here, `renewal_blocked` (CONTRACT §22) included.
 *
 * Also the dashboard's problems-first order: {@link PROBLEM_GROUPS}.
 */
import { relativeDays } from "../base/time.ts";

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
  /** CONTRACT §18 (when the server has it). */
  renewal?: { deadline?: string | null; state?: string | null; window?: { start?: string; end?: string } | null; explanationUrl?: string | null } | null;
}

/** The statusReason values under which a renewal, not the days left, is the news (CONTRACT §18, §19, §22). */
export const RENEWAL_REASONS = ["renewal_overdue", "renewal_requested", "renewal_blocked"] as const;

/**
 * The dashboard's groups, problems first (CONTRACT §23): expired, revoked, unreachable, invalid,
 * renewal overdue or requested, expiring, then valid. Each group is one status, narrowed by reason
 * where a status holds two groups; within a group, soonest expiry first, then domain.
 */
export const PROBLEM_GROUPS: ReadonlyArray<{ name: string; status: string; keep?: (statusReason: string | null) => boolean }> = [
  { name: "expired", status: "expired" },
  { name: "revoked", status: "revoked" },
  { name: "unreachable", status: "unreachable" },
  { name: "invalid", status: "invalid" },
  { name: "renewal overdue or requested", status: "expiring", keep: (reason) => isRenewalReason(reason) },
  { name: "expiring", status: "expiring", keep: (reason) => !isRenewalReason(reason) },
  { name: "valid", status: "valid" },
];

export function isRenewalReason(reason: string | null | undefined): boolean {
  return (RENEWAL_REASONS as readonly string[]).includes(reason ?? "");
}

/** Where a certificate falls in {@link PROBLEM_GROUPS} (0: the worst); unknown statuses last. */
export function problemRank(certificate: Pick<ExplainedCertificate, "status" | "statusReason">): number {
  const index = PROBLEM_GROUPS.findIndex((group) => group.status === certificate.status && (group.keep?.(certificate.statusReason) ?? true));
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
        `Serves a certificate whose chain does not lead to a trusted root${c.issuer ? ` (issuer: ${c.issuer})` : ""}${at}: install the full chain ` +
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
        `Should have been renewed by ${date(c.renewal?.deadline)}, and the domain's CAA records do not allow its issuer${c.issuer ? ` (${c.issuer})` : ""} to issue the next one${at}: ` +
        `allow that certificate authority in CAA (or change CA), then renew it.`
      );
    case null:
    case undefined:
      return valid(c);
    default:
      return `Is ${c.status} (${c.statusReason.replace(/_/g, " ")})${at}: see the details below.`;
  }
}

function valid(c: ExplainedCertificate): string {
  const deadline = c.renewal?.deadline;
  const renewal = deadline && c.renewal?.state === "not_due" ? `; renewal is due by ${date(deadline)}` : "";
  return `Valid, expires ${expiry(c)}${renewal}: nothing to do.`;
}
