/**
 * DANE for SMTP (RFC 7672, RFC 6698): the TLSA records of a mail server, and whether the chain it
 * serves matches one of them. Usages 2 (DANE-TA) and 3 (DANE-EE) are the ones SMTP uses; usages 0
 * and 1 (PKIX-TA, PKIX-EE) are unusable for SMTP (RFC 7672 §3.1.3) and, like unknown selectors and
 * matching types, ignored.
 */
import { createHash, createPublicKey, X509Certificate, type KeyObject } from "node:crypto";
import type * as dnsPacket from "dns-packet";
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate as AsnCertificate } from "@peculiar/asn1-x509";
import type { DaneVerdict, DnsFindings, TlsaRecord } from "../base/records.ts";
import type { Deadline } from "../net/deadline.ts";
import { matchesHostname } from "../tls/chain_verify.ts";
import { isUsableSigningKey } from "../tls/public_key.ts";
import type { DnsClient } from "./dns_client.ts";

export type TlsaFinding = NonNullable<DnsFindings["tlsa"]>;

/** A chain longer than a server sends is not walked further. */
const MAX_PATH = 8;

/**
 * The TLSA records of `_<port>._tcp.<domain>` (RFC 7672 §2.2.3). When the host name is an alias
 * whose expansion DNSSEC validated, the records at the expanded name come first, then those at the
 * name itself; an alias not validated is not followed (its target could be anyone's).
 */
export async function lookupTlsa(client: DnsClient, domain: string, port: number, limit: Deadline): Promise<TlsaFinding> {
  const alias = await client.expandAlias(domain, limit);
  const bases = alias.target !== domain && alias.authenticated ? [alias.target, domain] : [domain];
  let last: TlsaFinding | undefined;
  for (const base of bases) {
    const name = `_${port}._tcp.${base}`;
    const set = await client.lookup<dnsPacket.TlsaData>(name, "TLSA", limit);
    last = { name, validated: set.authenticated && (base === domain || alias.authenticated), records: set.records.map(tlsaRecord) };
    if (last.records.length > 0) return last;
  }
  return last!;
}

function tlsaRecord(data: dnsPacket.TlsaData): TlsaRecord {
  return {
    usage: Number(data.usage),
    selector: Number(data.selector),
    matchingType: Number(data.matchingType),
    data: Buffer.from(data.certificate ?? []).toString("hex"),
  };
}

/** Usages, selectors and matching types SMTP senders use (RFC 7672 §3.1). */
export function usableTlsa(record: TlsaRecord): boolean {
  return (record.usage === 2 || record.usage === 3) && (record.selector === 0 || record.selector === 1) && DIGEST_HEX_LENGTH[record.matchingType]?.(record.data.length) === true;
}

/**
 * What length of data in hex each matching type may hold: anything for the whole selection (0), a
 * SHA-256 (1) or SHA-512 (2) digest exactly. A digest of another length matches nothing, ever: the
 * record is unusable (as OpenSSL's DANE, which Postfix and Exim use, takes it), not a mismatch.
 */
const DIGEST_HEX_LENGTH: Record<number, (length: number) => boolean> = { 0: (length) => length > 0, 1: (length) => length === 64, 2: (length) => length === 128 };

export interface ServedChain {
  /** DER certificates as the server sent them, leaf first. */
  ders: readonly Uint8Array[];
  /** The names the leaf must carry for DANE-TA (RFC 7672 §3.2.3): the host name, and the TLSA base when it is another. */
  referenceNames: readonly string[];
  /** The leaf's SAN DNS names. */
  leafNames: readonly string[];
}

/**
 * `match` when a usable record matches: DANE-EE the leaf itself (its validity and names are not
 * judged, RFC 7672 §3.1.1); DANE-TA a certificate the server sent above the leaf, the leaf chaining
 * to it by signatures and naming the host (§3.1.2), or, for a "2 1 0" record (the anchor's whole
 * key) or a "2 0 0" one (its whole certificate), a certificate on that path signed under that key
 * (issued by that certificate), the anchor itself not sent (RFC 7671 §5.2.2). `none` when no record
 * is usable.
 */
export function daneVerdict(finding: TlsaFinding, chain: ServedChain, signatures: SignatureBudget = new SignatureBudget()): DaneVerdict {
  const usable = finding.records.filter(usableTlsa);
  const validated = finding.validated;
  if (usable.length === 0) return { status: "none", validated };
  let certs: X509Certificate[];
  try {
    certs = chain.ders.map((der) => new X509Certificate(Buffer.from(der)));
  } catch {
    return { status: "mismatch", validated };
  }
  const leaf = certs[0]!;
  // A certificate whose key this runtime cannot read (Ed448, brainpool, RSA-PSS, …) matches nothing
  // and is passed over (RFC 7671 §5.2: unusable elements are skipped), never a failed check.
  // Each certificate's selected part hashed once per selector and matching type, whatever the number of
  // records asking for it (a zone can publish hundreds).
  const digests = new Map<string, string | null>();
  const matches = (record: TlsaRecord, cert: X509Certificate) => {
    const key = `${certs.indexOf(cert)} ${record.selector} ${record.matchingType}`;
    let value = digests.get(key);
    if (value === undefined) {
      try {
        value = digest(record, cert);
      } catch {
        value = null;
      }
      digests.set(key, value);
    }
    return value === record.data;
  };
  let path: X509Certificate[] | undefined;
  const namesHost = chain.referenceNames.some((name) => matchesHostname([...chain.leafNames], name));
  const triedKeys = new Set<string>();
  for (const record of usable) {
    if (record.usage === 3 && matches(record, leaf)) return { status: "match", validated };
    if (record.usage === 2 && namesHost) {
      path ??= signaturePath(leaf, certs, signatures);
      if (path.slice(1).some((cert) => matches(record, cert))) return { status: "match", validated };
      // "2 1 0" carries the anchor's whole key, so the server need not send the anchor (RFC 7671,
      // section 5.2.2): the leaf, or a sent certificate it chains to, signed under that key matches.
      if (record.selector === 1 && record.matchingType === 0 && !triedKeys.has(record.data)) {
        triedKeys.add(record.data);
        if (signedUnderKey(path, record.data, signatures)) return { status: "match", validated };
      }
      // "2 0 0" carries the anchor's whole certificate: likewise, a certificate on the path it issued.
      if (record.selector === 0 && record.matchingType === 0 && !triedKeys.has(record.data)) {
        triedKeys.add(record.data);
        if (issuedByCertificate(path, record.data, signatures)) return { status: "match", validated };
      }
    }
  }
  return { status: "mismatch", validated };
}

/** The selected part of `cert` hashed by the record's matching type, in lower-case hex. */
function digest(record: TlsaRecord, cert: X509Certificate): string {
  const selected = record.selector === 0 ? cert.raw : spkiOf(cert);
  if (record.matchingType === 0) return Buffer.from(selected).toString("hex");
  return createHash(record.matchingType === 1 ? "sha256" : "sha512").update(selected).digest("hex");
}

const spkis = new WeakMap<X509Certificate, Uint8Array>();

/**
 * The SubjectPublicKeyInfo exactly as the certificate encodes it (RFC 6698, selector 1): the key's
 * export by the platform is not it (an EC point published compressed comes back uncompressed, and a
 * record computed over the certificate's bytes, as every DANE tool does, would never match).
 */
function spkiOf(cert: X509Certificate): Uint8Array {
  let spki = spkis.get(cert);
  if (!spki) {
    spki = new Uint8Array(AsnConvert.serialize(AsnConvert.parse(cert.raw, AsnCertificate).tbsCertificate.subjectPublicKeyInfo));
    spkis.set(cert, spki);
  }
  return spki;
}

/**
 * The signatures one verdict may verify, and the keys it verifies with. A judgement runs on the event
 * loop at every check of every endpoint, and a server and its zone are the monitored party's: a chain
 * of certificates that all name the leaf's issuer, each with a huge key, and hundreds of TLSA records
 * would otherwise cost seconds of signature checks. Beyond this many, or with an RSA key larger than
 * any CA uses, a signature is taken as not verifying: nothing honest comes near either bound.
 */
/** The signatures DANE judgement of one chain may check: a zone of many keys costs a bounded few. */
export class SignatureBudget {
  static readonly MAX_VERIFICATIONS = 32;
  #left = SignatureBudget.MAX_VERIFICATIONS;

  /** Whether `cert` is signed under `key` (false once the budget is spent, or for an oversized key). */
  verifies(cert: X509Certificate, key: KeyObject): boolean {
    if (!isUsableSigningKey(key)) return false;
    if (this.#left <= 0) return false;
    this.#left--;
    try {
      return cert.verify(key);
    } catch {
      return false;
    }
  }
}

/**
 * The path of signatures from `leaf` through the sent certificates, leaf first: at each step the first
 * unused sent certificate that names the current one's issuer and whose key signed it.
 */
function signaturePath(leaf: X509Certificate, sent: X509Certificate[], signatures: SignatureBudget): X509Certificate[] {
  const path = [leaf];
  const used = new Set<X509Certificate>([leaf]);
  let current = leaf;
  for (let depth = 0; depth < MAX_PATH; depth++) {
    const issuer = sent.find((cert) => !used.has(cert) && signs(cert, current, signatures));
    if (!issuer) break;
    path.push(issuer);
    used.add(issuer);
    current = issuer;
  }
  return path;
}

/** Whether a certificate of `path` (the leaf or one it chains to) is signed under the SubjectPublicKeyInfo `spkiHex`. */
function signedUnderKey(path: X509Certificate[], spkiHex: string, signatures: SignatureBudget): boolean {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(spkiHex, "hex"), format: "der", type: "spki" });
  } catch {
    // A key this runtime cannot read is passed over (RFC 7671 §5.2), like a certificate's.
    return false;
  }
  return path.some((cert) => verifiesUnder(cert, key, signatures));
}

/** Whether a certificate of `path` was issued (named and signed) by the DER certificate `derHex`, not itself. */
function issuedByCertificate(path: X509Certificate[], derHex: string, signatures: SignatureBudget): boolean {
  let anchor: X509Certificate;
  try {
    anchor = new X509Certificate(Buffer.from(derHex, "hex"));
  } catch {
    // Data that is no certificate (or one this runtime cannot read) is passed over (RFC 7671 §5.2).
    return false;
  }
  return path.some((cert) => {
    try {
      return !cert.publicKey.equals(anchor.publicKey) && signs(anchor, cert, signatures);
    } catch {
      return false;
    }
  });
}

/** Signed under `key` by another: a certificate of that key itself (a self-signed leaf) is no path to an anchor. */
function verifiesUnder(cert: X509Certificate, key: KeyObject, signatures: SignatureBudget): boolean {
  try {
    return !cert.publicKey.equals(key) && signatures.verifies(cert, key);
  } catch {
    return false;
  }
}

function signs(issuer: X509Certificate, cert: X509Certificate, signatures: SignatureBudget): boolean {
  try {
    return cert.checkIssued(issuer) && signatures.verifies(cert, issuer.publicKey);
  } catch {
    return false;
  }
}
