/**
 * What the follower believes, piece by piece, against sources other than itself: its Merkle code
 * against RFC 6962's published vectors and the fixture tree, its head readers against the fixture
 * logs' signatures (and refusals of every other), its certificate reading against @peculiar/x509, its
 * issuance identity against @peculiar/asn1-x509's re-encoding, its log list reading and its watch index.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import {
  CompactRange,
  EMPTY_ROOT,
  issuanceKey,
  leafHash,
  parseLogList,
  readCheckpoint,
  readDataTile,
  readLogKey,
  readMerkleTreeLeaf,
  readSignedTreeHead,
  subtreesCovering,
  tileIndexPath,
  verifyConsistency,
  verifyInclusion,
  WatchIndex,
  entryIdentity,
  decodeChunk,
} from "../core/ctlogs/mod.ts";
import { FixtureLog, logListJson } from "./support/ct_log_server.ts";
import { checkpoint, fixtureKey, FixtureTree, signedTreeHead } from "./support/ct_log_tree.ts";
import { issueThroughCt, POISON_OID, SCT_LIST_OID, tbsWithout } from "./support/ct_certs.ts";
import { createIntermediateCa, createRootCa, type Issued } from "./support/pki.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";

const hex = (h: string) => Buffer.from(h, "hex");
const VECTOR_LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"].map(hex);
const VECTOR_ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
].map(hex);

let root: Issued;
let ca: Issued;
beforeAll(async () => {
  root = await createRootCa();
  ca = await createIntermediateCa(root, { name: "CN=R13, O=Let's Encrypt\\, Inc., C=US", keyType: "rsa" });
});

describe("Merkle trees (RFC 6962 §2.1, RFC 9162 §2.1.3–2.1.4)", () => {
  test("the compact range's root is the published root at every size", () => {
    const range = new CompactRange();
    expect(Buffer.from(range.root()).toString("hex")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    VECTOR_LEAVES.forEach((leaf, i) => {
      range.append(leafHash(leaf));
      expect(Buffer.from(range.root()).equals(VECTOR_ROOTS[i]!)).toBe(true);
    });
    expect(Buffer.from(EMPTY_ROOT).toString("hex")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  test("published inclusion and consistency proofs verify; altered ones do not", () => {
    const leaves = VECTOR_LEAVES.map((leaf) => leafHash(leaf));
    const path5 = ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b", "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0", "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"].map(hex);
    expect(verifyInclusion(5, 8, leaves[5]!, path5, VECTOR_ROOTS[7]!)).toBe(true);
    expect(verifyInclusion(4, 8, leaves[5]!, path5, VECTOR_ROOTS[7]!)).toBe(false);
    expect(verifyInclusion(5, 8, leaves[5]!, path5.slice(0, 2), VECTOR_ROOTS[7]!)).toBe(false);
    const proof68 = ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a", "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0", "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"].map(hex);
    expect(verifyConsistency(6, 8, VECTOR_ROOTS[5]!, VECTOR_ROOTS[7]!, proof68)).toBe(true);
    expect(verifyConsistency(6, 8, VECTOR_ROOTS[4]!, VECTOR_ROOTS[7]!, proof68)).toBe(false);
    expect(verifyConsistency(6, 8, VECTOR_ROOTS[5]!, VECTOR_ROOTS[7]!, [...proof68].reverse())).toBe(false);
    const proof28 = ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e", "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"].map(hex);
    expect(verifyConsistency(2, 8, VECTOR_ROOTS[1]!, VECTOR_ROOTS[7]!, proof28)).toBe(true);
    expect(verifyConsistency(8, 8, VECTOR_ROOTS[7]!, VECTOR_ROOTS[7]!, [])).toBe(true);
    expect(verifyConsistency(8, 8, VECTOR_ROOTS[7]!, VECTOR_ROOTS[6]!, [])).toBe(false);
  });

  test("every proof of the fixture tree verifies at every pair of sizes up to 70, and compact ranges match it", () => {
    const tree = new FixtureTree();
    for (let i = 0; i < 70; i++) tree.push(Buffer.from(`entry ${i}`));
    const range = new CompactRange();
    for (let n = 1; n <= 70; n++) {
      range.append(tree.leafHashes[n - 1]!);
      expect(Buffer.from(range.root()).equals(tree.root(n))).toBe(true);
      for (const m of [1, 2, 3, n - 1, Math.floor(n / 2)].filter((m) => m >= 1 && m < n)) {
        expect(verifyConsistency(m, n, tree.root(m), tree.root(n), tree.proof(m, n))).toBe(true);
      }
      expect(verifyInclusion(n - 1, n, tree.leafHashes[n - 1]!, tree.path(n - 1, n), tree.root(n))).toBe(true);
      // A compact range rebuilt from aligned subtree roots is the same range.
      const rebuilt = new CompactRange();
      for (const [start, size] of subtreesCovering(0, n)) rebuilt.appendSubtree(tree.hash(start, size), size);
      expect(rebuilt.encode()).toEqual(range.encode());
      expect(CompactRange.decode(n, range.encode()).encode()).toEqual(range.encode());
    }
    expect(() => CompactRange.decode(8, range.encode())).toThrow();
  });

  test("subtreesCovering splits any range into the largest aligned subtrees, beyond 32-bit sizes", () => {
    expect(subtreesCovering(0, 6)).toEqual([[0, 4], [4, 2]]);
    expect(subtreesCovering(5, 13)).toEqual([[5, 1], [6, 2], [8, 4], [12, 1]]);
    const big = 2 ** 40 + 3;
    expect(subtreesCovering(0, big)).toEqual([[0, 2 ** 40], [2 ** 40, 2], [2 ** 40 + 2, 1]]);
  });
});

describe("signed tree heads and checkpoints", () => {
  test("a get-sth answer is believed only when it verifies with the log's key (ECDSA P-256 and RSA)", () => {
    for (const type of ["ec", "rsa"] as const) {
      const key = fixtureKey(type);
      const logKey = readLogKey(key.spki.toString("base64"));
      const rootHash = createHash("sha256").update("root").digest();
      const sth = signedTreeHead(key, 1234, rootHash, 1_700_000_000_000);
      expect(readSignedTreeHead(sth, logKey)).toEqual({ size: 1234, root: new Uint8Array(rootHash), timestamp: 1_700_000_000_000 });
      expect(() => readSignedTreeHead({ ...sth, tree_size: 1235 }, logKey)).toThrow("does not verify");
      expect(() => readSignedTreeHead(signedTreeHead(fixtureKey(type), 1234, rootHash, 1), logKey)).toThrow("does not verify");
      expect(() => readSignedTreeHead({ tree_size: "12" }, logKey)).toThrow("lacks");
    }
  });

  test("a checkpoint is believed only from its origin, signed under the log's key ID, without extension lines", () => {
    const key = fixtureKey("ec");
    const logKey = readLogKey(key.spki.toString("base64"));
    const rootHash = createHash("sha256").update("root").digest();
    const note = checkpoint(key, "log.example/2026h1", 42, rootHash, 1_700_000_000_000);
    expect(readCheckpoint(note, logKey, "log.example/2026h1")).toEqual({ size: 42, root: new Uint8Array(rootHash), timestamp: 1_700_000_000_000 });
    // A witness's cosignature beside it is ignored.
    const witnessed = note + "\u2014 witness.example/w1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
    expect(readCheckpoint(witnessed, logKey, "log.example/2026h1").size).toBe(42);
    expect(() => readCheckpoint(note, logKey, "other.example/2026h1")).toThrow("not");
    expect(() => readCheckpoint(note.replace("\n42\n", "\n43\n"), logKey, "log.example/2026h1")).toThrow("does not verify");
    expect(() => readCheckpoint(checkpoint(fixtureKey("ec"), "log.example/2026h1", 42, rootHash, 1), logKey, "log.example/2026h1")).toThrow("not signed by the log's key");
    const extended = note.replace(`${rootHash.toString("base64")}\n`, `${rootHash.toString("base64")}\nextension\n`);
    expect(() => readCheckpoint(extended, logKey, "log.example/2026h1")).toThrow("extension lines");
    expect(() => readCheckpoint("garbage", logKey, "log.example/2026h1")).toThrow();
  });
});

describe("entries and certificates", () => {
  test("a logged certificate's names, issuer and validity read as @peculiar/x509 reads them", async () => {
    const issued = await issueThroughCt({ issuer: ca, dnsNames: ["Shop.Example.COM", "*.shop.example.com", "api.shop.example.com."], subject: "CN=shop.example.com, O=Shop Inc", logs: [] });
    const log = new FixtureLog({ kind: "rfc6962" });
    log.logCertificate(issued.certificate.rawData, [ca.cert.rawData], { timestamp: 1_700_000_000_123 });
    const entry = readMerkleTreeLeaf(log.leafInput(0));
    expect(entry.timestamp).toBe(1_700_000_000_123);
    expect(entry.precertificate).toBe(false);
    expect(Buffer.from(entry.leafHash).equals(log.tree.leafHashes[0]!)).toBe(true);
    const certificate = issued.certificate;
    expect(entry.fields).toEqual({
      dnsNames: ["shop.example.com", "*.shop.example.com", "api.shop.example.com"],
      issuerOrganization: certificate.issuerName.getField("O")[0]!,
      issuerCommonName: certificate.issuerName.getField("CN")[0]!,
      notBefore: certificate.notBefore.getTime(),
      notAfter: certificate.notAfter.getTime(),
    });
    expect(entry.fields!.issuerOrganization).toBe("Let's Encrypt, Inc.");
    expect(entryIdentity(entry).fingerprint).toBe(createHash("sha256").update(new Uint8Array(certificate.rawData)).digest("hex"));
  });

  test("a precertificate and its certificate share one issuance key: SHA-256 of the TBSCertificate without poison and SCTs", async () => {
    const rfc = new FixtureLog({ kind: "rfc6962" });
    const tiled = new FixtureLog({ kind: "tiled" });
    const issued = await issueThroughCt({ issuer: ca, dnsNames: ["pair.example.com"], logs: [rfc, tiled] });
    rfc.logCertificate(issued.certificate.rawData, issued.chain);
    tiled.logCertificate(issued.certificate.rawData, issued.chain);
    const [preRfc, certRfc] = [readMerkleTreeLeaf(rfc.leafInput(0)), readMerkleTreeLeaf(rfc.leafInput(1))];
    const tile = readDataTile(Buffer.concat(tiled.entries.map((e) => e.tileLeaf)), 2);
    expect(preRfc.precertificate).toBe(true);
    expect(tile[0]!.precertificate).toBe(true);
    const expected = createHash("sha256").update(tbsWithout(issued.certificate.rawData, SCT_LIST_OID)).digest("hex");
    expect(expected).toBe(createHash("sha256").update(tbsWithout(issued.precertificate.rawData, POISON_OID)).digest("hex"));
    for (const entry of [preRfc, certRfc, ...tile]) expect(entryIdentity(entry).issuanceKey).toBe(expected);
    expect(entryIdentity(preRfc).fingerprint).toBeNull();
    expect(entryIdentity(certRfc).fingerprint).toBe(createHash("sha256").update(new Uint8Array(issued.certificate.rawData)).digest("hex"));
    for (const entry of tile) expect(Buffer.from(entry.leafHash).equals(tiled.tree.leafHashes[tile.indexOf(entry)]!)).toBe(true);
    // Another issuance for the same name is another key.
    const other = await issueThroughCt({ issuer: ca, dnsNames: ["pair.example.com"], logs: [] });
    const otherLog = new FixtureLog({ kind: "rfc6962" });
    otherLog.logCertificate(other.certificate.rawData, other.chain);
    expect(entryIdentity(readMerkleTreeLeaf(otherLog.leafInput(0))).issuanceKey).not.toBe(expected);
  });

  test("a certificate that cannot be read matches nothing but keeps its leaf hash; a broken tile is refused", async () => {
    const log = new FixtureLog({ kind: "rfc6962" });
    log.logRaw(Buffer.concat([Buffer.alloc(8), Buffer.from([0, 0]), Buffer.from([0, 0, 3]), Buffer.from("abc"), Buffer.from([0, 0])]));
    const entry = readMerkleTreeLeaf(log.leafInput(0));
    expect(entry.fields).toBeNull();
    expect(Buffer.from(entry.leafHash).equals(log.tree.leafHashes[0]!)).toBe(true);
    expect(() => readDataTile(Buffer.from([1, 2, 3]), 1)).toThrow();
    expect(() => readMerkleTreeLeaf(Buffer.from([1, 0, 0]))).toThrow();
  });

  test("a get-entries answer reads the same however it is written (spaces, key order, escaped slashes)", async () => {
    const log = new FixtureLog({ kind: "rfc6962" });
    for (const name of ["a.example.com", "b.example.com", "c.example.com"]) {
      const issued = await issueThroughCt({ issuer: ca, dnsNames: [name], logs: [] });
      log.logCertificate(issued.certificate.rawData, issued.chain);
    }
    const leaves = [0, 1, 2].map((i) => log.leafInput(i).toString("base64"));
    const compact = JSON.stringify({ entries: leaves.map((leaf) => ({ leaf_input: leaf, extra_data: "AAAA" })) });
    const spaced = `{ "entries" : [\n${leaves.map((leaf) => `  { "extra_data" : "AAAA",\n    "leaf_input" :\t"${leaf}" }`).join(",\n")}\n] }`;
    const escaped = compact.replace(/\//g, "\\/");
    expect(escaped).toContain("\\/");
    const watches = { version: "1", domains: new Set(["example.com"]) };
    const decode = (text: string) => decodeChunk({ format: "get-entries", body: Buffer.from(text), gzip: false, first: 0 }, watches);
    const expected = decode(compact);
    expect(expected.candidates.map((c) => c.fields.dnsNames[0])).toEqual(["a.example.com", "b.example.com", "c.example.com"]);
    expect(Buffer.from(expected.roots.at(-1)!.hash).equals(log.tree.hash(2, 1))).toBe(true);
    for (const text of [spaced, escaped]) expect(decode(text)).toEqual(expected);
    expect(() => decode('{"entries": [')).toThrow("not JSON");
    expect(() => decode('{"entries": 3}')).toThrow("without an entries list");
  });

  test("issuanceKey hashes a TBSCertificate without those extensions as it is", async () => {
    const plain = await issueThroughCt({ issuer: ca, dnsNames: ["plain.example.com"], logs: [] });
    const asn = new x509.X509Certificate(plain.precertificate.rawData);
    const der = new Uint8Array(asn.rawData);
    const tbsStart = der[1]! & 0x80 ? 2 + (der[1]! & 0x7f) : 2;
    const tbsLength = (der[tbsStart + 2]! << 8) | der[tbsStart + 3]!;
    const tbs = { tag: 0x30, start: tbsStart, valueStart: tbsStart + 4, end: tbsStart + 4 + tbsLength };
    expect(issuanceKey(der, tbs)).toBe(createHash("sha256").update(tbsWithout(plain.precertificate.rawData, POISON_OID)).digest("hex"));
  });
});

describe("log lists and watch matching", () => {
  test("the log list gives usable, qualified and readonly logs of both kinds; others and unusable ones are left out", () => {
    const a = new FixtureLog({ kind: "rfc6962" });
    a.url = "https://ct.example.com/logs/a/";
    const b = new FixtureLog({ kind: "tiled" });
    b.url = "https://mon.example.com/b";
    const list = JSON.parse(logListJson([a, b]));
    list.operators[0].logs.push({ ...a.listEntry("retired"), url: "https://ct.example.com/retired/" });
    list.operators[0].logs.push({ ...a.listEntry("readonly"), url: "https://ct.example.com/readonly/" });
    list.operators[0].logs.push({ ...a.listEntry(), url: "https://ct.example.com/ed/", key: "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=", log_id: undefined });
    const parsed = parseLogList(JSON.stringify(list));
    expect(parsed.logs.map((log) => [log.kind, log.url, log.origin])).toEqual([
      ["rfc6962", "https://ct.example.com/logs/a/", null],
      ["rfc6962", "https://ct.example.com/readonly/", null],
      ["tiled", "https://mon.example.com/b/", b.origin],
    ]);
    expect(parsed.skipped).toEqual([{ log: "certkeeper test rfc6962 log", reason: "its key is ed25519, not ECDSA P-256 or RSA" }]);
    expect(() => parseLogList("{")).toThrow("not JSON");
    expect(() => parseLogList("{}")).toThrow("operators");
  });

  test("tile paths follow tlog-tiles", () => {
    expect(tileIndexPath(1234067)).toBe("x001/x234/067");
    expect(tileIndexPath(0)).toBe("000");
    expect(tileIndexPath(2 ** 40)).toBe("x001/x099/x511/x627/776");
  });

  test("a name matches a watch of its domain, and of a parent domain only when that watch includes subdomains", () => {
    const scope = { organizationId: "org_1", mode: "live" as const };
    const exact = watchRecord(scope, { domain: "example.com", includeSubdomains: false });
    const tree = watchRecord({ ...scope, organizationId: "org_2" }, { domain: "example.com", includeSubdomains: true });
    const deep = watchRecord(scope, { domain: "shop.example.com", includeSubdomains: true });
    const index = new WatchIndex([exact, tree, deep]);
    const ids = (names: string[]) => index.match(names).map((w) => w.id).sort();
    expect(ids(["example.com"])).toEqual([exact.id, tree.id].sort());
    expect(ids(["www.example.com"])).toEqual([tree.id]);
    expect(ids(["*.example.com"])).toEqual([tree.id]);
    expect(ids(["a.b.shop.example.com", "shop.example.com"])).toEqual([tree.id, deep.id].sort());
    expect(ids(["example.com.evil.test", "notexample.com"])).toEqual([]);
  });

  test("a matched watch carries exactly what its issuance and event need, for each organization and mode", () => {
    const live = watchRecord({ organizationId: "org_1", mode: "live" }, { domain: "example.com", allowedIssuers: ["Let's Encrypt"] });
    const trial = watchRecord({ organizationId: "org_2", mode: "test" }, { domain: "example.com", includeSubdomains: true });
    const index = new WatchIndex([live, trial]);
    const needed = ({ id, organizationId, mode, domain, includeSubdomains, allowedIssuers, createdAt }: typeof live) =>
      ({ id, organizationId, mode, domain, includeSubdomains, allowedIssuers, createdAt });
    const matched = index.match(["example.com"]).sort((a, b) => a.organizationId.localeCompare(b.organizationId));
    expect(matched).toEqual([needed(live), needed(trial)]);
  });
});
