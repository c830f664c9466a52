/**
 * Judges a retrieved chain: does a path lead from the leaf, through the certificates the server sent,
 * to a trusted root, and does the leaf name the domain? A sent certificate may act as an issuer only
 * when it is a CA (basicConstraints cA; keyCertSign when key usage is given; serverAuth when extended
 * key usage is given) and valid now, and the leaf must be for TLS servers, as a browser would require. The leaf's own validity period is not judged here: expiry and not-yet-valid
 * are computed when a status is shown.
 */
import { createPublicKey } from "node:crypto";
import { AsnConvert } from "@peculiar/asn1-schema";
import { id_ce_extKeyUsage, id_ce_nameConstraints, NameConstraints, type GeneralSubtree } from "@peculiar/asn1-x509";
import { x509, type Certificate } from "./x509.ts";
import { isUsableSigningKey } from "./public_key.ts";
import type { TrustStore } from "./trust_store.ts";
import { chainCertificate, dnsNames } from "./certificate_parse.ts";
import { sameName } from "./name_match.ts";
import type { ChainCertificate, ChainProblem } from "../base/records.ts";


export interface ChainJudgement {
  problem: ChainProblem | null;
  /**
   * When the trusted path found stops being valid (its earliest-expiring certificate above the leaf,
   * the anchoring root included), in ms; null when nothing above the leaf bounds it (the leaf is itself
   * an anchor). Until then, the same chain gets the same judgement.
   */
  pathValidUntil: number | null;
  /** The certificate above the leaf on the trusted path, anchor included, that expires first; null without one. */
  chainExpiry: ChainCertificate | null;
}

/** Longest path we build; real chains have two or three certificates. */
const MAX_DEPTH = 8;
/**
 * The signatures one judgement may check while it looks for a path (as Go's crypto/x509 bounds its
 * own). A server can send a mesh of CAs that bear one name and sign one another, in which every path
 * is a valid chain of signatures leading nowhere: millions of paths, tried one by one. Past this many
 * checks the chain is untrusted; an honest chain, cross-signed intermediates and all, needs a handful.
 */
const MAX_SIGNATURE_CHECKS = 100;
/**
 * The name-constraint comparisons (a name against a subtree) one CA may cost, as Go's crypto/x509
 * bounds them: a server can send a leaf of thousands of names under a CA of thousands of subtrees
 * (tens of millions of comparisons, seconds of the event loop). Past it the CA issues nothing.
 */
const MAX_CONSTRAINT_COMPARISONS = 250_000;

/**
 * Extensions a browser processes, so that marked critical they do not make a certificate unusable
 * (RFC 5280 §4.2: a certificate with a critical extension the verifier does not recognise MUST be
 * rejected; Chromium consumes exactly these).
 */
const UNDERSTOOD_CRITICAL = new Set([
  "2.5.29.15", // keyUsage
  "2.5.29.17", // subjectAltName
  "2.5.29.19", // basicConstraints
  "2.5.29.30", // nameConstraints
  "2.5.29.32", // certificatePolicies
  "2.5.29.33", // policyMappings
  "2.5.29.36", // policyConstraints
  "2.5.29.37", // extKeyUsage
  "2.5.29.54", // inhibitAnyPolicy
]);

/**
 * The first problem of a chain at `now`, or null when it is trusted and names `domain`. A self-signed
 * leaf that is itself a trusted anchor (an internal root in CERTKEEPER_EXTRA_CA_FILE) counts as trusted.
 */
export async function judgeChain(certs: Certificate[], domain: string, trust: TrustStore, now: number): Promise<ChainJudgement> {
  const leaf = certs[0]!;
  // A leaf whose extended key usage leaves out TLS servers is refused by every browser, whoever signed it.
  const budget = { checks: MAX_SIGNATURE_CHECKS };
  const usable = forServers(leaf) && understood(leaf);
  const path = usable ? await trustedPath(leaf, certs.slice(1), trust, now, 0, { below: 0, names: dnsNames(leaf) }, budget) : undefined;
  if (path === undefined) {
    // Self-signed: its own key verifies its signature (a signature that cannot even be read does not).
    const selfSigned = sameName(leaf.subject, leaf.issuer) && (await signedBy(leaf, leaf));
    // Judged again once a certificate the server sent (or a root it names) becomes valid: time alone
    // can make such a chain trusted.
    return { problem: selfSigned ? "self_signed" : "untrusted_issuer", pathValidUntil: await nextValidFrom(certs, trust, now), chainExpiry: null };
  }
  // Every certificate above the leaf bounds the path, the anchoring root too: once it expires, the
  // chain is judged again (and may then find no path).
  const pathValidUntil = path.length === 0 ? null : Math.min(...path.map(({ cert }) => cert.notAfter.getTime()));
  const earliest = path.reduce<Certificate | null>((first, { cert }) => (!first || cert.notAfter < first.notAfter ? cert : first), null);
  return {
    problem: matchesHostname(dnsNames(leaf), domain) ? null : "hostname_mismatch",
    pathValidUntil,
    chainExpiry: earliest ? chainCertificate(earliest) : null,
  };
}

interface PathStep {
  cert: Certificate;
  /** False for a trusted root from the trust store that the server did not send. */
  sent: boolean;
}

/** What a sent CA must allow to issue `cert`: the CAs between it and the leaf, and the leaf's DNS names. */
interface Below {
  /** CA certificates below it on the path, self-issued ones aside (RFC 5280 §4.2.1.9). */
  below: number;
  names: string[];
}

/**
 * The certificates above `cert` on a trusted path (the sent intermediates, then the anchoring root;
 * empty when `cert` is itself an anchor), or undefined when there is no trusted path. A CA's
 * pathLenConstraint and DNS name constraints hold on the path (RFC 5280 §6.1.4, §4.2.1.10), a
 * trusted root's too.
 */
async function trustedPath(
  cert: Certificate,
  pool: Certificate[],
  trust: TrustStore,
  now: number,
  depth: number,
  below: Below,
  budget: { checks: number },
): Promise<PathStep[] | undefined> {
  if (await trust.isAnchor(cert)) return anchorAllows(cert, below) ? [] : undefined;
  for (const anchor of await trust.anchorsFor(cert)) {
    // An expired (or not yet valid) root anchors nothing, as OpenSSL holds it: another path may.
    if (now < anchor.notBefore.getTime() || now > anchor.notAfter.getTime()) continue;
    if (budget.checks-- <= 0) return undefined;
    if ((await signedBy(cert, anchor)) && anchorAllows(anchor, below)) return [{ cert: anchor, sent: false }];
  }
  if (depth >= MAX_DEPTH) return undefined;
  for (const [index, candidate] of pool.entries()) {
    if (!sameName(candidate.subject, cert.issuer) || !canIssue(candidate, now, below)) continue;
    if (budget.checks-- <= 0) return undefined;
    // The signature first: a CA that did not sign it costs nothing more, however many constraints it lists.
    if (!(await signedBy(cert, candidate)) || !namesAllowed(candidate, below.names)) continue;
    const rest = pool.filter((_, i) => i !== index); // each sent certificate once per path: no loops
    const above = { ...below, below: below.below + (sameName(candidate.subject, candidate.issuer) ? 0 : 1) };
    const further = await trustedPath(candidate, rest, trust, now, depth + 1, above, budget);
    if (further !== undefined) return [{ cert: candidate, sent: true }, ...further];
  }
  return undefined;
}

/**
 * A trusted root's own pathLenConstraint and DNS name constraints hold on the paths it anchors, as
 * OpenSSL, Go and Chromium hold them: an internal root constrained to its own names vouches for
 * nothing else (RFC 5280 leaves it to the verifier; the constraints are why such a root is made).
 */
function anchorAllows(anchor: Certificate, below: Below): boolean {
  const basic = anchor.getExtension(x509.BasicConstraintsExtension);
  if (basic?.ca && basic.pathLength !== undefined && below.below > basic.pathLength) return false;
  return namesAllowed(anchor, below.names);
}

/**
 * A CA certificate, allowed to sign certificates, within its validity period, whose path length allows
 * what is below it, with no critical extension a browser would not understand. (Its DNS name
 * constraints are judged once its signature is: {@link namesAllowed}.)
 */
function canIssue(cert: Certificate, now: number, below: Below): boolean {
  if (now < cert.notBefore.getTime() || now > cert.notAfter.getTime()) return false;
  const basic = cert.getExtension(x509.BasicConstraintsExtension);
  if (!basic?.ca) return false;
  if (basic.pathLength !== undefined && below.below > basic.pathLength) return false;
  const keyUsage = cert.getExtension(x509.KeyUsagesExtension);
  if (keyUsage && (keyUsage.usages & x509.KeyUsageFlags.keyCertSign) === 0) return false;
  return forServers(cert) && understood(cert);
}

/**
 * Whether every critical extension of `cert` is one browsers process ({@link UNDERSTOOD_CRITICAL});
 * Microsoft's application policies (which Active Directory Certificate Services writes, often
 * critical) count as processed beside an extended key usage, as Chromium takes them.
 */
function understood(cert: Certificate): boolean {
  const hasUsages = cert.extensions.some((ext) => ext.type === id_ce_extKeyUsage);
  return cert.extensions.every((ext) => !ext.critical || UNDERSTOOD_CRITICAL.has(ext.type) || (hasUsages && ext.type === MS_APPLICATION_POLICIES));
}

const MS_APPLICATION_POLICIES = "1.3.6.1.4.1.311.21.10";

/**
 * When an untrusted chain may next be judged otherwise by time alone: the earliest notBefore still to
 * come among the certificates the server sent above the leaf and the roots they name; null when none
 * is in the future.
 */
async function nextValidFrom(certs: Certificate[], trust: TrustStore, now: number): Promise<number | null> {
  let next = Infinity;
  for (const cert of certs) {
    if (cert !== certs[0] && cert.notBefore.getTime() > now) next = Math.min(next, cert.notBefore.getTime());
    for (const anchor of await trust.anchorsFor(cert)) if (anchor.notBefore.getTime() > now) next = Math.min(next, anchor.notBefore.getTime());
  }
  return next === Infinity ? null : next;
}

const SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
const ANY_EXTENDED_KEY_USAGE = "2.5.29.37.0";

/**
 * Whether a certificate may serve, or issue for, TLS servers by its extended key usage (RFC 5280
 * §4.2.1.12): without the extension, any use; with it, only when it names serverAuth or any usage. A
 * sent CA's usages bound what it issues, as browsers hold them (CA/Browser Forum Baseline Requirements
 * §7.1.2); an extension that cannot be read allows nothing.
 */
function forServers(cert: Certificate): boolean {
  if (!cert.extensions.some((ext) => ext.type === id_ce_extKeyUsage)) return true;
  try {
    const usages = cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [];
    return usages.some((usage) => usage === SERVER_AUTH || usage === ANY_EXTENDED_KEY_USAGE);
  } catch {
    return false;
  }
}

/**
 * Whether a CA's name constraints (RFC 5280 §4.2.1.10) allow every DNS name: each within a permitted
 * dNSName subtree when there are any, and none within an excluded one. A name is within `example.com`
 * when it is that name or one below it, within `.example.com` when it is below it; a wildcard name is
 * also refused by an excluded name it could stand for. Constraints that cannot be read allow nothing.
 */
function namesAllowed(cert: Certificate, names: string[]): boolean {
  const extension = cert.extensions.find((ext) => ext.type === id_ce_nameConstraints);
  if (!extension) return true;
  let constraints: NameConstraints;
  try {
    constraints = AsnConvert.parse(extension.value, NameConstraints);
  } catch {
    return false;
  }
  const dns = (subtrees: GeneralSubtree[] | undefined) =>
    (subtrees ?? []).map((subtree) => subtree.base.dNSName).filter((name): name is string => name !== undefined).map((name) => name.toLowerCase());
  const permitted = dns(constraints.permittedSubtrees);
  const excluded = dns(constraints.excludedSubtrees);
  if (names.length * (permitted.length + excluded.length) > MAX_CONSTRAINT_COMPARISONS) return false;
  const within = (name: string, subtree: string) =>
    subtree === "" || (subtree.startsWith(".") ? name.endsWith(subtree) : name === subtree || name.endsWith(`.${subtree}`));
  // A wildcard stands for any one label (RFC 6125): `*.example.com` names secret.example.com too, so an
  // excluded `secret.example.com` refuses it, as browsers judge it (Chromium matches wildcards against
  // excluded subtrees partially); RFC 5280 leaves wildcards unsaid.
  const mayName = (name: string, subtree: string) =>
    name.startsWith("*.") && !subtree.startsWith(".") && subtree.indexOf(".") > 0 && subtree.slice(subtree.indexOf(".")) === name.slice(1);
  return names.every((raw) => {
    const name = raw.toLowerCase().replace(/\.$/, "");
    if (permitted.length > 0 && !permitted.some((subtree) => within(name, subtree))) return false;
    return !excluded.some((subtree) => within(name, subtree) || mayName(name, subtree));
  });
}

/**
 * Whether `issuer`'s key signed `cert`, asked of WebCrypto once per pair of parsed certificates: a
 * chain parsed once for many names (see core/monitor's recent chains) is verified once for all of them.
 */
export function signedBy(cert: Certificate, issuer: Certificate): Promise<boolean> {
  let verdicts = signatures.get(cert);
  if (!verdicts) signatures.set(cert, (verdicts = new WeakMap()));
  let verdict = verdicts.get(issuer);
  if (!verdict) {
    // An algorithm WebCrypto cannot verify proves nothing; nor does a key no CA uses, which a server
    // can send to make each check cost tens of milliseconds (see usableKey).
    verdict = usableKey(issuer) ? (async () => cert.verify({ publicKey: issuer.publicKey, signatureOnly: true }))().catch(() => false) : Promise.resolve(false);
    verdicts.set(issuer, verdict);
  }
  return verdict;
}

const signatures = new WeakMap<Certificate, WeakMap<Certificate, Promise<boolean>>>();

/** Whether `issuer`'s key is one a signature is checked under ({@link isUsableSigningKey}), read once per certificate. */
function usableKey(issuer: Certificate): boolean {
  let usable = usableKeys.get(issuer);
  if (usable === undefined) {
    try {
      usable = isUsableSigningKey(createPublicKey({ key: Buffer.from(issuer.publicKey.rawData), format: "der", type: "spki" }));
    } catch {
      usable = true; // a key node:crypto cannot read is left to WebCrypto, which proves nothing with it either
    }
    usableKeys.set(issuer, usable);
  }
  return usable;
}

const usableKeys = new WeakMap<Certificate, boolean>();

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
