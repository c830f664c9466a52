/**
 * The rules CONTRACT §22 judges by, on their own: CAA (RFC 8659 §4: issue, issuewild, critical flags,
 * the issuer mapping), DANE matching (RFC 6698 usages 2 and 3, selectors, matching types; TLSA data
 * computed by openssl from the test certificates) and MTA-STS records, policies and mx patterns (RFC 8461).
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CaaRecord, TlsaRecord } from "../core/base/records.ts";
import { BUILT_IN_CAA_IDENTITIES, daneVerdict, issuerDomainOf, judgeCaa, mxMatches, parseStsPolicy, parseStsRecords, presentCaaRecord, type CaaSet } from "../core/dns/mod.ts";
import { parseResolvConf } from "../core/dns/mod.ts";
import { parseCaaIdentities } from "../core/config/mod.ts";
import { createLeaf } from "./support/pki.ts";
import { testPki } from "./support/harness.ts";

const LE = ["Let's Encrypt", "R10"];

function caa(flags: number, tag: string, value: string): CaaRecord {
  return { flags, tag, value };
}

function judge(options: { domain?: string; sans?: string[]; issuer?: string[]; sets: CaaSet[]; identities?: { name: string; domain: string }[] }) {
  const domain = options.domain ?? "www.example.com";
  return judgeCaa({
    domain,
    subjectAlternativeNames: options.sans ?? [domain],
    issuerNames: options.issuer ?? LE,
    identities: [...(options.identities ?? []), ...BUILT_IN_CAA_IDENTITIES],
    sets: new Map(options.sets.map((set) => [set.from, set])),
  });
}

const at = (from: string, setAt: string | null, records: CaaRecord[]): CaaSet => ({ from, setAt, records });

describe("CAA (RFC 8659)", () => {
  test("no record set on the way up: no_records, nothing forbidden", () => {
    expect(judge({ sets: [at("www.example.com", null, [])] })).toEqual({ status: "no_records", issuerDomain: "letsencrypt.org", blocking: null });
  });

  test("an issue record naming the issuer's CA domain permits it, case aside, parameters not judged", () => {
    for (const value of ["letsencrypt.org", "LetsEncrypt.ORG", " letsencrypt.org ; validationmethods=dns-01; accounturi=https://acme/acct/1"]) {
      expect(judge({ sets: [at("www.example.com", "example.com", [caa(0, "issue", value)])] }).status).toBe("permitted");
    }
  });

  test("issue records naming other CAs forbid the issuer: the set, where it is, the record to add and the issuer names it blocks are named", () => {
    const verdict = judge({ sets: [at("www.example.com", "example.com", [caa(0, "issue", "digicert.com"), caa(0, "iodef", "mailto:sec@example.com")])] });
    expect(verdict).toEqual({
      status: "forbidden",
      issuerDomain: "letsencrypt.org",
      blocking: {
        name: "www.example.com",
        setAt: "example.com",
        property: "issue",
        reason: "not_listed",
        records: ['0 iodef "mailto:sec@example.com"', '0 issue "digicert.com"'],
        key: expect.stringMatching(/^[0-9a-f]{32}$/),
        issuers: ["let's encrypt"],
      },
    });
  });

  test("the issuer names a verdict blocks are every name of its CA that the same record set forbids", () => {
    const blocked = (issuer: string[], value: string, identities: { name: string; domain: string }[] = []) =>
      judge({ issuer, identities, sets: [at("www.example.com", "example.com", [caa(0, "issue", value)])] }).blocking?.issuers;
    const sectigo = ["Sectigo Limited", "Sectigo RSA Domain Validation Secure Server CA"];
    expect(blocked(sectigo, "letsencrypt.org")).toEqual(["zerossl", "sectigo", "sectigo limited"]);
    // A pair adds a domain to one of the CA's names: a set naming it lets that name issue, not the others.
    const zerossl = [{ name: "ZeroSSL", domain: "zerossl.example" }];
    expect(blocked(sectigo, "zerossl.example", zerossl)).toEqual(["sectigo", "sectigo limited"]);
    expect(blocked(sectigo, "letsencrypt.org", zerossl)).toEqual(["zerossl", "sectigo", "sectigo limited"]);
    // A pair configured for one of a built-in CA's names keeps the CA's other names its own.
    const digicert = [{ name: "DigiCert Inc", domain: "digicert.example" }];
    expect(blocked(["DigiCert Inc", "DigiCert TLS RSA SHA256 2020 CA1"], "letsencrypt.org", digicert)).toEqual(["digicert inc", "digicert", "digicert, inc."]);
    // Another CA's names are never the verdict's.
    expect(blocked(["Let's Encrypt", "R10"], "pki.goog")).toEqual(["let's encrypt"]);
  });

  test('an empty issuer (";") forbids every CA; a value that does not parse authorizes nobody', () => {
    expect(judge({ sets: [at("www.example.com", "example.com", [caa(0, "issue", ";")])] }).status).toBe("forbidden");
    expect(judge({ sets: [at("www.example.com", "example.com", [caa(0, "issue", "letsencrypt.org!")])] }).status).toBe("forbidden");
    expect([issuerDomainOf(";"), issuerDomainOf(""), issuerDomainOf("lets encrypt.org"), issuerDomainOf("-le.org")]).toEqual([null, null, null, null]);
  });

  test("a value outside RFC 8659 §4.2's grammar is treated as an empty issuer: a parameter that is no tag=value, white space other than space and tab", () => {
    const verdict = (value: string) => judge({ sets: [at("www.example.com", "example.com", [caa(0, "issue", value)])] }).status;
    // Within the grammar: space and tab around the name and parameters, tag=value parameters (hyphens, empty values), a lone ";".
    for (const value of ["letsencrypt.org", " \tletsencrypt.org \t; validationmethods=dns-01 ;accounturi=https://acme/acct/1 ", "letsencrypt.org;", "LetsEncrypt.ORG; a-b="]) {
      expect({ value, status: verdict(value) }).toEqual({ value, status: "permitted" });
    }
    for (const value of [
      "%%%%%",
      "letsencrypt.org; validationmethods",
      "letsencrypt.org; =dns-01",
      "letsencrypt.org; accounturi=https://acme/acct/1 x",
      "letsencrypt.org; validationmethods=dns-01;",
      "letsencrypt.org\n",
      "\u00a0letsencrypt.org",
      "\ufeffletsencrypt.org",
    ]) {
      expect({ value, status: verdict(value) }).toEqual({ value, status: "forbidden" });
    }
  });

  test("an issuer whose organization holds a comma is named in CERTKEEPER_CAA_IDENTITIES with \\,", () => {
    const identities = parseCaaIdentities("Internal CA=pki.corp.example,Entrust\\, Inc.=entrust.net");
    const issuer = ["Entrust, Inc.", "Entrust Certification Authority - L1K"];
    expect(judge({ issuer, identities, sets: [at("www.example.com", "example.com", [caa(0, "issue", "entrust.net")])] })).toMatchObject({ status: "permitted", issuerDomain: "entrust.net" });
    expect(judge({ issuer, identities, sets: [at("www.example.com", "example.com", [caa(0, "issue", "letsencrypt.org")])] })).toMatchObject({ status: "forbidden", issuerDomain: "entrust.net" });
  });

  test("a set without issue properties (iodef alone) restricts nothing", () => {
    expect(judge({ sets: [at("www.example.com", "example.com", [caa(0, "iodef", "mailto:a@example.com")])] }).status).toBe("permitted");
  });

  test("a critical property of a tag no CA knows forbids every CA; a critical known tag is just a tag", () => {
    const unknown = judge({ sets: [at("www.example.com", "example.com", [caa(0, "issue", "letsencrypt.org"), caa(128, "tbs", "unknown")])] });
    expect([unknown.status, unknown.blocking?.reason, unknown.blocking?.records]).toEqual(["forbidden", "critical", ['0 issue "letsencrypt.org"', '128 tbs "unknown"']]);
    expect(judge({ sets: [at("www.example.com", "example.com", [caa(128, "issue", "letsencrypt.org")])] }).status).toBe("permitted");
    expect(judge({ sets: [at("www.example.com", "example.com", [caa(0, "issue", "letsencrypt.org"), caa(0, "tbs", "unknown")])] }).status).toBe("permitted");
  });

  test("a wildcard SAN covering the name is judged as *.<base>, by issuewild when the base's set has it, else by issue", () => {
    const sans = ["*.example.com"];
    const wildForbids = judge({ sans, sets: [at("example.com", "example.com", [caa(0, "issue", "letsencrypt.org"), caa(0, "issuewild", "digicert.com")])] });
    expect([wildForbids.status, wildForbids.blocking?.name, wildForbids.blocking?.property]).toEqual(["forbidden", "*.example.com", "issuewild"]);
    expect(judge({ sans, sets: [at("example.com", "example.com", [caa(0, "issue", "letsencrypt.org")])] }).status).toBe("permitted");
    expect(judge({ sans, sets: [at("example.com", "example.com", [caa(0, "issue", "digicert.com"), caa(0, "issuewild", "letsencrypt.org")])] }).status).toBe("permitted");
    expect(judge({ sans, sets: [at("example.com", "example.com", [caa(0, "issuewild", ";")])] }).status).toBe("forbidden");
  });

  test("issuewild is ignored for a name a SAN names exactly; with both SANs both names are judged", () => {
    const records = [caa(0, "issue", "letsencrypt.org"), caa(0, "issuewild", "digicert.com")];
    expect(judge({ sans: ["www.example.com"], sets: [at("www.example.com", "example.com", records)] }).status).toBe("permitted");
    const both = judge({ sans: ["www.example.com", "*.example.com"], sets: [at("www.example.com", "example.com", records), at("example.com", "example.com", records)] });
    expect([both.status, both.blocking?.name]).toEqual(["forbidden", "*.example.com"]);
  });

  test("the usual example.com + *.example.com checked under its apex: the wildcard below it is judged too, by issuewild on the apex's set", () => {
    const sans = ["example.com", "*.example.com"];
    const wild = judge({ domain: "example.com", sans, sets: [at("example.com", "example.com", [caa(0, "issue", "letsencrypt.org"), caa(0, "issuewild", ";")])] });
    expect([wild.status, wild.blocking?.name, wild.blocking?.property]).toEqual(["forbidden", "*.example.com", "issuewild"]);
    expect(judge({ domain: "example.com", sans, sets: [at("example.com", "example.com", [caa(0, "issue", "letsencrypt.org")])] }).status).toBe("permitted");
    // Without the wildcard SAN, issuewild says nothing about the apex.
    expect(judge({ domain: "example.com", sans: ["example.com"], sets: [at("example.com", "example.com", [caa(0, "issue", "letsencrypt.org"), caa(0, "issuewild", ";")])] }).status).toBe("permitted");
  });

  test("an issuer with no known CAA domain is not judged, whatever the records say", () => {
    expect(judge({ issuer: ["Internal Issuing CA"], sets: [at("www.example.com", "example.com", [caa(0, "issue", ";")])] })).toEqual({
      status: "not_judged",
      issuerDomain: null,
      blocking: null,
    });
  });

  test("the built-in names include the organization names the CAs put in certificates; configured pairs come first", () => {
    const records = [caa(0, "issue", "digicert.com")];
    expect(judge({ issuer: ["DigiCert Inc", "DigiCert Global G2 TLS RSA SHA256 2020 CA1"], sets: [at("www.example.com", "example.com", records)] }).status).toBe("permitted");
    expect(judge({ issuer: ["Sectigo Limited", "Sectigo RSA Domain Validation Secure Server CA"], sets: [at("www.example.com", "example.com", records)] }).issuerDomain).toBe("sectigo.com");
    expect(judge({ issuer: ["ZeroSSL", "ZeroSSL RSA Domain Secure Site CA"], sets: [at("www.example.com", "example.com", records)] }).issuerDomain).toBe("sectigo.com");
    expect(judge({ issuer: ["Google Trust Services", "WR1"], sets: [at("www.example.com", "example.com", records)] }).issuerDomain).toBe("pki.goog");
    const internal = judge({ issuer: ["Acme Corp", "Acme Issuing CA 2"], identities: [{ name: "acme issuing ca 2", domain: "digicert.com" }], sets: [at("www.example.com", "example.com", records)] });
    expect([internal.status, internal.issuerDomain]).toEqual(["permitted", "digicert.com"]);
    const overridden = judge({ identities: [{ name: "Let's Encrypt", domain: "digicert.com" }], sets: [at("www.example.com", "example.com", records)] });
    expect(overridden.status).toBe("permitted");
  });

  test("a set's key names its place and records, whatever their order", () => {
    const key = (records: CaaRecord[], setAt = "example.com") => judge({ sets: [at("www.example.com", setAt, records)] }).blocking!.key;
    const a = caa(0, "issue", "digicert.com");
    const b = caa(0, "issue", "sectigo.com");
    expect(key([a, b])).toBe(key([b, a]));
    expect(key([a, b])).not.toBe(key([a]));
    expect(key([a], "www.example.com")).not.toBe(key([a]));
    expect(presentCaaRecord(caa(0, "issue", 'a"b\\c'))).toBe('0 issue "a\\"b\\\\c"');
  });
});

const opensslMissing = existsSync("/usr/bin/openssl") ? null : "openssl not installed";
if (opensslMissing) console.warn(`dns_rules.test.ts: the DANE tests are skipped: ${opensslMissing}`);

/** TLSA data as DANE operators compute it with openssl: the SPKI (selector 1) or the certificate (0), hashed. */
function openssl(pem: string, selector: 0 | 1, hash: "sha256" | "sha512" | null): string {
  const der = selector === 1 ? execFileSync("openssl", ["pkey", "-pubin", "-outform", "DER"], { input: execFileSync("openssl", ["x509", "-pubkey", "-noout"], { input: pem }) }) : execFileSync("openssl", ["x509", "-outform", "DER"], { input: pem });
  return hash ? execFileSync("openssl", ["dgst", `-${hash}`, "-r"], { input: der }).toString().split(" ")[0]! : der.toString("hex");
}

describe.skipIf(Boolean(opensslMissing))("DANE matching (RFC 6698, RFC 7672)", () => {
  async function chain(options: { dnsNames?: string[]; daysLeft?: number } = {}) {
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: options.dnsNames ?? ["mx1.example.com"], daysLeft: options.daysLeft, freshKey: true });
    const served = { ders: [new Uint8Array(leaf.cert.rawData), new Uint8Array(rsaIntermediate.cert.rawData)], leafNames: options.dnsNames ?? ["mx1.example.com"], referenceNames: ["mx1.example.com"] };
    return { leaf, intermediate: rsaIntermediate, served };
  }
  const record = (usage: number, selector: number, matchingType: number, data: string): TlsaRecord => ({ usage, selector, matchingType, data });
  const verdict = (records: TlsaRecord[], served: Parameters<typeof daneVerdict>[1], validated = true) => daneVerdict({ name: "_25._tcp.mx1.example.com", validated, records }, served);

  test("DANE-EE (3): the leaf's SPKI or whole certificate, exact, SHA-256 or SHA-512, as openssl computes it", async () => {
    const { leaf, served } = await chain();
    for (const [selector, matching, hash] of [[1, 1, "sha256"], [1, 2, "sha512"], [1, 0, null], [0, 1, "sha256"], [0, 0, null]] as const) {
      expect(verdict([record(3, selector, matching, openssl(leaf.certPem, selector, hash))], served)).toEqual({ status: "match", validated: true });
    }
  });

  test("DANE-EE ignores the leaf's dates and names (RFC 7672 §3.1.1)", async () => {
    const { leaf, served } = await chain({ dnsNames: ["other.example.net"], daysLeft: -3 });
    expect(verdict([record(3, 1, 1, openssl(leaf.certPem, 1, "sha256"))], served, false)).toEqual({ status: "match", validated: false });
  });

  test("a key that changed at renewal no longer matches: mismatch", async () => {
    const { leaf } = await chain();
    const renewed = await chain();
    expect(verdict([record(3, 1, 1, openssl(leaf.certPem, 1, "sha256"))], renewed.served).status).toBe("mismatch");
  });

  test("DANE-TA (2): a certificate the server sent above the leaf, the leaf chaining to it and naming the host", async () => {
    const { intermediate, served } = await chain();
    const ta = record(2, 0, 1, openssl(intermediate.certPem, 0, "sha256"));
    expect(verdict([ta], served).status).toBe("match");
    expect(verdict([record(2, 1, 1, openssl(intermediate.certPem, 1, "sha256"))], served).status).toBe("match");
    expect(verdict([ta], { ...served, leafNames: ["other.example.net"] }).status).toBe("mismatch");
    // The anchor must be sent: a chain of the leaf alone does not reach it.
    expect(verdict([ta], { ...served, ders: served.ders.slice(0, 1) }).status).toBe("mismatch");
  });

  test("a sent certificate whose key this runtime cannot read (Ed448) is passed over: the anchor above it still matches, no throw", async () => {
    const { intermediate, served } = await chain();
    const dir = mkdtempSync(join(tmpdir(), "certkeeper-ed448-"));
    execFileSync("openssl", ["genpkey", "-algorithm", "ed448", "-out", join(dir, "k.pem")]);
    execFileSync("openssl", ["req", "-x509", "-new", "-key", join(dir, "k.pem"), "-subj", "/CN=extra", "-days", "30", "-out", join(dir, "c.pem")]);
    const ed448 = new Uint8Array(Buffer.from(readFileSync(join(dir, "c.pem"), "utf8").replace(/-----[^-]+-----|\s/g, ""), "base64"));
    rmSync(dir, { recursive: true, force: true });
    const withExtra = { ...served, ders: [served.ders[0]!, ed448, served.ders[1]!] };
    expect(verdict([record(2, 1, 1, openssl(intermediate.certPem, 1, "sha256"))], withExtra)).toEqual({ status: "match", validated: true });
    expect(verdict([record(2, 1, 1, "00".repeat(32))], withExtra)).toEqual({ status: "mismatch", validated: true });
  });

  test("DANE-TA 2 1 0 (the anchor's whole key) needs no anchor sent: the top of the sent chain, or the leaf alone, signed under that key matches (RFC 7671, 5.2.2)", async () => {
    const { root } = await testPki();
    const { intermediate, served } = await chain();
    // The root's key; the server sends leaf + intermediate.
    expect(verdict([record(2, 1, 0, openssl(root.certPem, 1, null))], served)).toEqual({ status: "match", validated: true });
    // The intermediate's key; the server sends the leaf alone.
    const leafAlone = { ...served, ders: served.ders.slice(0, 1) };
    expect(verdict([record(2, 1, 0, openssl(intermediate.certPem, 1, null))], leafAlone).status).toBe("match");
    // The leaf must still name the host, and a hash of the key (2 1 1) still needs the anchor sent.
    expect(verdict([record(2, 1, 0, openssl(root.certPem, 1, null))], { ...served, leafNames: ["other.example.net"] }).status).toBe("mismatch");
    expect(verdict([record(2, 1, 1, openssl(root.certPem, 1, "sha256"))], served).status).toBe("mismatch");
    // A key that signed nothing sent, or data that is no key: mismatch, no throw.
    const other = await chain();
    expect(verdict([record(2, 1, 0, openssl(other.leaf.certPem, 1, null))], served).status).toBe("mismatch");
    expect(verdict([record(2, 1, 0, "00ff")], served).status).toBe("mismatch");
  });

  test("DANE-TA 2 0 0 (the anchor's whole certificate) needs no anchor sent either: a certificate on the path it issued matches (RFC 7671, 5.2.2)", async () => {
    const { root } = await testPki();
    const { intermediate, served } = await chain();
    const full = (pem: string) => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64").toString("hex");
    // The root in full, the server sending leaf + intermediate; the intermediate in full, the leaf alone.
    expect(verdict([record(2, 0, 0, full(root.certPem))], served)).toEqual({ status: "match", validated: true });
    expect(verdict([record(2, 0, 0, full(intermediate.certPem))], { ...served, ders: served.ders.slice(0, 1) })).toEqual({ status: "match", validated: true });
    // The leaf must still name the host; a certificate that issued nothing sent, the leaf itself, or data that is no certificate: mismatch, no throw.
    expect(verdict([record(2, 0, 0, full(root.certPem))], { ...served, leafNames: ["other.example.net"] }).status).toBe("mismatch");
    const other = await chain();
    expect(verdict([record(2, 0, 0, full(other.leaf.certPem))], served).status).toBe("mismatch");
    expect(verdict([record(2, 0, 0, Buffer.from(served.ders[0]!).toString("hex"))], { ...served, ders: served.ders.slice(0, 1) }).status).toBe("mismatch");
    expect(verdict([record(2, 0, 0, "3000")], served).status).toBe("mismatch");
  });

  test("DANE-TA 2 1 0 of a self-signed leaf's own key is no anchor above it: mismatch", async () => {
    const selfSigned = await createLeaf({ dnsNames: ["mx1.example.com"] });
    const served = { ders: [new Uint8Array(selfSigned.cert.rawData)], leafNames: ["mx1.example.com"], referenceNames: ["mx1.example.com"] };
    expect(verdict([record(2, 1, 0, openssl(selfSigned.certPem, 1, null))], served).status).toBe("mismatch");
  });

  test("DANE-TA naming the leaf itself is no trust anchor above it: mismatch", async () => {
    const { leaf, served } = await chain();
    expect(verdict([record(2, 1, 1, openssl(leaf.certPem, 1, "sha256"))], served).status).toBe("mismatch");
  });

  test("usages 0 and 1 (PKIX), unknown selectors and matching types are unusable for SMTP: none when nothing else is published", async () => {
    const { leaf, served } = await chain();
    const spki = openssl(leaf.certPem, 1, "sha256");
    expect(verdict([record(0, 1, 1, spki), record(1, 1, 1, spki), record(3, 2, 1, spki), record(3, 1, 3, spki)], served)).toEqual({ status: "none", validated: true });
    expect(verdict([], served, false)).toEqual({ status: "none", validated: false });
    expect(verdict([record(1, 1, 1, spki), record(3, 1, 1, spki)], served).status).toBe("match");
  });
});

describe("MTA-STS (RFC 8461)", () => {
  test("the TXT record: exactly one starting v=STSv1 with an id of 1-32 letters and digits, else no policy", () => {
    expect(parseStsRecords(["v=STSv1; id=20260101T010203;"])).toEqual({ id: "20260101T010203" });
    expect(parseStsRecords(["v=spf1 -all", "v=STSv1;id=abc"])).toEqual({ id: "abc" });
    expect(parseStsRecords([])).toBeNull();
    expect(parseStsRecords(["v=STSv1; id=a", "v=STSv1; id=b"])).toBeNull();
    expect(parseStsRecords(["v=STSv1;"])).toBeNull();
    expect(parseStsRecords(["v=STSv1; id=not-alnum"])).toBeNull();
    expect(parseStsRecords([`v=STSv1; id=${"a".repeat(33)}`])).toBeNull();
    expect(parseStsRecords(["v=STSv10; id=a"])).toBeNull();
  });

  test("a record outside RFC 8461's grammar is no policy, as senders read it; extension fields of name=value are taken", () => {
    expect(parseStsRecords(["v=STSv1; id=abc; ext_1.x=value!; \tnext-one=2 ;"])).toEqual({ id: "abc" });
    for (const text of ["v=STSv1; id=abc; nonsense", "v=STSv1; id=abc; ext=two words", "v=STSv1; id=abc; =value", "v=STSv1; id=abc; e=a=b", "v=STSv1; id=abc;; x=1", "v=STSv1; id=abc\n"]) {
      expect({ text, record: parseStsRecords([text]) }).toEqual({ text, record: null });
    }
  });

  test("the policy: version, mode, max_age and mx lines (CRLF or LF), unknown keys ignored", () => {
    expect(parseStsPolicy("version: STSv1\r\nmode: enforce\r\nmx: mx1.example.com\r\nmx: *.Example.com.\r\nmax_age: 604800\r\nextension: x\r\n")).toEqual({
      mode: "enforce",
      mx: ["mx1.example.com", "*.example.com"],
      maxAge: 604800,
    });
    expect(parseStsPolicy("version: STSv1\nmode: none\nmax_age: 86400\n")).toEqual({ mode: "none", mx: [], maxAge: 86400 });
    expect(parseStsPolicy("version: STSv1\nmode: testing\nmx: a.example.com\nmax_age: 99999999999\n")).toBeNull();
    expect(parseStsPolicy("version: STSv1\nmode: testing\nmx: a.example.com\nmax_age: 9999999999\n")?.maxAge).toBe(31_557_600);
  });

  test("a policy lacking what a sender needs is none: no version, a bad mode, no max_age, no mx outside mode none", () => {
    for (const text of [
      "mode: enforce\nmx: a.example.com\nmax_age: 1\n",
      "version: STSv2\nmode: enforce\nmx: a.example.com\nmax_age: 1\n",
      "version: STSv1\nmode: strict\nmx: a.example.com\nmax_age: 1\n",
      "version: STSv1\nmode: enforce\nmx: a.example.com\n",
      "version: STSv1\nmode: enforce\nmax_age: 1\n",
      "<html>Not found</html>",
    ]) {
      expect(parseStsPolicy(text)).toBeNull();
    }
  });

  test("mx patterns: exact names, and *. standing for exactly one label", () => {
    expect(mxMatches("mx1.example.com", "MX1.example.com.")).toBe(true);
    expect(mxMatches("*.example.com", "mx1.example.com")).toBe(true);
    expect(mxMatches("*.example.com", "example.com")).toBe(false);
    expect(mxMatches("*.example.com", "a.mx1.example.com")).toBe(false);
    expect(mxMatches("mx1.example.com", "mx2.example.com")).toBe(false);
  });
});

describe("the system's resolvers", () => {
  test("resolv.conf's nameserver lines, at most three, comments and scoped link-local addresses left out", () => {
    const text = "# generated\nsearch example.com\nnameserver 192.0.2.53\nnameserver fe80::1%eth0\nnameserver 2001:db8::53 # v6\nnameserver 192.0.2.54\nnameserver 192.0.2.55\n";
    expect(parseResolvConf(text)).toEqual([
      { address: "192.0.2.53", port: 53 },
      { address: "2001:db8::53", port: 53 },
      { address: "192.0.2.54", port: 53 },
    ]);
    expect(parseResolvConf("")).toEqual([]);
  });
});

