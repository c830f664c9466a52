/**
 * Log entries as the logs serve them, read into what the follower needs: RFC 6962 §3.4's
 * MerkleTreeLeaf (get-entries' `leaf_input`; `extra_data` only carries the chain, which matching does
 * not need) and static-ct-api's TileLeaf (a data tile is a sequence of them). Each entry's leaf hash
 * is computed from exactly the bytes the log's Merkle tree commits to, so a log that lies about an
 * entry is caught when the hashes are checked against its signed head.
 */
import { createHash } from "node:crypto";
import { DerError, readTlv, type Tlv } from "../base/der.ts";
import { certificateTbs, issuanceKey, readTbs, type TbsFields } from "./certificate_fields.ts";
import { leafHash } from "./merkle.ts";

export class EntryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EntryError";
  }
}

export interface LogEntry {
  /** RFC 6962 §2.1 leaf hash of the entry's MerkleTreeLeaf. */
  leafHash: Uint8Array;
  /** The TimestampedEntry's timestamp: when the log accepted the entry, ms. */
  timestamp: number;
  precertificate: boolean;
  /** Read from the TBSCertificate; null when the certificate cannot be read (it then matches nothing). */
  fields: TbsFields | null;
  /** Where the TBSCertificate is, for the issuance key. */
  bytes: Uint8Array;
  tbs: Tlv | null;
  /** The certificate (x509 entries), for its fingerprint; null for precertificates. */
  certificate: Uint8Array | null;
}

/** What a match needs beyond the fields: the issuance's identity and the final certificate's fingerprint. */
export function entryIdentity(entry: LogEntry): { issuanceKey: string; fingerprint: string | null } {
  return {
    issuanceKey: issuanceKey(entry.bytes, entry.tbs!),
    fingerprint: entry.certificate ? createHash("sha256").update(entry.certificate).digest("hex") : null,
  };
}

const LEAF_PREFIX = Uint8Array.of(0, 0); // version v1, leaf type timestamped_entry

function uint(bytes: Uint8Array, at: number, size: number, end: number): number {
  if (at + size > end) throw new EntryError("truncated entry");
  let value = 0;
  for (let i = 0; i < size; i++) value = value * 256 + bytes[at + i]!;
  return value;
}

/**
 * Reads a TimestampedEntry at `at` (ending by `end`): the entry without its leaf hash, and where the
 * TimestampedEntry ends.
 */
function readTimestampedEntry(bytes: Uint8Array, at: number, end: number): { entry: Omit<LogEntry, "leafHash">; next: number } {
  const timestamp = uint(bytes, at, 8, end);
  const type = uint(bytes, at + 8, 2, end);
  let cursor = at + 10;
  let tbs: Tlv | null = null;
  let certificate: Uint8Array | null = null;
  let fields: TbsFields | null = null;
  let contentStart: number;
  let contentEnd: number;
  if (type === 0) {
    const length = uint(bytes, cursor, 3, end);
    contentStart = cursor + 3;
    contentEnd = contentStart + length;
    if (contentEnd > end) throw new EntryError("truncated certificate");
    certificate = bytes.subarray(contentStart, contentEnd);
  } else if (type === 1) {
    if (cursor + 32 > end) throw new EntryError("truncated issuer key hash");
    cursor += 32;
    const length = uint(bytes, cursor, 3, end);
    contentStart = cursor + 3;
    contentEnd = contentStart + length;
    if (contentEnd > end) throw new EntryError("truncated TBSCertificate");
  } else {
    throw new EntryError(`unknown entry type ${type}`);
  }
  const extensionsLength = uint(bytes, contentEnd, 2, end);
  const next = contentEnd + 2 + extensionsLength;
  if (next > end) throw new EntryError("truncated extensions");
  try {
    tbs = type === 0 ? certificateTbs(bytes, contentStart, contentEnd) : precertificateTbs(bytes, contentStart, contentEnd);
    fields = readTbs(bytes, tbs);
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    tbs = null;
    fields = null;
  }
  return { entry: { timestamp, precertificate: type === 1, fields, bytes, tbs, certificate }, next };
}

/** A precertificate entry's TBSCertificate, which fills its signed_entry exactly. */
function precertificateTbs(bytes: Uint8Array, start: number, end: number): Tlv {
  const tbs = readTlv(bytes, start, end);
  if (tbs.tag !== 0x30 || tbs.end !== end) throw new DerError("a precertificate entry holds one TBSCertificate");
  return tbs;
}

/** Reads one RFC 6962 MerkleTreeLeaf (a get-entries `leaf_input`). */
export function readMerkleTreeLeaf(leaf: Uint8Array): LogEntry {
  if (leaf.length < 2 || leaf[0] !== 0 || leaf[1] !== 0) throw new EntryError("not a v1 timestamped_entry leaf");
  const { entry, next } = readTimestampedEntry(leaf, 2, leaf.length);
  if (next !== leaf.length) throw new EntryError("bytes after the leaf");
  return { ...entry, leafHash: leafHash(leaf) };
}

/** Reads a data tile's TileLeaf entries; throws EntryError unless it holds exactly `count` of them. */
export function readDataTile(tile: Uint8Array, count: number): LogEntry[] {
  const entries: LogEntry[] = [];
  let at = 0;
  while (at < tile.length) {
    if (entries.length === count) throw new EntryError(`the data tile holds more than ${count} entries`);
    const { entry, next } = readTimestampedEntry(tile, at, tile.length);
    const timestampedEntry = tile.subarray(at, next);
    let cursor = next;
    if (entry.precertificate) {
      // pre_certificate: the precertificate as submitted (ASN.1Cert); matching reads the signed TBS instead.
      cursor += 3 + uint(tile, cursor, 3, tile.length);
    }
    cursor += 2 + uint(tile, cursor, 2, tile.length); // certificate_chain fingerprints
    if (cursor > tile.length) throw new EntryError("truncated tile leaf");
    entries.push({ ...entry, leafHash: leafHash(LEAF_PREFIX, timestampedEntry) });
    at = cursor;
  }
  if (entries.length !== count) throw new EntryError(`the data tile holds ${entries.length} entries, not ${count}`);
  return entries;
}
