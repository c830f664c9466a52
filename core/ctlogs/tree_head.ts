/**
 * Signed tree heads, verified with the log's key from the log list: RFC 6962's get-sth answer
 * (§4.3, a TreeHeadSignature in TLS's DigitallySigned form, ECDSA P-256 or RSA with SHA-256) and
 * static-ct-api's checkpoint (c2sp.org/tlog-checkpoint, a signed note whose RFC6962NoteSignature wraps
 * the same TreeHeadSignature). Nothing in a head is believed before its signature verifies.
 */
import { createHash, createPublicKey, verify, type KeyObject } from "node:crypto";
import { HASH_BYTES } from "./merkle.ts";

/** A verified head. */
export interface TreeHead {
  size: number;
  root: Uint8Array;
  /** The log's timestamp of the head, ms since the epoch. */
  timestamp: number;
}

export class HeadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HeadError";
  }
}

/** A log's public key (DER SubjectPublicKeyInfo from the list), ready to verify. */
export interface LogKey {
  key: KeyObject;
  /** SHA-256 of the DER key: RFC 6962's LogID. */
  logId: Uint8Array;
}

/** Reads a list's base64 key; throws with the reason when it is not an ECDSA P-256 or RSA key. */
export function readLogKey(base64: string): LogKey {
  const der = Buffer.from(base64, "base64");
  let key: KeyObject;
  try {
    key = createPublicKey({ key: der, format: "der", type: "spki" });
  } catch {
    throw new Error("its key is not a DER SubjectPublicKeyInfo");
  }
  const type = key.asymmetricKeyType;
  if (type === "ec") {
    if (key.asymmetricKeyDetails?.namedCurve !== "prime256v1") throw new Error("its ECDSA key is not on P-256");
  } else if (type !== "rsa") {
    throw new Error(`its key is ${type}, not ECDSA P-256 or RSA`);
  }
  return { key, logId: new Uint8Array(createHash("sha256").update(der).digest()) };
}

/** The bytes a TreeHeadSignature signs: version v1, signature type tree_hash, timestamp, size, root. */
export function treeHeadInput(timestamp: number, size: number, root: Uint8Array): Uint8Array {
  const input = new Uint8Array(2 + 8 + 8 + HASH_BYTES);
  const view = new DataView(input.buffer);
  input[0] = 0; // v1
  input[1] = 1; // tree_hash
  view.setBigUint64(2, BigInt(timestamp));
  view.setBigUint64(10, BigInt(size));
  input.set(root, 18);
  return input;
}

/**
 * Whether `signed` (a DigitallySigned: hash algorithm, signature algorithm, 2-byte length, signature)
 * is the log's signature of `input` with SHA-256 and the log key's own algorithm.
 */
export function verifyDigitallySigned(key: LogKey, input: Uint8Array, signed: Uint8Array): boolean {
  if (signed.length < 4) return false;
  const hashAlgorithm = signed[0];
  const signatureAlgorithm = signed[1];
  const length = (signed[2]! << 8) | signed[3]!;
  if (signed.length !== 4 + length || hashAlgorithm !== 4) return false; // 4: sha256
  const expected = key.key.asymmetricKeyType === "ec" ? 3 : 1; // 3: ecdsa, 1: rsa
  if (signatureAlgorithm !== expected) return false;
  try {
    return verify("sha256", input, key.key, signed.subarray(4));
  } catch {
    return false;
  }
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Reads and verifies an RFC 6962 get-sth answer. */
export function readSignedTreeHead(json: unknown, key: LogKey): TreeHead {
  const sth = typeof json === "object" && json !== null ? (json as Record<string, unknown>) : {};
  const { tree_size: size, timestamp, sha256_root_hash: rootText, tree_head_signature: signatureText } = sth;
  if (!isCount(size) || !isCount(timestamp) || typeof rootText !== "string" || typeof signatureText !== "string") {
    throw new HeadError("its get-sth answer lacks tree_size, timestamp, sha256_root_hash or tree_head_signature");
  }
  const root = base64(rootText);
  if (!root || root.length !== HASH_BYTES) throw new HeadError("its get-sth root hash is not 32 bytes of base64");
  const signature = base64(signatureText);
  if (!signature || !verifyDigitallySigned(key, treeHeadInput(timestamp, size, root), signature)) {
    throw new HeadError(`its signed tree head (size ${size}) does not verify with the log's key`);
  }
  return { size, root, timestamp };
}

/**
 * Reads and verifies a checkpoint: the origin line must be `origin` (the submission prefix without
 * scheme and trailing slash), and one signature line of that key name, with the key ID of the log's
 * RFC6962NoteSignature key, must verify. Other signatures (witnesses, other keys) are ignored.
 */
export function readCheckpoint(text: string, key: LogKey, origin: string): TreeHead {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f]/.test(text)) throw new HeadError("its checkpoint holds control characters");
  const split = text.lastIndexOf("\n\n");
  if (split < 0 || !text.endsWith("\n")) throw new HeadError("its checkpoint is not a signed note");
  const lines = text.slice(0, split).split("\n");
  if (lines.length < 3) throw new HeadError("its checkpoint has fewer than three lines");
  if (lines.length > 3) throw new HeadError("its checkpoint has extension lines, which an RFC 6962 note signature does not allow");
  const [originLine, sizeLine, rootLine] = lines as [string, string, string];
  if (originLine !== origin) throw new HeadError(`its checkpoint is for "${originLine.slice(0, 100)}", not "${origin}"`);
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeLine) || Number(sizeLine) > MAX_SAFE) throw new HeadError("its checkpoint's tree size is not a number");
  const size = Number(sizeLine);
  const root = base64(rootLine);
  if (!root || root.length !== HASH_BYTES) throw new HeadError("its checkpoint's root hash is not 32 bytes of base64");
  const keyId = createHash("sha256").update(`${origin}\n`).update(Uint8Array.of(0x05)).update(key.logId).digest().subarray(0, 4);
  let known = 0;
  for (const line of text.slice(split + 2, -1).split("\n").slice(0, 64)) {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!match || match[1] !== origin) continue;
    const signature = base64(match[2]!);
    if (!signature || signature.length < 12 || !sameBytes(signature.subarray(0, 4), keyId)) continue;
    known++;
    const timestamp = Number(new DataView(signature.buffer, signature.byteOffset + 4, 8).getBigUint64(0));
    if (timestamp > MAX_SAFE || !verifyDigitallySigned(key, treeHeadInput(timestamp, size, root), signature.subarray(12))) {
      throw new HeadError(`its checkpoint (size ${size}) carries a signature that does not verify with the log's key`);
    }
    return { size, root, timestamp };
  }
  throw new HeadError(known === 0 ? `its checkpoint (size ${size}) is not signed by the log's key` : "its checkpoint does not verify");
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function base64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  return new Uint8Array(Buffer.from(text, "base64"));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
