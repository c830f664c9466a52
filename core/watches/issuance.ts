/**
 * One issuance as Cert Spotter's issuances API returns it (with expand=dns_names and expand=issuer),
 * read defensively, and what certkeeper makes of it: the `certificate.issued` event's data and the
 * names autoMonitor may add.
 */
import { iso } from "../base/time.ts";
import { nameShown } from "../base/log.ts";

export interface Issuance {
  id: string;
  dnsNames: string[];
  issuerFriendlyName: string | null;
  /** The issuer's distinguished name as the API gives it, e.g. `C=US, O=Let's Encrypt, CN=R11`. */
  issuerName: string | null;
  notBefore: number;
  notAfter: number;
  /** Lower-case hex SHA-256 of the certificate; null when only a precertificate was logged. */
  certSha256: string | null;
  /**
   * Lower-case hex SHA-256 of the TBSCertificate without the poison and SCT-list extensions: the key
   * the CT log follower records an issuance under. Null when the service gives none.
   */
  tbsSha256: string | null;
}

/** Reads one element of the API's JSON array; null when it lacks what an issuance must have. */
export function readIssuance(raw: unknown): Issuance | null {
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (typeof r.id !== "string" || r.id === "" || r.id.length > 100) return null;
  const notBefore = typeof r.not_before === "string" ? Date.parse(r.not_before) : NaN;
  const notAfter = typeof r.not_after === "string" ? Date.parse(r.not_after) : NaN;
  if (!Number.isFinite(notBefore) || !Number.isFinite(notAfter)) return null;
  const dnsNames = Array.isArray(r.dns_names)
    ? r.dns_names
        .filter((name): name is string => typeof name === "string")
        .map(normalizeDnsName)
        .filter(isDnsName)
        .slice(0, 1000)
    : [];
  const issuer = typeof r.issuer === "object" && r.issuer !== null ? (r.issuer as Record<string, unknown>) : {};
  const certSha256 = typeof r.cert_sha256 === "string" && /^[0-9a-f]{64}$/i.test(r.cert_sha256) ? r.cert_sha256.toLowerCase() : null;
  const tbsSha256 = typeof r.tbs_sha256 === "string" && /^[0-9a-f]{64}$/i.test(r.tbs_sha256) ? r.tbs_sha256.toLowerCase() : null;
  return {
    id: r.id,
    dnsNames,
    issuerFriendlyName: typeof issuer.friendly_name === "string" && issuer.friendly_name !== "" ? nameShown(issuer.friendly_name) : null,
    issuerName: typeof issuer.name === "string" && issuer.name !== "" ? nameShown(issuer.name, 1024) : null,
    notBefore,
    notAfter,
    certSha256,
    tbsSha256,
  };
}

/**
 * Whether a logged name (lower case) is a DNS name: labels of letters, digits, hyphens and underscores,
 * 1-63 characters each, 253 in all, the first possibly `*`. A name with anything else (a space, a line
 * break, a terminal escape) names no host: it is not kept, so no event or notification carries it.
 */
/** A logged name as names are compared: lower case, without the trailing dot of an absolute name. */
export function normalizeDnsName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

export function isDnsName(name: string): boolean {
  return DNS_NAME.test(name);
}

const DNS_NAME = /^(?=.{1,253}$)(?:\*\.)?[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*$/;

/**
 * The O and CN attributes of a distinguished name written as RFC 4514 (and Go's RFC 2253 writer) does:
 * `C=US, O=Example\, Inc., CN=R11`. Attributes are separated by unescaped commas (or semicolons, as
 * some writers use); a backslash escapes the next character, or two hex digits one byte of UTF-8; a
 * value may be a quoted string. Spaces around a value are dropped unless escaped.
 */
export function nameAttributes(dn: string): { o: string[]; cn: string[] } {
  const o: string[] = [];
  const cn: string[] = [];
  for (const [rawType, value] of dnAttributes(dn)) {
    const type = rawType.toUpperCase();
    if (type === "O" || type === "2.5.4.10") o.push(value);
    if (type === "CN" || type === "2.5.4.3") cn.push(value);
  }
  return { o, cn };
}

/** A DN's attributes as [type, value] pairs, values unescaped (see {@link nameAttributes}). */
function dnAttributes(dn: string): Array<[string, string]> {
  const attributes: Array<[string, string]> = [];
  let type = "";
  let inValue = false;
  let quoted = false;
  // The value's characters, each with whether it was written literally (escaped or quoted: kept at the ends).
  let chars: Array<{ text: string; literal: boolean }> = [];
  let bytes: number[] = [];
  const flushBytes = () => {
    if (bytes.length === 0) return;
    chars.push({ text: new TextDecoder().decode(new Uint8Array(bytes)), literal: true });
    bytes = [];
  };
  const end = () => {
    flushBytes();
    if (inValue) {
      let from = 0;
      let to = chars.length;
      while (from < to && !chars[from]!.literal && /\s/.test(chars[from]!.text)) from++;
      while (to > from && !chars[to - 1]!.literal && /\s/.test(chars[to - 1]!.text)) to--;
      attributes.push([type.trim(), chars.slice(from, to).map((c) => c.text).join("")]);
    }
    type = "";
    inValue = false;
    quoted = false;
    chars = [];
  };
  for (let i = 0; i < dn.length; i++) {
    const c = dn[i]!;
    if (!inValue) {
      if (c === "=") inValue = true;
      else if (c === "," || c === ";" || c === "+") type = "";
      else type += c;
      continue;
    }
    if (c === "\\" && i + 1 < dn.length) {
      const hex = /^[0-9a-fA-F]{2}/.exec(dn.slice(i + 1, i + 3));
      if (hex) {
        bytes.push(parseInt(hex[0], 16));
        i += 2;
      } else {
        flushBytes();
        chars.push({ text: dn[i + 1]!, literal: true });
        i += 1;
      }
      continue;
    }
    flushBytes();
    if (quoted) {
      if (c === '"') quoted = false;
      else chars.push({ text: c, literal: true });
      continue;
    }
    if (c === '"' && chars.every((ch) => !ch.literal && /\s/.test(ch.text))) {
      quoted = true;
      chars = [];
      continue;
    }
    // `+` joins the attributes of a multi-valued RDN (RFC 4514 §2.2): `CN=R11+O=Let's Encrypt`.
    if (c === "," || c === ";" || c === "+") {
      end();
      continue;
    }
    chars.push({ text: c, literal: false });
  }
  end();
  return attributes;
}

/** Null without allowed issuers; else whether the issuer's O, CN or friendly name is one of them. */
export function authorizedIssuer(issuance: Issuance, allowedIssuers: string[]): boolean | null {
  if (allowedIssuers.length === 0) return null;
  const allowed = new Set(allowedIssuers.map((name) => name.toLowerCase()));
  const { o, cn } = nameAttributes(issuance.issuerName ?? "");
  const candidates = [...o, ...cn, ...(issuance.issuerFriendlyName ? [issuance.issuerFriendlyName] : [])];
  return candidates.some((name) => allowed.has(name.toLowerCase()));
}

/** What a pending deployment keeps of an issuance (CONTRACT §20). */
export function recordedIssuance(issuance: Issuance): { dnsNames: string[]; notBefore: number; notAfter: number; fingerprintSha256: string | null; issuer: string } {
  return {
    dnsNames: issuance.dnsNames,
    notBefore: issuance.notBefore,
    notAfter: issuance.notAfter,
    fingerprintSha256: issuance.certSha256 ? issuance.certSha256.toUpperCase().match(/../g)!.join(":") : null,
    issuer: issuance.issuerFriendlyName ?? issuance.issuerName ?? "an unknown issuer",
  };
}

/** CONTRACT §15's `certificate.issued` data. */
export function issuedEventData(
  issuance: Issuance,
  watch: { id: string; domain: string; allowedIssuers: string[] },
): Record<string, unknown> {
  return {
    watchId: watch.id,
    domain: watch.domain,
    dnsNames: issuance.dnsNames,
    issuer: issuance.issuerFriendlyName ?? issuance.issuerName,
    notBefore: iso(issuance.notBefore),
    notAfter: iso(issuance.notAfter),
    fingerprintSha256: issuance.certSha256 ? issuance.certSha256.toUpperCase().match(/../g)!.join(":") : null,
    authorizedIssuer: authorizedIssuer(issuance, watch.allowedIssuers),
  };
}

/**
 * The names autoMonitor would add from a currently valid issuance: no wildcards, only the watched
 * domain and names under it (under it only with includeSubdomains).
 */
export function namesToMonitor(issuance: Issuance, watch: { domain: string; includeSubdomains: boolean }, now: number): string[] {
  if (now < issuance.notBefore || now > issuance.notAfter) return [];
  const names = issuance.dnsNames
    .map((name) => name.replace(/\.$/, ""))
    .filter((name) => !name.includes("*"))
    .filter((name) => name === watch.domain || (watch.includeSubdomains && name.endsWith(`.${watch.domain}`)));
  return [...new Set(names)];
}
