/**
 * The fixture CT logs (test/support/ct_log_*.ts, ct_certs.ts) are what every follower test believes,
 * so they are held to sources other than certkeeper's code: their Merkle trees to RFC 6962's published
 * test vectors, their signatures (tree heads, checkpoints' RFC6962NoteSignature, SCTs) to the `openssl`
 * command, their served entries and tiles to a recomputation from the bytes served, and their
 * precertificates and certificates to @peculiar/x509's reading.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { FixtureTree, fixtureLeafHash, fixtureTileIndex, treeHeadSignatureInput } from "./support/ct_log_tree.ts";
import { startFixtureLog, type FixtureLog } from "./support/ct_log_server.ts";
import { issueThroughCt, POISON_OID, SCT_LIST_OID, tbsWithout } from "./support/ct_certs.ts";
import { createIntermediateCa, createRootCa, type Issued } from "./support/pki.ts";

const OPENSSL = "/usr/bin/openssl";
const haveOpenssl = existsSync(OPENSSL);
if (!haveOpenssl) console.warn("ct_fixtures: skipping the openssl signature checks: /usr/bin/openssl is missing (apt-get install openssl)");

const hex = (h: string) => Buffer.from(h, "hex");
/** RFC 6962's test data (the certificate-transparency project's reference leaves and roots). */
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
];

let dir: string;
let root: Issued;
let ca: Issued;
const logs: FixtureLog[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "certkeeper-ct-fixtures-"));
  root = await createRootCa();
  ca = await createIntermediateCa(root, { name: "CN=E7, O=Let's Encrypt, C=US" });
});
afterAll(async () => {
  for (const log of logs) await log.close();
  rmSync(dir, { recursive: true, force: true });
});

async function log(kind: "rfc6962" | "tiled", keyType: "ec" | "rsa" = "ec") {
  const started = await startFixtureLog({ kind, keyType });
  logs.push(started);
  return started;
}

/** Whether `openssl dgst -sha256 -verify` accepts `signature` over `input` with the log's public key. */
function opensslVerifies(spki: Buffer, input: Buffer, signature: Buffer): boolean {
  const name = crypto.randomUUID();
  const key = join(dir, `${name}.pub.der`);
  writeFileSync(key, spki);
  writeFileSync(join(dir, `${name}.in`), input);
  writeFileSync(join(dir, `${name}.sig`), signature);
  const result = Bun.spawnSync([OPENSSL, "dgst", "-sha256", "-keyform", "DER", "-verify", key, "-signature", join(dir, `${name}.sig`), join(dir, `${name}.in`)]);
  return result.exitCode === 0 && result.stdout.toString().includes("Verified OK");
}

/** The signature inside a DigitallySigned: after the two algorithm bytes and the 2-byte length. */
function signatureOf(digitallySigned: Buffer): Buffer {
  expect(digitallySigned[0]).toBe(4); // sha256
  expect(digitallySigned.readUInt16BE(2)).toBe(digitallySigned.length - 4);
  return digitallySigned.subarray(4);
}

describe("the fixture Merkle tree (RFC 6962 §2.1)", () => {
  test("gives the published root for every size of the reference leaves", () => {
    const tree = new FixtureTree();
    expect(tree.root(0).toString("hex")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    for (const leaf of VECTOR_LEAVES) tree.push(leaf);
    for (let n = 1; n <= 8; n++) expect(tree.root(n).toString("hex")).toBe(VECTOR_ROOTS[n - 1]!);
  });

  test("gives the published audit paths and consistency proofs", () => {
    const tree = new FixtureTree();
    for (const leaf of VECTOR_LEAVES) tree.push(leaf);
    expect(tree.path(0, 8).map((h) => h.toString("hex"))).toEqual([
      "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ]);
    expect(tree.path(5, 8).map((h) => h.toString("hex"))).toEqual([
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ]);
    expect(tree.proof(2, 8).map((h) => h.toString("hex"))).toEqual([
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ]);
    expect(tree.proof(6, 8).map((h) => h.toString("hex"))).toEqual([
      "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ]);
  });

  test("keeps the same roots when it remembers large subtrees", () => {
    const tree = new FixtureTree();
    const leaves = Array.from({ length: 700 }, (_, i) => Buffer.from(`leaf ${i}`));
    for (const leaf of leaves) tree.push(leaf);
    // A second, memo-free computation straight from the definition.
    const mth = (hashes: Buffer[]): Buffer => {
      if (hashes.length === 1) return hashes[0]!;
      let k = 1;
      while (k * 2 < hashes.length) k *= 2;
      return createHash("sha256").update(Buffer.from([1])).update(mth(hashes.slice(0, k))).update(mth(hashes.slice(k))).digest();
    };
    const hashes = leaves.map(fixtureLeafHash);
    for (const n of [1, 255, 256, 257, 512, 699, 700]) expect(tree.root(n).equals(mth(hashes.slice(0, n)))).toBe(true);
    expect(tree.hashTile(1, 0, 2).equals(Buffer.concat([mth(hashes.slice(0, 256)), mth(hashes.slice(256, 512))]))).toBe(true);
  });

  test("writes tile indexes as tlog-tiles says (x001/x234/067)", () => {
    expect(fixtureTileIndex(1234067)).toBe("x001/x234/067");
    expect(fixtureTileIndex(5)).toBe("005");
    expect(fixtureTileIndex(1000)).toBe("x001/000");
  });
});

describe("the fixture certificates", () => {
  test("a precertificate carries the critical poison, its certificate the SCTs instead, and nothing else differs", async () => {
    const a = await log("rfc6962");
    const b = await log("tiled", "rsa");
    const issued = await issueThroughCt({ issuer: ca, dnsNames: ["shop.fixture.test", "www.shop.fixture.test"], logs: [a, b] });
    const poison = issued.precertificate.getExtension(POISON_OID)!;
    expect(poison.critical).toBe(true);
    expect(Buffer.from(poison.value).toString("hex")).toBe("0500");
    expect(issued.certificate.getExtension(POISON_OID)).toBeNull();
    expect(issued.certificate.getExtension(SCT_LIST_OID)).not.toBeNull();
    expect(issued.certificate.serialNumber).toBe(issued.precertificate.serialNumber);
    expect(tbsWithout(issued.precertificate.rawData, POISON_OID).equals(tbsWithout(issued.certificate.rawData, SCT_LIST_OID))).toBe(true);
    expect(await issued.certificate.verify({ publicKey: ca.cert.publicKey, signatureOnly: true })).toBe(true);
  });

  test.skipIf(!haveOpenssl)("each embedded SCT verifies with its log's key (openssl) over the precertificate entry", async () => {
    const a = await log("rfc6962");
    const b = await log("tiled", "rsa");
    const issued = await issueThroughCt({ issuer: ca, dnsNames: ["sct.fixture.test"], logs: [a, b] });
    const value = Buffer.from(issued.certificate.getExtension(SCT_LIST_OID)!.value);
    // The extension value is an OCTET STRING around the TLS list.
    const list = value.subarray(value[1]! & 0x80 ? 2 + (value[1]! & 0x7f) : 2);
    let at = 2;
    const scts: Buffer[] = [];
    while (at < list.length) {
      const length = list.readUInt16BE(at);
      scts.push(list.subarray(at + 2, at + 2 + length));
      at += 2 + length;
    }
    expect(scts.length).toBe(2);
    for (const [sct, fixture] of [[scts[0]!, a], [scts[1]!, b]] as const) {
      expect(sct[0]).toBe(0); // v1
      expect(sct.subarray(1, 33).equals(fixture.key.logId)).toBe(true);
      const timestamp = sct.subarray(33, 41);
      const extensionsLength = sct.readUInt16BE(41);
      const extensions = sct.subarray(41, 43 + extensionsLength);
      const signed = sct.subarray(43 + extensionsLength);
      const input = Buffer.concat([
        Buffer.from([0, 0]),
        timestamp,
        Buffer.from([0, 1]),
        issued.submission.issuerKeyHash,
        Buffer.from([issued.submission.tbs.length >> 16, (issued.submission.tbs.length >> 8) & 0xff, issued.submission.tbs.length & 0xff]),
        issued.submission.tbs,
        extensions,
      ]);
      expect(opensslVerifies(fixture.key.spki, input, signatureOf(signed))).toBe(true);
    }
  });
});

describe("the fixture RFC 6962 log", () => {
  test.skipIf(!haveOpenssl)("signs get-sth heads that openssl verifies (ECDSA and RSA)", async () => {
    for (const keyType of ["ec", "rsa"] as const) {
      const fixture = await log("rfc6962", keyType);
      for (const name of ["a", "b", "c"]) fixture.logCertificate((await issueThroughCt({ issuer: ca, dnsNames: [`${name}.sth.test`], logs: [] })).certificate.rawData, [ca.cert.rawData]);
      fixture.publish();
      const sth = (await (await fetch(`${fixture.url}ct/v1/get-sth`)).json()) as Record<string, any>;
      expect(sth.tree_size).toBe(3);
      const input = treeHeadSignatureInput(sth.timestamp, sth.tree_size, Buffer.from(sth.sha256_root_hash, "base64"));
      expect(opensslVerifies(fixture.key.spki, input, signatureOf(Buffer.from(sth.tree_head_signature, "base64")))).toBe(true);
      fixture.badSignature = true;
      const bad = (await (await fetch(`${fixture.url}ct/v1/get-sth`)).json()) as Record<string, any>;
      expect(opensslVerifies(fixture.key.spki, input, signatureOf(Buffer.from(bad.tree_head_signature, "base64")))).toBe(false);
    }
  });

  test("serves entries whose leaf hashes rebuild its signed root, in batches of its limit", async () => {
    const fixture = await log("rfc6962");
    for (let i = 0; i < 70; i++) fixture.logCertificate((await issueThroughCt({ issuer: ca, dnsNames: [`e${i}.entries.test`], logs: [] })).certificate.rawData, [ca.cert.rawData]);
    fixture.publish();
    const tree = new FixtureTree();
    for (let start = 0; start < 70; ) {
      const { entries } = (await (await fetch(`${fixture.url}ct/v1/get-entries?start=${start}&end=69`)).json()) as { entries: Array<{ leaf_input: string }> };
      expect(entries.length).toBeLessThanOrEqual(64);
      for (const entry of entries) tree.push(Buffer.from(entry.leaf_input, "base64"));
      start += entries.length;
    }
    const sth = (await (await fetch(`${fixture.url}ct/v1/get-sth`)).json()) as Record<string, any>;
    expect(tree.root(70).toString("base64")).toBe(sth.sha256_root_hash);
  });
});

describe("the fixture tile log", () => {
  test.skipIf(!haveOpenssl)("signs checkpoints whose RFC6962NoteSignature openssl verifies, under the key ID static-ct-api defines", async () => {
    const fixture = await log("tiled");
    fixture.logCertificate((await issueThroughCt({ issuer: ca, dnsNames: ["note.tile.test"], logs: [] })).certificate.rawData, [ca.cert.rawData]);
    fixture.publish();
    const note = await (await fetch(`${fixture.url}checkpoint`)).text();
    const [origin, size, rootHash, blank, signatureLine] = note.split("\n");
    expect(origin).toBe(fixture.origin);
    expect(blank).toBe("");
    expect(signatureLine!.startsWith(`\u2014 ${fixture.origin} `)).toBe(true);
    const signature = Buffer.from(signatureLine!.split(" ").at(-1)!, "base64");
    const keyId = createHash("sha256").update(`${fixture.origin}\n`).update(Buffer.from([5])).update(fixture.key.logId).digest().subarray(0, 4);
    expect(signature.subarray(0, 4).equals(keyId)).toBe(true);
    const timestamp = Number(signature.readBigUInt64BE(4));
    const input = treeHeadSignatureInput(timestamp, Number(size), Buffer.from(rootHash!, "base64"));
    expect(opensslVerifies(fixture.key.spki, input, signatureOf(signature.subarray(12)))).toBe(true);
  });

  test("serves data tiles (gzip) whose TileLeaf entries hash to its level-0 tiles, and hash tiles that rebuild its root", async () => {
    const fixture = await log("tiled");
    const count = 300;
    // Ten issuances logged again and again, certificates and precertificates in turn (each entry still
    // its own: its index and timestamp): the tiles' layout is what is read.
    const issued = [];
    for (let i = 0; i < 10; i++) issued.push(await issueThroughCt({ issuer: ca, dnsNames: [`t${i}.tiles.test`], logs: [] }));
    for (let i = 0; i < count; i++) {
      const one = issued[i % issued.length]!;
      if (i % 2) fixture.logPrecertificate(one.submission);
      else fixture.logCertificate(one.certificate.rawData, [ca.cert.rawData, root.cert.rawData]);
    }
    fixture.publish();
    const size = fixture.head.size;
    const get = async (path: string) => {
      const response = await fetch(`${fixture.url}${path}`, { headers: { "accept-encoding": "identity" }, decompress: false } as RequestInit);
      expect(response.status).toBe(200);
      const body = Buffer.from(await response.arrayBuffer());
      return response.headers.get("content-encoding") === "gzip" ? gunzipSync(body) : body;
    };
    // Parse the tiles by the static-ct-api TileLeaf layout, hash each MerkleTreeLeaf, compare.
    const leafHashes: Buffer[] = [];
    for (const [index, width] of [[0, 256], [1, size - 256]] as const) {
      const tile = await get(`tile/data/${fixtureTileIndex(index)}${width < 256 ? `.p/${width}` : ""}`);
      let at = 0;
      while (at < tile.length) {
        const start = at;
        const type = tile.readUInt16BE(at + 8);
        at += 10;
        if (type === 1) at += 32;
        at += 3 + tile.readUIntBE(at, 3);
        at += 2 + tile.readUInt16BE(at);
        leafHashes.push(fixtureLeafHash(Buffer.concat([Buffer.from([0, 0]), tile.subarray(start, at)])));
        if (type === 1) at += 3 + tile.readUIntBE(at, 3);
        at += 2 + tile.readUInt16BE(at);
      }
      const level0 = await get(`tile/0/${fixtureTileIndex(index)}${width < 256 ? `.p/${width}` : ""}`);
      expect(level0.equals(Buffer.concat(leafHashes.slice(index * 256, index * 256 + width)))).toBe(true);
    }
    expect(leafHashes.length).toBe(size);
    const rebuilt = new FixtureTree();
    rebuilt.leafHashes.push(...leafHashes);
    const note = await (await fetch(`${fixture.url}checkpoint`)).text();
    expect(rebuilt.root(size).toString("base64")).toBe(note.split("\n")[2]!);
    const level1 = await get("tile/1/000.p/1");
    expect(level1.equals(rebuilt.hash(0, 256))).toBe(true);
    // No partial tile beyond the published size, and no full tile that is not full.
    expect((await fetch(`${fixture.url}tile/data/001`)).status).toBe(404);
    expect((await fetch(`${fixture.url}tile/data/001.p/${size - 255}`)).status).toBe(404);
  });

  test("logs precertificates with the TileLeaf's pre_certificate and a leaf_index extension", async () => {
    const fixture = await log("tiled");
    fixture.logCertificate((await issueThroughCt({ issuer: ca, dnsNames: ["first.tiles.test"], logs: [] })).certificate.rawData, [ca.cert.rawData]);
    const issued = await issueThroughCt({ issuer: ca, dnsNames: ["pre.tiles.test"], logs: [fixture] });
    fixture.publish();
    const leaf = fixture.entries[1]!.tileLeaf;
    expect(leaf.readUInt16BE(8)).toBe(1);
    expect(leaf.subarray(10, 42).equals(issued.submission.issuerKeyHash)).toBe(true);
    const tbsLength = leaf.readUIntBE(42, 3);
    expect(leaf.subarray(45, 45 + tbsLength).equals(issued.submission.tbs)).toBe(true);
    const extensions = leaf.subarray(45 + tbsLength + 2, 45 + tbsLength + 2 + leaf.readUInt16BE(45 + tbsLength));
    expect(extensions.toString("hex")).toBe("0000050000000001"); // leaf_index 1
    const after = 45 + tbsLength + 2 + extensions.length;
    const precert = leaf.subarray(after + 3, after + 3 + leaf.readUIntBE(after, 3));
    expect(new x509.X509Certificate(new Uint8Array(precert)).getExtension(POISON_OID)).not.toBeNull();
  });
});
