/**
 * DANE verdicts (CONTRACT §22, RFC 6698 §2.1.3, RFC 7672 §3.1) at edges the daemon tests do not reach:
 * a digest longer than its matching type's is as unusable as a shorter one. Certificates from the
 * test PKI; the verdict is what each endpoint's `dane` shows.
 */
import { describe, expect, test } from "bun:test";
import { createHash, X509Certificate } from "node:crypto";
import type { TlsaRecord } from "../core/base/records.ts";
import { daneVerdict } from "../core/dns/mod.ts";
import { testPki } from "./support/harness.ts";
import { createLeaf } from "./support/pki.ts";

const record = (usage: number, selector: number, matchingType: number, data: string): TlsaRecord => ({ usage, selector, matchingType, data });

async function served() {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: ["mx1.example.com"], freshKey: true });
  const ders = [new Uint8Array(leaf.cert.rawData), new Uint8Array(rsaIntermediate.cert.rawData)];
  const spki = new X509Certificate(Buffer.from(ders[0]!)).publicKey.export({ type: "spki", format: "der" });
  const issuerSpki = new X509Certificate(Buffer.from(ders[1]!)).publicKey.export({ type: "spki", format: "der" });
  return { chain: { ders, leafNames: ["mx1.example.com"], referenceNames: ["mx1.example.com"] }, spki, issuerSpki };
}

const verdict = (records: TlsaRecord[], chain: Parameters<typeof daneVerdict>[1]) => daneVerdict({ name: "_25._tcp.mx1.example.com", validated: true, records }, chain);

describe("digest lengths (RFC 6698 §2.1.3)", () => {
  test("a 3 1 1 whose data is longer than a SHA-256 digest, or a 3 1 2 longer than a SHA-512 one, is unusable: none, not mismatch", async () => {
    const { chain, spki } = await served();
    const sha256 = createHash("sha256").update(spki).digest("hex");
    const sha512 = createHash("sha512").update(spki).digest("hex");
    expect(verdict([record(3, 1, 1, sha256)], chain).status).toBe("match");
    expect(verdict([record(3, 1, 1, `${sha256}00`)], chain)).toEqual({ status: "none", validated: true });
    expect(verdict([record(3, 1, 2, `${sha512}00`)], chain)).toEqual({ status: "none", validated: true });
  });

  test("an exact-match record (matching type 0) with no data at all is unusable: none", async () => {
    const { chain } = await served();
    expect(verdict([record(3, 1, 0, ""), record(2, 0, 0, "")], chain)).toEqual({ status: "none", validated: true });
  });
});

describe("DANE-EE (usage 3) pins the leaf alone (RFC 7672 §3.1.1)", () => {
  test("a 3 1 1 record of the intermediate the server sends is a mismatch; the same data as 2 1 1 matches", async () => {
    const { chain, issuerSpki } = await served();
    const data = createHash("sha256").update(issuerSpki).digest("hex");
    expect(verdict([record(3, 1, 1, data)], chain)).toEqual({ status: "mismatch", validated: true });
    expect(verdict([record(2, 1, 1, data)], chain)).toEqual({ status: "match", validated: true });
  });
});

describe("DANE-TA (usage 2) needs the leaf to chain to the anchor (RFC 7672 §3.1.2)", () => {
  test("a certificate the server sends that did not issue the leaf (nor anything on its path) is no trust anchor: mismatch", async () => {
    const { chain } = await served();
    const stranger = await createLeaf({ dnsNames: ["stranger.example.net"], freshKey: true });
    const strangerDer = new Uint8Array(stranger.cert.rawData);
    const strangerSpki = new X509Certificate(Buffer.from(strangerDer)).publicKey.export({ type: "spki", format: "der" });
    const withStranger = { ...chain, ders: [chain.ders[0]!, strangerDer, chain.ders[1]!] };
    expect(verdict([record(2, 1, 1, createHash("sha256").update(strangerSpki).digest("hex"))], withStranger)).toEqual({ status: "mismatch", validated: true });
    expect(verdict([record(2, 0, 1, createHash("sha256").update(strangerDer).digest("hex"))], withStranger)).toEqual({ status: "mismatch", validated: true });
  });
});

describe("a rollover's worth of 2 1 0 records (RFC 7671 §5.2.2, §8.1)", () => {
  test("anchors of the next CAs published before the current one: the current root's key still matches", async () => {
    const { chain } = await served();
    const { root, strangerRoot, ecIntermediate } = await testPki();
    const key = (der: ArrayBuffer) => Buffer.from(new X509Certificate(Buffer.from(der)).publicKey.export({ type: "spki", format: "der" })).toString("hex");
    const others = [];
    for (let i = 0; i < 4; i++) others.push(key((await createLeaf({ dnsNames: [`next${i}.example.net`], freshKey: true })).cert.rawData));
    const records = [...others, key(strangerRoot.cert.rawData), key(ecIntermediate.cert.rawData), key(root.cert.rawData)].map((data) => record(2, 1, 0, data));
    expect(verdict(records, chain)).toEqual({ status: "match", validated: true });
  });
});

describe("DANE-TA anchors above the first intermediate", () => {
  test("the root sent at the top of leaf, intermediate, root: a 2 1 1 or 2 0 1 of the root matches", async () => {
    const { chain } = await served();
    const { root } = await testPki();
    const rootDer = new Uint8Array(root.cert.rawData);
    const rootSpki = new X509Certificate(Buffer.from(rootDer)).publicKey.export({ type: "spki", format: "der" });
    const full = { ...chain, ders: [...chain.ders, rootDer] };
    expect(verdict([record(2, 1, 1, createHash("sha256").update(rootSpki).digest("hex"))], full)).toEqual({ status: "match", validated: true });
    expect(verdict([record(2, 0, 1, createHash("sha256").update(rootDer).digest("hex"))], full)).toEqual({ status: "match", validated: true });
  });
});
