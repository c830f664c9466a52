/**
 * Judges a retrieved chain: does a path lead from the leaf, through the certificates the server sent,
 * to a trusted root, and does the leaf name the domain? Validity periods are not judged here: expiry
 * and not-yet-valid depend on the time of asking and are computed when a status is shown.
 */
import type { Certificate } from "./x509.ts";
import type { TrustStore } from "./trust_store.ts";
import { dnsNames } from "./certificate_parse.ts";

/** What makes a retrieved certificate invalid, beyond its validity period. */
export type ChainProblem = "self_signed" | "untrusted_issuer" | "hostname_mismatch";

/** Longest path we build; real chains have two or three certificates. */
const MAX_DEPTH = 8;

/**
 * The first problem of a chain, or null when it is trusted and names `domain`. A self-signed leaf
 * that is itself a trusted anchor (an internal root in CERTKEEPER_EXTRA_CA_FILE) counts as trusted.
 */
export async function chainProblem(certs: Certificate[], domain: string, trust: TrustStore): Promise<ChainProblem | null> {
  const leaf = certs[0]!;
  if (!(await isTrusted(leaf, certs.slice(1), trust, 0))) {
    return (await leaf.isSelfSigned()) ? "self_signed" : "untrusted_issuer";
  }
  return matchesHostname(dnsNames(leaf), domain) ? null : "hostname_mismatch";
}

async function isTrusted(cert: Certificate, pool: Certificate[], trust: TrustStore, depth: number): Promise<boolean> {
  if (await trust.isAnchor(cert)) return true;
  for (const anchor of trust.anchorsNamed(cert.issuer)) {
    if (await signedBy(cert, anchor)) return true;
  }
  if (depth >= MAX_DEPTH) return false;
  for (const [index, candidate] of pool.entries()) {
    if (candidate.subject !== cert.issuer || !(await signedBy(cert, candidate))) continue;
    const rest = pool.filter((_, i) => i !== index); // each sent certificate once per path: no loops
    if (await isTrusted(candidate, rest, trust, depth + 1)) return true;
  }
  return false;
}

async function signedBy(cert: Certificate, issuer: Certificate): Promise<boolean> {
  try {
    return await cert.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  } catch {
    return false; // an algorithm WebCrypto cannot verify proves nothing
  }
}

/**
 * RFC 6125 matching against the SAN DNS names only, as browsers do (no common-name fallback): a
 * wildcard stands for exactly one whole left-most label.
 */
export function matchesHostname(names: string[], domain: string): boolean {
  const host = domain.toLowerCase();
  return names.some((raw) => {
    const name = raw.toLowerCase().replace(/\.$/, "");
    if (!name.startsWith("*.")) return name === host;
    const dot = host.indexOf(".");
    return dot > 0 && host.slice(dot) === name.slice(1) && name.split(".").length > 2;
  });
}
