/**
 * CONTRACT §21's verification and matching pieces (core/ctlogs/merkle.ts,
 * tree_head.ts, issued.ts), at their edges. A log's heads
 * are "verified with the log's key from the list before its entries are used ... never believed"
 * otherwise; a proof for one tree is no proof for another; entries logged at the watch's creation
 * are not "logged before the watch was created"; a certificate and its precertificate are one
 * issuance whose fingerprintSha256 is "the final certificate's when seen".
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { nodeHash, readCheckpoint, readLogKey, readSignedTreeHead, verifyConsistency, verifyInclusion } from "../core/ctlogs/mod.ts";
import { distinctMatches, matchesOf } from "../core/ctlogs/issued.ts";
import type { Candidate } from "../core/ctlogs/entry_decode.ts";
import type { IndexedWatch } from "../core/ctlogs/watch_index.ts";
import { checkpoint, fixtureKey, signedTreeHead } from "./support/ct_log_tree.ts";

const h = (text: string) => new Uint8Array(createHash("sha256").update(text).digest());

describe("Merkle proofs (RFC 9162 §2.1.3.2, §2.1.4.2: the proof must end with sn = 0)", () => {
  test("an inclusion proof for the tree of 2 leaves is not one for the tree of 4", () => {
    const leaf = h("leaf 0");
    const sibling = h("leaf 1");
    const rootOfTwo = nodeHash(leaf, sibling);
    expect(verifyInclusion(0, 2, leaf, [sibling], rootOfTwo)).toBe(true);
    // The same path and root claimed for a tree of 4: the path is one level short.
    expect(verifyInclusion(0, 4, leaf, [sibling], rootOfTwo)).toBe(false);
  });

  test("a consistency proof from 2 to 4 is not one from 2 to 8", () => {
    const first = h("root of 2");
    const right = h("subtree [2, 4)");
    const rootOfFour = nodeHash(first, right);
    expect(verifyConsistency(2, 4, first, rootOfFour, [right])).toBe(true);
    // Claimed as 2 → 8 with that root: the proof stops a level short.
    expect(verifyConsistency(2, 8, first, rootOfFour, [right])).toBe(false);
  });
});

describe("a signed tree head's DigitallySigned (RFC 5246 §4.7, RFC 6962 §3.5)", () => {
  const key = fixtureKey("ec");
  const logKey = readLogKey(key.spki.toString("base64"));
  const root = h("root");
  const sth = signedTreeHead(key, 7, root, 1_700_000_000_000);
  const withSignature = (bytes: Buffer) => ({ ...sth, tree_head_signature: bytes.toString("base64") });
  const signature = () => Buffer.from(sth.tree_head_signature, "base64");

  test("the untouched head verifies", () => {
    expect(readSignedTreeHead(sth, logKey).size).toBe(7);
  });

  test("a hash algorithm other than sha256 (4) is refused, though the signature bytes verify", () => {
    const bytes = signature();
    bytes[0] = 2; // sha1
    expect(() => readSignedTreeHead(withSignature(bytes), logKey)).toThrow("does not verify");
  });

  test("a signature algorithm other than the key's (ecdsa, 3) is refused", () => {
    const bytes = signature();
    bytes[1] = 1; // rsa, for an ECDSA key
    expect(() => readSignedTreeHead(withSignature(bytes), logKey)).toThrow("does not verify");
  });

  test("a length field that does not match the signature's bytes is refused", () => {
    const bytes = signature();
    bytes.writeUInt16BE(bytes.readUInt16BE(2) - 1, 2);
    expect(() => readSignedTreeHead(withSignature(bytes), logKey)).toThrow("does not verify");
  });
});

describe("a checkpoint's signature line (c2sp.org/signed-note, static-ct-api)", () => {
  test("a line naming a key other than the origin is not the log's signature, whatever its key ID and bytes", () => {
    const key = fixtureKey("ec");
    const logKey = readLogKey(key.spki.toString("base64"));
    const note = checkpoint(key, "log.example/2026h1", 42, h("root"), 1_700_000_000_000);
    expect(readCheckpoint(note, logKey, "log.example/2026h1").size).toBe(42);
    const renamed = note.replace("\u2014 log.example/2026h1 ", "\u2014 other.example/2026h1 ");
    expect(() => readCheckpoint(renamed, logKey, "log.example/2026h1")).toThrow("not signed by the log's key");
  });
});

describe("matching entries to watches", () => {
  const watch: IndexedWatch = {
    id: "wch_edges",
    organizationId: "org_edges",
    mode: "live",
    domain: "example.com",
    includeSubdomains: true,
    allowedIssuers: [],
    createdAt: 1_700_000_000_000,
  } as IndexedWatch;
  const candidate = (timestamp: number, fingerprint: string | null): Candidate => ({
    index: 0,
    timestamp,
    fields: { dnsNames: ["www.example.com"], issuerOrganization: "Let's Encrypt", issuerCommonName: "E7", notBefore: 1_700_000_000_000, notAfter: 1_707_776_000_000 },
    issuanceKey: "ab".repeat(32),
    fingerprint,
  });

  test("an entry logged at the very millisecond the watch was created raises certificate.issued (only earlier ones are silent)", () => {
    const [atCreation] = matchesOf(candidate(watch.createdAt, null), [watch], Date.now());
    expect(atCreation!.event?.type).toBe("certificate.issued");
    const [before] = matchesOf(candidate(watch.createdAt - 1, null), [watch], Date.now());
    expect(before!.event).toBeNull();
  });

  test("a precertificate then its certificate in one batch: one issuance, its event carrying the certificate's fingerprint", () => {
    const fingerprint = "c0".repeat(32);
    const matches = [
      ...matchesOf(candidate(watch.createdAt + 10, null), [watch], Date.now()),
      ...matchesOf(candidate(watch.createdAt + 11, fingerprint), [watch], Date.now()),
    ];
    const distinct = distinctMatches(matches);
    expect(distinct).toHaveLength(1);
    expect(distinct[0]!.issuance.fingerprint).toBe(fingerprint);
    expect(distinct[0]!.event?.data.fingerprintSha256).toBe(Array(32).fill("C0").join(":"));
  });
});
