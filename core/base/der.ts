/**
 * A minimal DER reader over a byte array: tag, length, bounds. The CT follower reads a handful of
 * fields from every certificate of every log (millions a day); a full ASN.1 object model per entry (as
 * @peculiar/asn1-schema builds) costs many times more than walking the bytes to those fields. Tests
 * hold what this reads against @peculiar/x509's reading of the same certificates. Certificates' validity
 * times are read here too (core/tls/x509.ts): the ASN.1 library misreads those with a UTC offset.
 */

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DerError";
  }
}

/** One element: its tag byte, where its header starts, where its value starts and ends (exclusive). */
export interface Tlv {
  tag: number;
  start: number;
  valueStart: number;
  end: number;
}

/** Reads the element at `offset`, which must end by `limit`. Only definite lengths (DER). */
export function readTlv(bytes: Uint8Array, offset: number, limit: number): Tlv {
  if (offset + 2 > limit) throw new DerError("truncated element");
  const tag = bytes[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError("high tag numbers are not used in certificates");
  let length = bytes[offset + 1]!;
  let valueStart = offset + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4) throw new DerError("unsupported length");
    if (valueStart + octets > limit) throw new DerError("truncated length");
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + bytes[valueStart + i]!;
    valueStart += octets;
  }
  const end = valueStart + length;
  if (end > limit) throw new DerError("element longer than its container");
  return { tag, start: offset, valueStart, end };
}

/** The header of an element of `tag` holding `length` bytes, in DER. */
export function derHeader(tag: number, length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(tag, length);
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return Uint8Array.of(tag, 0x80 | octets.length, ...octets);
}

/** An OBJECT IDENTIFIER's content octets as dotted text (`2.5.29.21`). */
export function oidText(bytes: Uint8Array): string {
  if (bytes.length === 0) return "";
  const parts = [Math.floor(bytes[0]! / 40), bytes[0]! % 40];
  let value = 0;
  for (const byte of bytes.subarray(1)) {
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join(".");
}

/** Whether bytes[start, end) equal `expected`. */
export function bytesEqual(bytes: Uint8Array, start: number, end: number, expected: Uint8Array): boolean {
  if (end - start !== expected.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[start + i] !== expected[i]) return false;
  return true;
}

const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder("utf-8");

/** A directory string's text: UTF8String, PrintableString, IA5String, TeletexString, BMPString, UniversalString. */
export function readString(bytes: Uint8Array, tlv: Tlv): string | null {
  const value = bytes.subarray(tlv.valueStart, tlv.end);
  switch (tlv.tag) {
    case 0x0c: // UTF8String
      return utf8.decode(value);
    case 0x13: // PrintableString
    case 0x16: // IA5String
    case 0x14: // TeletexString (T.61; Latin-1 in practice)
    case 0x1a: // VisibleString
      return latin1.decode(value);
    case 0x1e: {
      // BMPString: UTF-16 big-endian
      let text = "";
      for (let i = 0; i + 1 < value.length; i += 2) text += String.fromCharCode((value[i]! << 8) | value[i + 1]!);
      return text;
    }
    case 0x1c: {
      // UniversalString: UTF-32 big-endian
      let text = "";
      for (let i = 0; i + 3 < value.length; i += 4) {
        const code = ((value[i]! << 24) | (value[i + 1]! << 16) | (value[i + 2]! << 8) | value[i + 3]!) >>> 0;
        if (code <= 0x10ffff) text += String.fromCodePoint(code);
      }
      return text;
    }
    default:
      return null;
  }
}

/**
 * UTCTime (two-digit years 1950–2049) or GeneralizedTime, in ms since the epoch. RFC 5280 asks for
 * seconds and `Z`; a time without seconds or with an offset from UTC (`+hhmm`, `-hhmm`), which a CA may
 * still have written, is read as OpenSSL reads it: the instant it names.
 */
export function readTime(bytes: Uint8Array, tlv: Tlv): number {
  const text = latin1.decode(bytes.subarray(tlv.valueStart, tlv.end));
  let match: RegExpExecArray | null;
  if (tlv.tag === 0x17 && (match = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?(Z|[+-]\d{4})$/.exec(text))) {
    const yy = Number(match[1]);
    return instant(yy < 50 ? 2000 + yy : 1900 + yy, match[2]!, match[3]!, match[4]!, match[5]!, match[6], 0, match[7]!, text);
  }
  if (tlv.tag === 0x18 && (match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{4})$/.exec(text))) {
    const ms = match[7] ? Math.floor(Number(`0.${match[7]}`) * 1000) : 0;
    return instant(Number(match[1]), match[2]!, match[3]!, match[4]!, match[5]!, match[6], ms, match[8]!, text);
  }
  throw new DerError(`unreadable time "${text}"`);
}

function instant(year: number, month: string, day: string, hour: string, minute: string, second: string | undefined, ms: number, zone: string, text: string): number {
  const [m, d, h, min, s] = [Number(month), Number(day), Number(hour), Number(minute), Number(second ?? 0)];
  if (m < 1 || m > 12 || d < 1 || d > 31 || h > 23 || min > 59 || s > 60) throw new DerError(`unreadable time "${text}"`);
  // setUTCFullYear, not Date.UTC: the years 0–99 are years of the first century, not of the 1900s.
  const date = new Date(0);
  date.setUTCFullYear(year, m - 1, d);
  date.setUTCHours(h, min, s, ms);
  if (zone === "Z") return date.getTime();
  const offset = (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3, 5))) * 60_000;
  return date.getTime() - (zone[0] === "+" ? offset : -offset);
}
