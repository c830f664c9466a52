/**
 * What the follower reads from each logged certificate or precertificate's TBSCertificate: the names
 * to match (SAN dNSNames, and the subject CN when it is a host name), the issuer's O and CN, the
 * validity; and, for matches only, the issuance's identity: SHA-256 of the TBSCertificate without the
 * CT poison and SCT-list extensions, which a precertificate and its certificate share.
 */
import { createHash } from "node:crypto";
import { bytesEqual, DerError, derHeader, readString, readTime, readTlv, type Tlv } from "../base/der.ts";
import { isDnsName, normalizeDnsName } from "../watches/mod.ts";
import { nameShown } from "../base/log.ts";

export interface TbsFields {
  /** Lower-case, without a trailing dot, distinct, in certificate order (SAN first, then the CN). */
  dnsNames: string[];
  issuerOrganization: string | null;
  issuerCommonName: string | null;
  notBefore: number;
  notAfter: number;
}

/** The names one certificate may carry, at most (real ones carry up to a few hundred). */
const MAX_NAMES = 1000;

const OID_CN = Uint8Array.of(0x55, 0x04, 0x03);
const OID_O = Uint8Array.of(0x55, 0x04, 0x0a);
const OID_SAN = Uint8Array.of(0x55, 0x1d, 0x11);
/** 1.3.6.1.4.1.11129.2.4.3, the precertificate poison. */
const OID_POISON = Uint8Array.of(0x2b, 0x06, 0x01, 0x04, 0x01, 0xd6, 0x79, 0x02, 0x04, 0x03);
/** 1.3.6.1.4.1.11129.2.4.2, the embedded SCT list. */
const OID_SCT_LIST = Uint8Array.of(0x2b, 0x06, 0x01, 0x04, 0x01, 0xd6, 0x79, 0x02, 0x04, 0x02);

/** The TBSCertificate element of the Certificate at bytes[start, end). */
export function certificateTbs(bytes: Uint8Array, start = 0, end = bytes.length): Tlv {
  const certificate = readTlv(bytes, start, end);
  if (certificate.tag !== 0x30) throw new DerError("a certificate is a SEQUENCE");
  const tbs = readTlv(bytes, certificate.valueStart, certificate.end);
  if (tbs.tag !== 0x30) throw new DerError("a TBSCertificate is a SEQUENCE");
  return tbs;
}

/** The parts of a TBSCertificate the follower uses, by position. */
interface TbsLayout {
  issuer: Tlv;
  validity: Tlv;
  subject: Tlv;
  /** The [3] extensions element, when present. */
  extensions: Tlv | null;
}

function layout(bytes: Uint8Array, tbs: Tlv): TbsLayout {
  let at = tbs.valueStart;
  const next = () => {
    const element = readTlv(bytes, at, tbs.end);
    at = element.end;
    return element;
  };
  let element = next();
  if (element.tag === 0xa0) element = next(); // version
  if (element.tag !== 0x02) throw new DerError("serial number expected");
  if (next().tag !== 0x30) throw new DerError("signature algorithm expected");
  const issuer = next();
  const validity = next();
  const subject = next();
  if (issuer.tag !== 0x30 || validity.tag !== 0x30 || subject.tag !== 0x30) throw new DerError("issuer, validity and subject expected");
  if (next().tag !== 0x30) throw new DerError("subject public key info expected");
  let extensions: Tlv | null = null;
  while (at < tbs.end) {
    element = next();
    if (element.tag === 0xa3) extensions = element;
  }
  return { issuer, validity, subject, extensions };
}

/** The first value of each wanted attribute type in a Name (the last for the CN: the most specific). */
function nameAttributes(bytes: Uint8Array, name: Tlv): { o: string | null; cn: string | null } {
  let o: string | null = null;
  let cn: string | null = null;
  for (let at = name.valueStart; at < name.end; ) {
    const set = readTlv(bytes, at, name.end);
    at = set.end;
    for (let inner = set.valueStart; inner < set.end; ) {
      const pair = readTlv(bytes, inner, set.end);
      inner = pair.end;
      const oid = readTlv(bytes, pair.valueStart, pair.end);
      if (oid.tag !== 0x06) continue;
      const isCn = bytesEqual(bytes, oid.valueStart, oid.end, OID_CN);
      if (!isCn && (o !== null || !bytesEqual(bytes, oid.valueStart, oid.end, OID_O))) continue;
      const value = readString(bytes, readTlv(bytes, oid.end, pair.end));
      if (value === null) continue;
      if (isCn) cn = value;
      else o = value;
    }
  }
  return { o, cn };
}

/** A DNS name as matched: lower-case, no trailing dot. */
/** Whether a CN is a host name (possibly a wildcard) rather than a person's or product's name or an address. */
function isHostName(name: string): boolean {
  return (
    name.length <= 253 &&
    /^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name) &&
    !/^[0-9.]+$/.test(name)
  );
}

/** Reads the fields of the TBSCertificate `tbs` of `bytes`; throws DerError when it is malformed. */
export function readTbs(bytes: Uint8Array, tbs: Tlv): TbsFields {
  const parts = layout(bytes, tbs);
  const issuer = nameAttributes(bytes, parts.issuer);
  const subject = nameAttributes(bytes, parts.subject);
  const notBeforeTlv = readTlv(bytes, parts.validity.valueStart, parts.validity.end);
  const notAfterTlv = readTlv(bytes, notBeforeTlv.end, parts.validity.end);
  const names: string[] = [];
  const seen = new Set<string>();
  const add = (name: string) => {
    if (names.length >= MAX_NAMES || seen.has(name)) return;
    seen.add(name);
    names.push(name);
  };
  if (parts.extensions) {
    const list = readTlv(bytes, parts.extensions.valueStart, parts.extensions.end);
    for (let at = list.valueStart; at < list.end; ) {
      const extension = readTlv(bytes, at, list.end);
      at = extension.end;
      const oid = readTlv(bytes, extension.valueStart, extension.end);
      if (!bytesEqual(bytes, oid.valueStart, oid.end, OID_SAN)) continue;
      let value = readTlv(bytes, oid.end, extension.end);
      if (value.tag === 0x01) value = readTlv(bytes, value.end, extension.end); // critical
      const generalNames = readTlv(bytes, value.valueStart, value.end);
      for (let inner = generalNames.valueStart; inner < generalNames.end; ) {
        const generalName = readTlv(bytes, inner, generalNames.end);
        inner = generalName.end;
        if (generalName.tag !== 0x82) continue; // dNSName
        const name = normalizeDnsName(readString(bytes, { ...generalName, tag: 0x16 })!);
        if (isDnsName(name)) add(name);
      }
    }
  }
  if (subject.cn !== null) {
    const cn = normalizeDnsName(subject.cn.trim());
    if (isHostName(cn)) add(cn);
  }
  return {
    dnsNames: names,
    issuerOrganization: issuer.o === null ? null : nameShown(issuer.o),
    issuerCommonName: issuer.cn === null ? null : nameShown(issuer.cn),
    notBefore: readTime(bytes, notBeforeTlv),
    notAfter: readTime(bytes, notAfterTlv),
  };
}

/**
 * SHA-256 (hex) of the TBSCertificate without the poison and SCT-list extensions, re-encoded in DER
 * (and without the extensions element when nothing else is left, as a log strips a lone poison).
 */
export function issuanceKey(bytes: Uint8Array, tbs: Tlv): string {
  const hash = createHash("sha256");
  const extensions = layout(bytes, tbs).extensions;
  if (!extensions) return hash.update(bytes.subarray(tbs.start, tbs.end)).digest("hex");
  const list = readTlv(bytes, extensions.valueStart, extensions.end);
  const kept: Tlv[] = [];
  let keptLength = 0;
  let dropped = false;
  for (let at = list.valueStart; at < list.end; ) {
    const extension = readTlv(bytes, at, list.end);
    at = extension.end;
    const oid = readTlv(bytes, extension.valueStart, extension.end);
    if (bytesEqual(bytes, oid.valueStart, oid.end, OID_POISON) || bytesEqual(bytes, oid.valueStart, oid.end, OID_SCT_LIST)) {
      dropped = true;
      continue;
    }
    kept.push(extension);
    keptLength += extension.end - extension.start;
  }
  if (!dropped) {
    return hash.update(bytes.subarray(tbs.start, tbs.end)).digest("hex");
  }
  const before = bytes.subarray(tbs.valueStart, extensions.start);
  const after = bytes.subarray(extensions.end, tbs.end);
  let middle: Uint8Array[] = [];
  if (kept.length > 0) {
    const listHeader = derHeader(0x30, keptLength);
    middle = [derHeader(0xa3, listHeader.length + keptLength), listHeader, ...kept.map((e) => bytes.subarray(e.start, e.end))];
  }
  const middleLength = middle.reduce((sum, part) => sum + part.length, 0);
  hash.update(derHeader(0x30, before.length + middleLength + after.length));
  hash.update(before);
  for (const part of middle) hash.update(part);
  hash.update(after);
  return hash.digest("hex");
}
