/**
 * RFC 6962 §2.1 Merkle tree hashing, the compact range of a tree's first n leaves (what certspotter
 * calls a collapsed tree: the roots of the perfect subtrees that n's binary digits name, largest
 * first), and the verification of RFC 9162 §2.1.3–2.1.4 inclusion and consistency proofs. Tree sizes
 * are plain numbers (exact to 2^53) and never go through 32-bit bit operations.
 */
import { createHash } from "node:crypto";

export const HASH_BYTES = 32;

/** SHA-256 of 0x00 || leaf: the hash of a leaf whose MerkleTreeLeaf is the concatenation of `parts`. */
export function leafHash(...parts: Uint8Array[]): Uint8Array {
  const hash = createHash("sha256").update(LEAF_PREFIX);
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** SHA-256 of 0x01 || left || right. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return createHash("sha256").update(NODE_PREFIX).update(left).update(right).digest();
}

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Uint8Array = createHash("sha256").digest();

const LEAF_PREFIX = Uint8Array.of(0);
const NODE_PREFIX = Uint8Array.of(1);

/** Whether two hashes are the same bytes. */
export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The root of the perfect subtree over `hashes` (a power of two of them). */
export function perfectRoot(hashes: Uint8Array[]): Uint8Array {
  let level = hashes;
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
    level = next;
  }
  return level[0]!;
}

/** The largest power of two dividing `n` (n > 0); for 0, Infinity. */
function alignment(n: number): number {
  if (n === 0) return Infinity;
  let power = 1;
  while (n % (power * 2) === 0) power *= 2;
  return power;
}

/**
 * The aligned perfect subtrees that cover leaves [from, to), left to right, as [start, size] pairs:
 * each as large as its start's alignment and the end allow. From 0 they are the compact range of `to`.
 */
export function subtreesCovering(from: number, to: number): Array<[number, number]> {
  const subtrees: Array<[number, number]> = [];
  for (let at = from; at < to; ) {
    let size = Math.min(alignment(at), 2 ** Math.floor(Math.log2(to - at)));
    while (size > to - at) size /= 2;
    subtrees.push([at, size]);
    at += size;
  }
  return subtrees;
}

/** The roots of the perfect subtrees of a tree's first `size` leaves, largest first. */
export class CompactRange {
  constructor(
    public size = 0,
    public hashes: Uint8Array[] = [],
  ) {}

  /** Appends one leaf hash. */
  append(hash: Uint8Array): void {
    this.appendSubtree(hash, 1);
  }

  /** Appends the root of the perfect subtree of `leaves` leaves that starts at `size` (it must be aligned there). */
  appendSubtree(root: Uint8Array, leaves: number): void {
    if (this.size % leaves !== 0) throw new Error(`a subtree of ${leaves} leaves cannot start at ${this.size}`);
    this.hashes.push(root);
    for (let count = this.size / leaves; count % 2 === 1; count = Math.floor(count / 2)) {
      const right = this.hashes.pop()!;
      const left = this.hashes.pop()!;
      this.hashes.push(nodeHash(left, right));
    }
    this.size += leaves;
  }

  /** The Merkle Tree Hash of the first `size` leaves. */
  root(): Uint8Array {
    if (this.hashes.length === 0) return EMPTY_ROOT;
    let root = this.hashes[this.hashes.length - 1]!;
    for (let i = this.hashes.length - 2; i >= 0; i--) root = nodeHash(this.hashes[i]!, root);
    return root;
  }

  clone(): CompactRange {
    return new CompactRange(this.size, [...this.hashes]);
  }

  /** As stored: base64 hashes, largest subtree first. */
  encode(): string[] {
    return this.hashes.map((hash) => Buffer.from(hash).toString("base64"));
  }

  /** From what encode() gave; throws when the hashes cannot be that size's compact range. */
  static decode(size: number, encoded: string[]): CompactRange {
    const hashes = encoded.map((text) => new Uint8Array(Buffer.from(text, "base64")));
    if (hashes.some((hash) => hash.length !== HASH_BYTES) || hashes.length !== subtreesCovering(0, size).length) {
      throw new Error(`a compact range of ${size} leaves holds ${subtreesCovering(0, size).length} hashes`);
    }
    return new CompactRange(size, hashes);
  }
}

/** Whether shifting right once is the same as Math.floor(n / 2) (sizes are beyond 32 bits). */
const half = (n: number) => Math.floor(n / 2);
const odd = (n: number) => n % 2 === 1;

/**
 * RFC 9162 §2.1.3.2: whether `path` proves the leaf `hash` at `index` is in the tree of `size` leaves
 * whose root is `root`.
 */
export function verifyInclusion(index: number, size: number, hash: Uint8Array, path: Uint8Array[], root: Uint8Array): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = hash;
  for (const p of path) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && sameHash(r, root);
}

/**
 * RFC 9162 §2.1.4.2: whether `path` proves the tree of `first` leaves (root `firstRoot`) is a prefix
 * of the tree of `second` leaves (root `secondRoot`).
 */
export function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, path: Uint8Array[]): boolean {
  if (first === second) return path.length === 0 && sameHash(firstRoot, secondRoot);
  if (first === 0 || first > second || path.length === 0) return false;
  const proof = Number.isInteger(Math.log2(first)) ? [firstRoot, ...path] : path;
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = proof[0]!;
  let sr = proof[0]!;
  for (const c of proof.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sameHash(fr, firstRoot) && sameHash(sr, secondRoot) && sn === 0;
}

/**
 * The compact range of `size` leaves from an inclusion proof of its last leaf (`lastHash`, index
 * size − 1): that proof is exactly the roots of the subtrees left of the leaf, smallest first.
 */
export function compactRangeFromLastLeaf(size: number, lastHash: Uint8Array, path: Uint8Array[]): CompactRange | null {
  const left = subtreesCovering(0, size - 1);
  if (path.length !== left.length) return null;
  const range = new CompactRange();
  [...path].reverse().forEach((hash, i) => range.appendSubtree(hash, left[i]![1]));
  range.append(lastHash);
  return range;
}
