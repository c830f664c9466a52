/**
 * What the fixture CT logs are made of, written from RFC 6962 and c2sp.org/static-ct-api without
 * core's code: the Merkle Tree Hash and its audit and consistency proofs by the recursive definitions
 * of RFC 6962 §2.1 (checked against the RFC's published test vectors in ct_fixtures.test.ts), log keys
 * (ECDSA P-256 or RSA 2048), TLS-style DigitallySigned signatures, signed tree heads and checkpoints.
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";

const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** RFC 6962 §2.1: a leaf's hash. */
export const fixtureLeafHash = (leaf: Uint8Array) => sha256(Uint8Array.of(0), leaf);
const node = (left: Uint8Array, right: Uint8Array) => sha256(Uint8Array.of(1), left, right);

/** The largest power of two smaller than n (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** A Merkle tree by RFC 6962 §2.1's recursive definitions, remembering subtrees of 256 leaves and more. */
export class FixtureTree {
  readonly leafHashes: Buffer[] = [];
  #perfect = new Map<string, Buffer>();

  get size(): number {
    return this.leafHashes.length;
  }

  push(leaf: Uint8Array): void {
    this.leafHashes.push(fixtureLeafHash(leaf));
  }

  /** MTH(D[start : start + n]). */
  hash(start: number, n: number): Buffer {
    if (n === 0) return sha256();
    if (n === 1) return this.leafHashes[start]!;
    const remember = n >= 256 && (n & (n - 1)) === 0;
    const key = `${start}/${n}`;
    if (remember) {
      const known = this.#perfect.get(key);
      if (known) return known;
    }
    const k = split(n);
    const hash = node(this.hash(start, k), this.hash(start + k, n - k));
    if (remember) this.#perfect.set(key, hash);
    return hash;
  }

  root(n = this.size): Buffer {
    return this.hash(0, n);
  }

  /** PATH(m, D[0:n]): the audit path of leaf m in the tree of n leaves (RFC 6962 §2.1.1). */
  path(m: number, n: number, start = 0): Buffer[] {
    if (n <= 1) return [];
    const k = split(n);
    return m < k ? [...this.path(m, k, start), this.hash(start + k, n - k)] : [...this.path(m - k, n - k, start + k), this.hash(start, k)];
  }

  /** PROOF(m, D[0:n]): the consistency proof from m leaves to n (RFC 6962 §2.1.2). */
  proof(m: number, n: number): Buffer[] {
    return this.#subproof(m, n, 0, true);
  }

  #subproof(m: number, n: number, start: number, whole: boolean): Buffer[] {
    if (m === n) return whole ? [] : [this.hash(start, n)];
    const k = split(n);
    return m <= k
      ? [...this.#subproof(m, k, start, whole), this.hash(start + k, n - k)]
      : [...this.#subproof(m - k, n - k, start + k, false), this.hash(start, k)];
  }

  /** A tlog-tiles hash tile: at `level`, tile `index`, `width` hashes of 256^level-leaf subtrees. */
  hashTile(level: number, index: number, width: number): Buffer {
    const span = 256 ** level;
    const hashes: Buffer[] = [];
    for (let j = 0; j < width; j++) hashes.push(this.hash((index * 256 + j) * span, span));
    return Buffer.concat(hashes);
  }
}

export interface FixtureKey {
  privateKey: KeyObject;
  /** DER SubjectPublicKeyInfo. */
  spki: Buffer;
  /** SHA-256 of the SPKI: RFC 6962's LogID. */
  logId: Buffer;
  type: "ec" | "rsa";
}

export function fixtureKey(type: "ec" | "rsa" = "ec"): FixtureKey {
  const pair = type === "ec" ? generateKeyPairSync("ec", { namedCurve: "P-256" }) : generateKeyPairSync("rsa", { modulusLength: 2048 });
  const spki = pair.publicKey.export({ format: "der", type: "spki" });
  return { privateKey: pair.privateKey, spki, logId: sha256(spki), type };
}

/** Big-endian unsigned integer of `size` bytes. */
export function uintBytes(value: number, size: number): Buffer {
  const bytes = Buffer.alloc(size);
  let rest = BigInt(value);
  for (let i = size - 1; i >= 0; i--) {
    bytes[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return bytes;
}

/** A TLS vector: its length in `size` bytes, then its bytes. */
export const vector = (bytes: Uint8Array, size: number) => Buffer.concat([uintBytes(bytes.length, size), bytes]);

/**
 * A TimestampedEntry (x509_entry) whose certificate is not DER: it matches nothing but is a leaf of
 * the tree like any other (a backlog of entries cheap to make).
 */
export function unreadableEntry(i: number): Buffer {
  return Buffer.concat([uintBytes(Date.now(), 8), uintBytes(0, 2), vector(Buffer.from(`not a certificate ${i}`), 3), vector(Buffer.alloc(0), 2)]);
}

/** DigitallySigned (RFC 5246 §4.7): sha256 (4), ecdsa (3) or rsa (1), a 2-byte length, the signature. */
export function digitallySigned(key: FixtureKey, input: Uint8Array): Buffer {
  const signature = sign("sha256", input, key.privateKey);
  return Buffer.concat([Uint8Array.of(4, key.type === "ec" ? 3 : 1), vector(signature, 2)]);
}

/** The TreeHeadSignature input (RFC 6962 §3.5): v1, tree_hash, timestamp, tree size, root. */
export function treeHeadSignatureInput(timestamp: number, size: number, root: Uint8Array): Buffer {
  return Buffer.concat([Uint8Array.of(0, 1), uintBytes(timestamp, 8), uintBytes(size, 8), root]);
}

/** A get-sth answer (RFC 6962 §4.3). */
export function signedTreeHead(key: FixtureKey, size: number, root: Uint8Array, timestamp: number) {
  return {
    tree_size: size,
    timestamp,
    sha256_root_hash: Buffer.from(root).toString("base64"),
    tree_head_signature: digitallySigned(key, treeHeadSignatureInput(timestamp, size, root)).toString("base64"),
  };
}

/**
 * A checkpoint (c2sp.org/tlog-checkpoint) signed with an RFC6962NoteSignature (c2sp.org/static-ct-api):
 * origin, size, base64 root, a blank line, and `— <origin> base64(keyID || timestamp || TreeHeadSignature)`.
 */
export function checkpoint(key: FixtureKey, origin: string, size: number, root: Uint8Array, timestamp: number): string {
  const keyId = sha256(Buffer.from(`${origin}\n`), Uint8Array.of(0x05), key.logId).subarray(0, 4);
  const body = Buffer.concat([keyId, uintBytes(timestamp, 8), digitallySigned(key, treeHeadSignatureInput(timestamp, size, root))]);
  return `${origin}\n${size}\n${Buffer.from(root).toString("base64")}\n\n\u2014 ${origin} ${body.toString("base64")}\n`;
}

/** tlog-tiles' index path: 3-digit elements, all but the last prefixed with x. */
export function fixtureTileIndex(index: number): string {
  const groups: string[] = [];
  do {
    groups.unshift(String(index % 1000).padStart(3, "0"));
    index = Math.floor(index / 1000);
  } while (index > 0);
  return groups.map((group, i) => (i < groups.length - 1 ? `x${group}` : group)).join("/");
}
