/**
 * CRLs (RFC 5280 §5): verified as signed by the certificate's issuer, about that issuer, and current,
 * then searched for the certificate's serial. A verified CRL is kept in a small form (its revoked
 * serials) so the many certificates of one CA share one download per nextUpdate.
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { CertificateList, id_ce_cRLNumber, id_ce_authorityKeyIdentifier, id_ce_deltaCRLIndicator, id_ce_issuingDistributionPoint, IssuingDistributionPoint, type Extension } from "@peculiar/asn1-x509";
import { x509, type Certificate } from "../tls/x509.ts";
import { sameName } from "../tls/mod.ts";
import { bytesEqual, derHeader, DerError, oidText, readTime, readTlv, type Tlv } from "../base/der.ts";
import { TimeSlice } from "../base/turns.ts";
import { serialBytes, serialOf } from "./_issuer_id.ts";
import { signatureVerifies } from "./_signature.ts";
import { assertCurrent, reasonName, RevocationFailure, validUntil, type RevocationAnswer } from "./revocation_answer.ts";

/** A CRL verified against one issuer: what is needed to answer for any serial of that issuer. */
export interface VerifiedCrl {
  issuerName: string;
  thisUpdate: number;
  nextUpdate: number | undefined;
  /** Revoked serials (normalized hex) with when and why. */
  revoked: Map<string, { revokedAt: number; reason: string | null }>;
}

/** The CRL extensions read here; any other marked critical makes the CRL unusable (RFC 5280 §5.2). */
const KNOWN_CRL_EXTENSIONS = new Set([id_ce_cRLNumber, id_ce_authorityKeyIdentifier, id_ce_issuingDistributionPoint]);
/** reasonCode removeFromCRL (RFC 5280 §5.3.1): only a delta CRL carries it, and it does not mean revoked. */
const REMOVE_FROM_CRL = 8;

/**
 * Reads and verifies a DER CRL issued by `issuer` (whose key usage, when given, must allow cRLSign),
 * fetched from `url` (when given). Throws
 * {@link RevocationFailure} otherwise, and for a CRL that cannot say whether a leaf is revoked: a
 * delta CRL, one with a critical extension not read here, or one whose issuing distribution point
 * limits it to CA or attribute certificates, some reasons, another distribution point, or entries of
 * other issuers (RFC 5280 §5.2, §6.3.3).
 */
export async function readCrl(der: Uint8Array, options: { issuer: Certificate; now: number; url?: string }): Promise<VerifiedCrl> {
  const { issuer, now } = options;
  let crl: CertificateList;
  let issuerName: string;
  let parts: CrlParts;
  try {
    parts = crlParts(der);
    crl = AsnConvert.parse(parts.shell, CertificateList);
    issuerName = new x509.Name(AsnConvert.serialize(crl.tbsCertList.issuer)).toString();
  } catch {
    throw new RevocationFailure("the CRL is not a DER certificate revocation list");
  }
  if (!sameName(issuerName, issuer.subject)) throw new RevocationFailure("the CRL is about another issuer");
  const keyUsage = issuer.getExtension(x509.KeyUsagesExtension);
  if (keyUsage && (keyUsage.usages & x509.KeyUsageFlags.cRLSign) === 0) {
    throw new RevocationFailure("the CRL's issuer may not sign CRLs (its key usage leaves out cRLSign)");
  }
  if (!signatureVerifies(new Uint8Array(parts.tbs).buffer, crl.signature, crl.signatureAlgorithm.algorithm, issuer)) {
    throw new RevocationFailure("the CRL's signature does not verify with the issuer's key");
  }
  const thisUpdate = crl.tbsCertList.thisUpdate.getTime().getTime();
  const nextUpdate = crl.tbsCertList.nextUpdate?.getTime().getTime();
  assertCurrent("CRL", thisUpdate, nextUpdate, now);
  checkScope(crl.tbsCertList.crlExtensions ?? [], options.url);
  return { issuerName, thisUpdate, nextUpdate, revoked: parts.entries ? await revokedEntries(der, parts.entries) : new Map() };
}

/** A CRL split for reading: its TBSCertList as signed, the list without its entries, and where they are. */
interface CrlParts {
  tbs: Uint8Array;
  /** The CertificateList with an empty list of revoked certificates: the ASN.1 library reads it whole. */
  shell: Uint8Array;
  /** The revokedCertificates element, read entry by entry by {@link revokedEntries}. */
  entries: Tlv | null;
}

/**
 * The parts of a DER CRL. Its entries are read with the DER reader rather than the ASN.1 library,
 * which builds objects of ten nodes an entry and refuses more than 10,000 nodes (a CRL of some 3,300
 * entries: a large CA's, or a shard of Let's Encrypt's, is larger); throws DerError on what is no CRL.
 */
function crlParts(der: Uint8Array): CrlParts {
  const list = readTlv(der, 0, der.length);
  if (list.tag !== 0x30 || list.end !== der.length) throw new DerError("not a sequence");
  const tbs = readTlv(der, list.valueStart, list.end);
  if (tbs.tag !== 0x30) throw new DerError("no TBSCertList");
  // version?, signature, issuer, thisUpdate, nextUpdate?, revokedCertificates?, [0] crlExtensions?
  let at = tbs.valueStart;
  let entries: Tlv | null = null;
  for (let index = 0; at < tbs.end; index++) {
    const element = readTlv(der, at, tbs.end);
    // The first SEQUENCE after the times (the signature algorithm and the issuer are the first two).
    if (element.tag === 0x30 && index >= 3 && entries === null) {
      entries = element;
      break;
    }
    at = element.end;
  }
  const tbsBytes = der.subarray(tbs.start, tbs.end);
  if (!entries) return { tbs: tbsBytes, shell: new Uint8Array(der), entries: null };
  const tbsContent = Buffer.concat([der.subarray(tbs.valueStart, entries.start), derHeader(0x30, 0), der.subarray(entries.end, tbs.end)]);
  const shellTbs = Buffer.concat([derHeader(0x30, tbsContent.length), tbsContent]);
  const rest = der.subarray(tbs.end, list.end);
  // Its own bytes (a small Buffer.concat shares a pool the parser must not read past).
  const shell = new Uint8Array(Buffer.concat([derHeader(0x30, shellTbs.length + rest.length), shellTbs, rest]));
  return { tbs: tbsBytes, shell, entries };
}

const OID_REASON_CODE = Uint8Array.of(0x55, 0x1d, 0x15);
const OID_INVALIDITY_DATE = Uint8Array.of(0x55, 0x1d, 0x18);

/**
 * The revoked serials of a CRL's revokedCertificates (RFC 5280 §5.1.2.6, §5.3), removeFromCRL left
 * out; read a few milliseconds at a time (20 MiB of CRL is hundreds of thousands of entries, about a
 * second of reading), the event loop serving a turn between.
 */
async function revokedEntries(der: Uint8Array, list: Tlv): Promise<VerifiedCrl["revoked"]> {
  const revoked: VerifiedCrl["revoked"] = new Map();
  const slice = new TimeSlice();
  try {
    for (let at = list.valueStart, read = 0; at < list.end; read++) {
      if (read % 256 === 255) await slice.pause();
      const entry = readTlv(der, at, list.end);
      at = entry.end;
      const serial = readTlv(der, entry.valueStart, entry.end);
      const date = readTlv(der, serial.end, entry.end);
      if (entry.tag !== 0x30 || serial.tag !== 0x02) throw new DerError("not a revoked certificate");
      let reason: number | undefined;
      if (date.end < entry.end) {
        const extensions = readTlv(der, date.end, entry.end);
        for (let inner = extensions.valueStart; inner < extensions.end; ) {
          const extension = readTlv(der, inner, extensions.end);
          inner = extension.end;
          const oid = readTlv(der, extension.valueStart, extension.end);
          let value = readTlv(der, oid.end, extension.end);
          const critical = value.tag === 0x01 && der[value.valueStart] !== 0;
          if (value.tag === 0x01) value = readTlv(der, value.end, extension.end);
          const isReason = bytesEqual(der, oid.valueStart, oid.end, OID_REASON_CODE);
          if (critical && !isReason && !bytesEqual(der, oid.valueStart, oid.end, OID_INVALIDITY_DATE)) {
            throw new RevocationFailure(`the CRL has an entry with a critical extension certkeeper cannot read (${oidText(der.subarray(oid.valueStart, oid.end))})`);
          }
          if (isReason) {
            const code = readTlv(der, value.valueStart, value.end);
            if (code.tag !== 0x0a || code.end - code.valueStart !== 1) throw new DerError("not a reason code");
            reason = der[code.valueStart]!;
          }
        }
      }
      if (reason === REMOVE_FROM_CRL) continue;
      revoked.set(serialBytes(der.subarray(serial.valueStart, serial.end)), { revokedAt: readTime(der, date), reason: reasonName(reason) });
    }
  } catch (error) {
    if (error instanceof DerError) throw new RevocationFailure("the CRL is not a DER certificate revocation list");
    throw error;
  }
  return revoked;
}

const REASON_CODE = "2.5.29.21";
const INVALIDITY_DATE = "2.5.29.24";

function checkScope(extensions: Extension[], url: string | undefined): void {
  for (const extension of extensions) {
    if (extension.extnID === id_ce_deltaCRLIndicator) throw new RevocationFailure("the CRL is a delta CRL, which certkeeper does not combine with its base");
    if (extension.critical && !KNOWN_CRL_EXTENSIONS.has(extension.extnID)) {
      throw new RevocationFailure(`the CRL has a critical extension certkeeper cannot read (${extension.extnID})`);
    }
    if (extension.extnID !== id_ce_issuingDistributionPoint) continue;
    let point: IssuingDistributionPoint;
    try {
      point = AsnConvert.parse(extension.extnValue.buffer, IssuingDistributionPoint);
    } catch {
      throw new RevocationFailure("the CRL's issuing distribution point cannot be read");
    }
    if (point.onlyContainsCACerts) throw new RevocationFailure("the CRL lists CA certificates only");
    if (point.onlyContainsAttributeCerts) throw new RevocationFailure("the CRL lists attribute certificates only");
    if (point.onlySomeReasons) throw new RevocationFailure("the CRL covers only some revocation reasons");
    if (point.indirectCRL) throw new RevocationFailure("the CRL is an indirect CRL, which certkeeper does not read");
    const names = (point.distributionPoint?.fullName ?? []).map((name) => name.uniformResourceIdentifier).filter((uri): uri is string => uri !== undefined);
    if (url !== undefined && names.length > 0 && !names.includes(url)) {
      throw new RevocationFailure("the CRL is for another distribution point than the one it was fetched from");
    }
  }
}

/** What a verified CRL says about `leaf`, or throws when it is about another issuer or out of date. */
export function crlAnswer(crl: VerifiedCrl, options: { leaf: Certificate; now: number }): RevocationAnswer {
  const { leaf, now } = options;
  if (!sameName(crl.issuerName, leaf.issuer)) throw new RevocationFailure("the CRL is about another issuer");
  assertCurrent("CRL", crl.thisUpdate, crl.nextUpdate, now);
  const base = { source: "crl" as const, checkedAt: now, validUntil: validUntil(now, crl.nextUpdate, crl.thisUpdate) };
  const entry = crl.revoked.get(serialOf(leaf));
  if (!entry) return { ...base, status: "good", revokedAt: null, reason: null };
  return { ...base, status: "revoked", revokedAt: entry.revokedAt, reason: entry.reason };
}

/** Reads and verifies a DER CRL and answers for `leaf`. Rejects with {@link RevocationFailure} otherwise. */
export async function verifyCrl(der: Uint8Array, options: { leaf: Certificate; issuer: Certificate; now: number }): Promise<RevocationAnswer> {
  return crlAnswer(await readCrl(der, options), options);
}
