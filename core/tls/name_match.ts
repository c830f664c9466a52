/** Distinguished names compared for chaining a certificate to its issuer (RFC 5280 §7.1). */

/**
 * Whether two distinguished names (as rendered) are the same name for chaining: compared as RFC 4518
 * prepares them for matching, without regard to case or to runs of spaces (as OpenSSL's canonical
 * names are). The names only choose which certificates to try; a signature decides.
 */
export function sameName(a: string, b: string): boolean {
  return a === b || dnKey(a) === dnKey(b);
}

/** {@link sameName}'s form of a rendered name: lower case, each run of white space one space. */
export function dnKey(name: string): string {
  return name.toLowerCase().replace(/\s+/g, " ").trim();
}
