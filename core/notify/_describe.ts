/**
 * What an event says, in plain words, before any format: one headline (the email subject), one
 * summary, and labelled facts. Each renderer (webhook aside) escapes these for its own markup.
 */
import type { EventRecord, EventType } from "../base/records.ts";
import { nameShown } from "../base/log.ts";
import { dayCount as days, relativeDays as relative } from "../base/time.ts";
import type { CertificateView } from "../schemas/certificate.ts";
import { httpHref } from "../net/mod.ts";

export interface Fact {
  name: string;
  value: string;
}

export interface Described {
  /** "Certificate expiring": what kind of news this is. */
  label: string;
  /** "example.com: certificate expires in 7 days"; the email subject. */
  headline: string;
  /** One or two sentences of plain text. */
  summary: string;
  facts: Fact[];
  /** The event's time, `YYYY-MM-DDTHH:mm:ss.sssZ`. */
  createdAt: string;
}

export const EVENT_LABELS: Record<EventType, string> = {
  "certificate.expiring": "Certificate expiring",
  "certificate.expired": "Certificate expired",
  "certificate.renewed": "Certificate renewed",
  "certificate.invalid": "Certificate invalid",
  "certificate.unreachable": "Certificate unreachable",
  "certificate.recovered": "Certificate valid again",
  "certificate.chain_expiring": "Certificate chain expiring",
  "certificate.revoked": "Certificate revoked",
  "certificate.issued": "New certificate issued",
  "certificate.renewal_overdue": "Renewal overdue",
  "certificate.renewal_requested": "Early renewal requested",
  "certificate.not_deployed": "New certificate not deployed",
  "certificate.renewal_blocked": "Renewal blocked by CAA",
  test: "Test notification",
};

const INVALID_REASONS: Record<string, string> = {
  self_signed: "it is self-signed",
  untrusted_issuer: "it was not issued by a trusted certificate authority",
  hostname_mismatch: "it is not valid for this host name",
  not_yet_valid: "it is not valid yet",
  expired: "it has expired",
};

const NET_REASONS: Record<string, string> = {
  dns_error: "the name does not resolve",
  connection_refused: "the connection was refused",
  timeout: "the server did not answer in time",
  tls_error: "the TLS handshake failed",
  starttls_refused: "the server does not offer or refused the STARTTLS upgrade",
};

/** The certificate snapshot an event carries, or null (a test event may have none). */
export function certificateOf(event: EventRecord): CertificateView | null {
  const certificate = event.data.certificate;
  if (typeof certificate !== "object" || certificate === null) return null;
  const c = certificate as Partial<CertificateView>;
  return typeof c.domain === "string" && typeof c.port === "number" ? (certificate as CertificateView) : null;
}

/** "example.com", or "example.com:8443" off the default port. */
export function targetOf(certificate: Pick<CertificateView, "domain" | "port">): string {
  return certificate.port === 443 ? certificate.domain : `${certificate.domain}:${certificate.port}`;
}

/**
 * The event as people's channels show it (every one but the webhook, which gets it as recorded): each string of its data
 * on one line, control and reordering characters written out (a line break or U+202E in an issuer's
 * name forged lines or reversed text), and bounded: 1,024 characters, a name a server or a CA chose 256
 * (a hostile certificate may carry 90 KB in one: PagerDuty refused the event over 512 KB and Teams
 * dropped a card over 28 KB, the alert lost; and headlines start with the name); lists at most 100.
 */
function shownEvent(event: EventRecord): EventRecord {
  return { ...event, data: shownValue(event.data, 0) as EventRecord["data"] };
}

/** The fields holding a name a server or a CA chose (a certificate's, its chain's, a logged issuer's). */
const NAME_FIELDS = new Set(["issuer", "subject", "issuerOrganization", "issuerCommonName", "issuerFriendlyName"]);

function shownValue(value: unknown, depth: number, key?: string): unknown {
  if (typeof value === "string") return nameShown(value, key !== undefined && NAME_FIELDS.has(key) ? 256 : 1024);
  if (typeof value !== "object" || value === null || depth > 8) return value;
  if (Array.isArray(value)) return value.slice(0, 100).map((item) => shownValue(item, depth + 1, key));
  const shown: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(value)) shown[field] = shownValue(inner, depth + 1, field);
  return shown;
}

/** An event's summary sentence, as its notifications carry it, from what a listed event shows (its type, data and time). */
export function eventSummary(event: Pick<EventRecord, "type" | "data" | "createdAt">): string {
  return describeEvent({ id: "", organizationId: "", mode: "live", certificateId: null, ...event }).summary;
}

export function describeEvent(recorded: EventRecord): Described {
  const event = shownEvent(recorded);
  const createdAt = new Date(event.createdAt).toISOString();
  const label = EVENT_LABELS[event.type];
  if (event.type === "certificate.issued") return describeIssued(event, label, createdAt);
  const c = certificateOf(event);
  if (event.type === "test" || !c) {
    return {
      label,
      headline: event.type === "test" ? "certkeeper test notification" : `certkeeper: ${event.type}`,
      summary:
        event.type === "test"
          ? "This is a test notification from certkeeper. This channel is set up correctly."
          : `certkeeper reported ${event.type}.`,
      facts: [...(c ? certificateFacts(c) : []), ...channelFacts(event.data.channel)],
      createdAt,
    };
  }
  const t = targetOf(c);
  const expires = formatDate(c.expiresAt);
  const facts = certificateFacts(c);
  const data = event.data;
  // An event about the leaf another address serves (data.endpoint): that address and leaf are named.
  const endpoint = endpointOf(data);
  if (endpoint) {
    facts.push({ name: "Address", value: endpoint.address ?? "unknown" });
    facts.push({ name: "Serial number there", value: endpoint.serialNumber });
    facts.push({ name: "Expires there", value: formatDate(endpoint.expiresAt) });
  }
  switch (event.type) {
    case "certificate.expiring": {
      const phrase = expiresIn(c.daysUntilExpiry);
      if (typeof data.threshold === "number") facts.push({ name: "Alert threshold", value: days(data.threshold) });
      return {
        label,
        headline: `${t}: certificate ${phrase}`,
        summary: `The TLS certificate for ${t} ${phrase}, on ${expires}. Renew it before then.`,
        facts,
        createdAt,
      };
    }
    case "certificate.expired":
      return {
        label,
        headline: `${t}: certificate expired`,
        summary: `The TLS certificate for ${t} expired on ${expires}. Clients now refuse it until it is renewed.`,
        facts,
        createdAt,
      };
    case "certificate.renewed": {
      const previous = data.previous as { serialNumber?: unknown; expiresAt?: unknown } | undefined;
      if (typeof previous?.serialNumber === "string") facts.push({ name: "Previous serial number", value: previous.serialNumber });
      if (typeof previous?.expiresAt === "string") facts.push({ name: "Previous expiry", value: formatDate(previous.expiresAt) });
      return {
        label,
        headline: `${t}: certificate renewed`,
        summary: `The TLS certificate for ${t} was renewed. The new certificate expires on ${expires}.`,
        facts,
        createdAt,
      };
    }
    case "certificate.invalid": {
      const reason = c.statusReason && INVALID_REASONS[c.statusReason] ? c.statusReason : null;
      return {
        label,
        headline: `${t}: certificate is invalid${reason ? ` (${reason})` : ""}`,
        summary: `The TLS certificate for ${t} is not valid: ${reason ? INVALID_REASONS[reason] : "it failed validation"}.`,
        facts,
        createdAt,
      };
    }
    case "certificate.unreachable": {
      const reason = c.statusReason && NET_REASONS[c.statusReason] ? c.statusReason : null;
      if (typeof data.error === "string" && data.error !== "") facts.push({ name: "Error", value: data.error });
      return {
        label,
        headline: `${t}: certificate check failed${reason ? ` (${reason})` : ""}`,
        summary:
          `The TLS certificate for ${t} could not be retrieved: ${reason ? NET_REASONS[reason] : "the check failed"}. ` +
          "The last certificate seen is shown below.",
        facts,
        createdAt,
      };
    }
    case "certificate.chain_expiring": {
      const above = data.chainCertificate as { subject?: unknown; serialNumber?: unknown; expiresAt?: unknown } | undefined;
      const name = typeof above?.subject === "string" ? above.subject : "a certificate of its chain";
      const when = typeof above?.expiresAt === "string" ? formatDate(above.expiresAt) : "soon";
      if (typeof data.threshold === "number") facts.push({ name: "Alert threshold", value: days(data.threshold) });
      if (typeof above?.subject === "string") facts.push({ name: "Chain certificate", value: above.subject });
      if (typeof above?.serialNumber === "string") facts.push({ name: "Chain certificate serial", value: above.serialNumber });
      if (typeof above?.expiresAt === "string") facts.push({ name: "Chain certificate expires", value: when });
      return {
        label,
        headline: `${t}: chain certificate ${name} expires on ${when}`,
        summary:
          `The certificate ${name}, above the TLS certificate for ${t} in its chain, expires on ${when}, before the ` +
          `certificate itself (${expires}). Install a current chain before then.`,
        facts,
        createdAt,
      };
    }
    case "certificate.recovered":
      return {
        label,
        headline: `${t}: certificate is valid again`,
        summary: `The TLS certificate for ${t} is valid again. It expires on ${expires}.`,
        facts,
        createdAt,
      };
    case "certificate.revoked": {
      const revocation = (c as { revocation?: { revokedAt?: unknown; reason?: unknown; source?: unknown } }).revocation;
      if (typeof revocation?.revokedAt === "string") facts.push({ name: "Revoked at", value: formatDate(revocation.revokedAt) });
      if (typeof revocation?.reason === "string") facts.push({ name: "Revocation reason", value: revocation.reason });
      if (typeof revocation?.source === "string") facts.push({ name: "Reported by", value: revocation.source === "crl" ? "CRL" : "OCSP" });
      return {
        label,
        headline: `${t}: certificate revoked`,
        summary: `The TLS certificate for ${t} was revoked by its certificate authority. Clients that check revocation refuse it: replace it now.`,
        facts,
        createdAt,
      };
    }
    case "certificate.renewal_overdue": {
      const deadline = typeof data.deadline === "string" ? formatDate(data.deadline) : "its renewal deadline";
      facts.push({ name: "Renewal deadline", value: deadline });
      facts.push({ name: "Deadline from", value: data.source === "ari" ? "the CA's renewal window (ARI)" : "the certificate's lifetime" });
      const suggested = data.window as { start?: unknown; end?: unknown } | null | undefined;
      if (typeof suggested?.start === "string" && typeof suggested.end === "string") {
        facts.push({ name: "Renewal window", value: `${formatDate(suggested.start)} to ${formatDate(suggested.end)}` });
      }
      if (endpoint) {
        const at = endpoint.address ?? "one of its addresses";
        const left = typeof data.daysUntilExpiry === "number" ? ` (${relative(data.daysUntilExpiry)})` : "";
        return {
          label,
          headline: `renewal overdue: ${t} at ${at} still serves the certificate that should have been replaced by ${deadline}`,
          summary:
            `${at} still serves a TLS certificate for ${t} that should have been renewed by ${deadline}; it expires on ` +
            `${formatDate(endpoint.expiresAt)}${left}. Install the renewed certificate there (and reload the server that serves it).`,
          facts,
          createdAt,
        };
      }
      return {
        label,
        headline: `renewal overdue: ${t} still serves the certificate that should have been replaced by ${deadline}`,
        summary:
          `The TLS certificate for ${t} should have been renewed by ${deadline} and is still served; it expires on ${expires} ` +
          `(${relative(c.daysUntilExpiry)}). Check that its ACME client is running and that the renewed certificate is installed.`,
        facts,
        createdAt,
      };
    }
    case "certificate.renewal_requested": {
      const window = data.window as { start?: unknown; end?: unknown } | null | undefined;
      const end = typeof window?.end === "string" ? formatDate(window.end) : null;
      if (typeof window?.start === "string") facts.push({ name: "Renewal window", value: `${formatDate(window.start)} to ${end ?? "?"}` });
      // Read again as a URL: an event written before explanation URLs were kept parsed may hold the CA's text.
      const explanation = typeof data.explanationUrl === "string" ? httpHref(data.explanationUrl) : null;
      if (explanation !== null) facts.push({ name: "Explanation", value: explanation });
      if (endpoint) {
        // About the leaf another address serves (a rollout under way): that address and that leaf.
        const at = endpoint.address ?? "one of its addresses";
        return {
          label,
          headline: `${t} at ${at}: the certificate authority asks for early renewal${end ? ` by ${end}` : ""}`,
          summary:
            `The certificate authority of ${t} asks, in its renewal information, for the certificate ${at} serves to be ` +
            `replaced early${end ? `, by ${end}` : ""}, usually before it revokes it. Renew it and install it there; it expires on ` +
            `${formatDate(endpoint.expiresAt)}.`,
          facts,
          createdAt,
        };
      }
      return {
        label,
        headline: `${t}: the certificate authority asks for early renewal${end ? ` by ${end}` : ""}`,
        summary:
          `The certificate authority of ${t} asks, in its renewal information, for this certificate to be replaced early` +
          `${end ? `, by ${end}` : ""}, usually before it revokes it. Renew it now; it expires on ${expires}.`,
        facts,
        createdAt,
      };
    }
    case "certificate.not_deployed": {
      const deployment = data.deployment as { issuedAt?: unknown; notAfter?: unknown; servedBy?: unknown; endpoints?: unknown; issuer?: unknown } | undefined;
      const lagging = Array.isArray(data.lagging) ? data.lagging.filter((a): a is string => typeof a === "string") : [];
      const issued = typeof deployment?.issuedAt === "string" ? formatDate(deployment.issuedAt) : "recently";
      if (typeof deployment?.issuer === "string") facts.push({ name: "New certificate issued by", value: deployment.issuer });
      facts.push({ name: "New certificate issued", value: issued });
      if (typeof deployment?.notAfter === "string") facts.push({ name: "New certificate expires", value: formatDate(deployment.notAfter) });
      if (typeof deployment?.servedBy === "number" && typeof deployment?.endpoints === "number") {
        facts.push({ name: "Serving it", value: `${deployment.servedBy} of ${deployment.endpoints} addresses` });
      }
      facts.push({ name: "Still serving the old certificate", value: lagging.join(", ") || "unknown" });
      const where = lagging.length === 1 ? lagging[0]! : `${lagging.length} addresses`;
      // The old certificate is what the lagging addresses serve (the certificate-level leaf may be the
      // new one: a shorter-lived replacement expires first); the first of them to expire, if several.
      const old = (c.endpoints ?? [])
        .filter((endpoint) => lagging.includes(endpoint.address) && endpoint.expiresAt !== null)
        .map((endpoint) => endpoint.expiresAt!)
        .sort()[0] ?? c.expiresAt;
      const oldExpiry = `${Date.parse(old) <= event.createdAt ? "expired" : "expires"} on ${formatDate(old)}`;
      return {
        label,
        headline: `${t}: new certificate not deployed on ${where}`,
        summary:
          `A certificate was issued for ${t} on ${issued}, but ${lagging.length === 1 ? `${lagging[0]} still serves` : `${lagging.join(", ")} still serve`} ` +
          `the old one, which ${oldExpiry}. Install the new certificate there (and reload the server that serves it).`,
        facts,
        createdAt,
      };
    }
    case "certificate.renewal_blocked":
      return describeRenewalBlocked(c, data, { label, facts, createdAt });
    default:
      return { label, headline: `${t}: ${event.type}`, summary: `certkeeper reported ${event.type}.`, facts, createdAt };
  }
}

/**
 * CAA records that will make the next renewal fail (CONTRACT §22): which CA, where the records are,
 * and the record to add.
 */
function describeRenewalBlocked(c: CertificateView, data: Record<string, unknown>, base: Omit<Described, "headline" | "summary">): Described {
  const t = targetOf(c);
  const caa = (data.caa ?? {}) as { name?: unknown; setAt?: unknown; property?: unknown; reason?: unknown; records?: unknown; issuerDomain?: unknown };
  const setAt = typeof caa.setAt === "string" ? caa.setAt : c.domain;
  const name = typeof caa.name === "string" ? caa.name : c.domain;
  const property = caa.property === "issuewild" ? "issuewild" : "issue";
  const caDomain = typeof caa.issuerDomain === "string" ? caa.issuerDomain : null;
  const records = Array.isArray(caa.records) ? caa.records.filter((record): record is string => typeof record === "string") : [];
  const ca = caDomain ? `${c.issuer} (${caDomain})` : c.issuer;
  const facts = [...base.facts, { name: "CAA records at", value: setAt }];
  if (records.length > 0) facts.push({ name: "CAA records", value: records.join("; ") });
  if (caDomain) facts.push({ name: "Record to add", value: `${setAt}. CAA 0 ${property} "${caDomain}"` });
  const fix =
    caa.reason === "critical"
      ? `A critical CAA property no CA understands forbids every CA: remove it from the records at ${setAt}.`
      : caDomain
        ? `Add the record ${setAt}. CAA 0 ${property} "${caDomain}" (or renew from a CA the records name).`
        : `Add an ${property} record naming ${c.issuer}'s CAA domain at ${setAt} (or renew from a CA the records name).`;
  return {
    ...base,
    facts,
    headline: `${t}: CAA records forbid ${c.issuer}, the next renewal will fail`,
    summary: `The CAA records at ${setAt} do not allow ${ca} to issue for ${name}, so the next renewal of the certificate for ${t} from that CA will fail. ${fix}`,
  };
}

/** A certificate found in Certificate Transparency for a watched domain (no monitored certificate). */
function describeIssued(event: EventRecord, label: string, createdAt: string): Described {
  const d = event.data as {
    domain?: unknown;
    dnsNames?: unknown;
    issuer?: unknown;
    notBefore?: unknown;
    notAfter?: unknown;
    fingerprintSha256?: unknown;
    authorizedIssuer?: unknown;
  };
  const domain = typeof d.domain === "string" ? d.domain : "a watched domain";
  const names = Array.isArray(d.dnsNames) ? d.dnsNames.filter((name): name is string => typeof name === "string") : [];
  const issuer = typeof d.issuer === "string" ? d.issuer : "an unknown issuer";
  const facts: Fact[] = [{ name: "Domain", value: domain }];
  if (names.length > 0) facts.push({ name: "Names", value: names.join(", ") });
  facts.push({ name: "Issuer", value: issuer });
  if (typeof d.notBefore === "string") facts.push({ name: "Valid from", value: formatDate(d.notBefore) });
  if (typeof d.notAfter === "string") facts.push({ name: "Valid until", value: formatDate(d.notAfter) });
  if (typeof d.fingerprintSha256 === "string") facts.push({ name: "SHA-256 fingerprint", value: d.fingerprintSha256 });
  const unauthorized = d.authorizedIssuer === false;
  if (typeof d.authorizedIssuer === "boolean") facts.push({ name: "Allowed issuer", value: d.authorizedIssuer ? "yes" : "no" });
  return {
    label,
    headline: `${domain}: new certificate issued by ${issuer}${unauthorized ? " (not an allowed issuer)" : ""}`,
    summary:
      `A new certificate for ${names[0] ?? domain} was logged in Certificate Transparency, issued by ${issuer}.` +
      (unauthorized ? " That issuer is not on this watch's allowed list: check who requested it." : " If you did not request it, find out who did."),
    facts,
    createdAt,
  };
}

/** A test event names the channel it was sent to (`data.channel`, as the deliverer records it). */
function channelFacts(channel: unknown): Fact[] {
  const name = (channel as { name?: unknown } | null | undefined)?.name;
  return typeof name === "string" && name !== "" ? [{ name: "Channel", value: name }] : [];
}

/** The other address's leaf an event is about (`data.endpoint`), when it names one. */
function endpointOf(data: Record<string, unknown>): { address: string | null; serialNumber: string; expiresAt: string } | null {
  const endpoint = data.endpoint as { address?: unknown; serialNumber?: unknown; expiresAt?: unknown } | undefined;
  if (typeof endpoint !== "object" || endpoint === null) return null;
  if (typeof endpoint.serialNumber !== "string" || typeof endpoint.expiresAt !== "string") return null;
  return { address: typeof endpoint.address === "string" ? endpoint.address : null, serialNumber: endpoint.serialNumber, expiresAt: endpoint.expiresAt };
}

function certificateFacts(c: CertificateView): Fact[] {
  const facts: Fact[] = [{ name: "Domain", value: targetOf(c) }];
  if (c.name !== c.domain) facts.push({ name: "Name", value: c.name });
  facts.push(
    { name: "Status", value: c.statusReason && c.statusReason !== c.status ? `${c.status} (${c.statusReason})` : c.status },
    { name: "Expires", value: `${formatDate(c.expiresAt)} (${relative(c.daysUntilExpiry)})` },
    { name: "Issuer", value: c.issuer },
    { name: "Serial number", value: c.serialNumber },
  );
  return facts;
}

/** "expires in 7 days", "expires in 1 day", "expires in less than a day". */
function expiresIn(daysUntilExpiry: number): string {
  return daysUntilExpiry <= 0 ? "expires in less than a day" : `expires in ${days(daysUntilExpiry)}`;
}

/** "2025-05-12 10:00 UTC" from an ISO timestamp; anything unreadable is shown as given. */
export function formatDate(isoTimestamp: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(isoTimestamp);
  return match ? `${match[1]} ${match[2]} UTC` : isoTimestamp;
}
