/**
 * CONTRACT §5's domain rules: lower-cased, one trailing dot removed, internationalized names in their
 * ASCII (punycode) form; two or more labels of 1–63 `a-z 0-9 -` not starting or ending with `-`, at
 * most 253 characters, the last label not all digits.
 */
import { isIP } from "node:net";
import { domainToASCII, domainToUnicode } from "node:url";
import { CertkeeperError, quote } from "../base/errors.ts";

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The normalized domain, or throws `invalid_domain` saying what to do instead. */
export function normalizeDomain(input: unknown): string {
  if (input === undefined || input === null) {
    throw invalid("Field \"domain\" is required: give the host name to monitor, such as \"example.com\".");
  }
  if (typeof input !== "string") {
    throw invalid(`Field "domain" must be a string such as "example.com"; got ${quote(input)}.`);
  }
  const why = reasonInvalid(input);
  if (why) throw invalid(`Domain ${quote(input)} is not a valid domain: ${why}.`);
  return toAscii(input)!;
}

function invalid(message: string): CertkeeperError {
  return new CertkeeperError("invalid_domain", message);
}

function reasonInvalid(input: string): string | null {
  if (input === "") return "it is empty; give a host name such as \"example.com\"";
  if (/\s/.test(input)) return "it contains spaces";
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input) || input.includes("/")) {
    return "give the host name alone, without a scheme or path (\"example.com\", not \"https://example.com/\")";
  }
  if (isIP(input.replace(/^\[|\]$/g, "")) !== 0) return "IP addresses cannot be monitored by name; give a host name";
  if (input.includes(":")) return "give the port in the port field, not in the domain";
  if (input.includes("*")) return "wildcards cannot be monitored; give one concrete host name";
  if (input.includes("@")) return "give the host name alone, without user information";
  // URL and IDNA processing would decode "%6d" or drop a "\\" and what follows: the name must be as it is.
  const strange = [...input.toLowerCase()].find((c) => c < "\u0080" && !/[a-z0-9.-]/.test(c));
  if (strange !== undefined) return `character ${quote(strange)} is not allowed: a host name has only letters, digits, hyphens and dots`;
  const written = asWritten(input);
  if ("why" in written) return written.why;
  const { ascii } = written;
  if (ascii.length > 253) return "it is longer than 253 characters";
  const labels = ascii.split(".");
  if (labels.length < 2) {
    return (
      "give a fully qualified name with at least two labels, such as \"example.com\"" +
      (ascii === "localhost" ? " (a server on this machine: name it with CERTKEEPER_RESOLVE, such as app.internal=127.0.0.1, and monitor that name)" : "")
    );
  }
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) {
    return bad === ""
      ? "it has an empty label (two dots in a row, or a leading dot)"
      : `label ${quote(bad)} must be 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen`;
  }
  if (/^\d+$/.test(labels.at(-1)!)) return "the last label cannot be all digits";
  return null;
}

/**
 * The ASCII (punycode) form of a name, when it names what the caller wrote, up to case and Unicode
 * normalization (NFC): IDNA maps full-width letters to ASCII, drops soft hyphens and zero-width
 * characters, turns "。" into a dot, reads the Kelvin sign as "k" and the long s as "s". Such a name
 * would be stored as another one than given, so it is refused, with why. Each label is compared on
 * its own: one may be written in its ASCII form (`xn--…`) beside others in Unicode.
 */
function asWritten(input: string): { ascii: string } | { why: string } {
  const changed = "it contains characters that name processing would change into others (full-width letters, invisible characters, other dots): write the name as it is";
  // A character that case or normalization would turn into an ASCII one (the Kelvin sign is "k"):
  // not the name as written, though IDNA would take it.
  if ([...input].some((c) => c >= "\u0080" && /^[\x00-\x7f]+$/.test(lowerEach(c.normalize("NFC"))))) return { why: changed };
  const ascii = toAscii(input);
  if (!ascii) return { why: "it is not a valid host name" };
  const given = lowerEach(input.normalize("NFC")).replace(/\.$/, "").split(".");
  const stored = ascii.split(".");
  if (given.length !== stored.length) return { why: changed };
  const same = given.every((label, i) => label === stored[i] || label === domainToUnicode(stored[i]!));
  return same ? { ascii } : { why: changed };
}

/** Lower case, a character at a time: a Σ is a σ wherever it stands, as IDNA maps it (no final ς). */
function lowerEach(text: string): string {
  return /^[\x00-\x7f]*$/.test(text) ? text.toLowerCase() : [...text].map((c) => c.toLowerCase()).join("");
}

function toAscii(input: string): string | null {
  const name = lowerEach(input).replace(/\.$/, "");
  if (/^[a-z0-9.-]*$/.test(name)) return name;
  // IDNA maps case itself (UTS #46): Σ to σ, never to a final ς as JavaScript's lower case would.
  const ascii = domainToASCII(input.replace(/\.$/, ""));
  return ascii === "" ? null : ascii;
}

/**
 * A list filter's text as stored names are written: a name (or part of one) typed in Unicode searches
 * their ASCII form; what cannot be converted is searched as typed (and finds nothing stored).
 */
export function searchableDomain(text: string): string {
  const lower = lowerEach(text);
  if (/^[\x00-\x7f]*$/.test(lower)) return lower;
  const ascii = domainToASCII(text);
  return ascii === "" ? lower : ascii;
}

/**
 * CONTRACT §11's `connectTo`: an IPv4 or IPv6 literal (brackets allowed, stored without them, IPv6 in
 * its canonical form) or a host name by the domain rules (a single label such as `localhost` too).
 * Null and absent mean "the domain". Anything else is `invalid_request`.
 */
export function normalizeConnectTo(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  const refuse = (why: string) =>
    new CertkeeperError("invalid_request", `Field "connectTo" ${why}: give a host name or an IP address such as "203.0.113.10".`);
  if (typeof input !== "string") throw refuse(`must be a string; got ${quote(input)}`);
  const bare = input.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(bare);
  if (family === 4) return bare;
  // A zone index (`fe80::1%eth0`) names an interface of this host, not a server: refused like a port.
  if (family === 6 && !bare.includes("%")) return canonicalIpv6(bare);
  if (input === "" || /[\s/:@*%]/.test(input)) throw refuse(`value ${quote(input)} is not a host name or an IP address`);
  // Taken as written, as a domain is: a name IDNA would turn into another is refused, not rewritten.
  const written = asWritten(input);
  if ("why" in written) throw refuse(`value ${quote(input)} is not a host name as written (${written.why.replace(/: write the name as it is$/, "")})`);
  const { ascii } = written;
  const labels = ascii.split(".");
  if (ascii.length > 253 || labels.some((label) => !LABEL.test(label)) || /^\d+$/.test(labels.at(-1)!)) {
    throw refuse(`value ${quote(input)} is not a host name or an IP address`);
  }
  return ascii;
}

function canonicalIpv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.replace(/^\[|\]$/g, "");
}

/**
 * CONTRACT §22's `mailDomain`: a domain by §5's rules, returned in its ASCII form; null and absent
 * mean "the default". Anything else is `invalid_request` naming the field.
 */
export function normalizeMailDomain(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  if (typeof input !== "string") throw new CertkeeperError("invalid_request", `Field "mailDomain" must be a string such as "example.com"; got ${quote(input)}.`);
  const why = reasonInvalid(input);
  if (why) throw new CertkeeperError("invalid_request", `Field "mailDomain" value ${quote(input)} is not a valid domain: ${why}.`);
  return toAscii(input)!;
}

/** The mail domain an `smtp` certificate's MTA-STS policy is read for, by default (CONTRACT §22): `mx1.example.com` → `example.com`; a two-label domain is its own mail domain. */
export function defaultMailDomain(domain: string): string {
  const labels = domain.split(".");
  return labels.length > 2 ? labels.slice(1).join(".") : domain;
}
