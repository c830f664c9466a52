/**
 * CONTRACT §22's pure rules (core/dns/caa.ts, dane.ts, mta_sts.ts) at their edges. Each test names the RFC text it holds the code to.
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CaaRecord } from "../core/base/records.ts";
import { BUILT_IN_CAA_IDENTITIES, daneVerdict, judgeCaa, mxMatches, parseStsPolicy, type CaaSet } from "../core/dns/mod.ts";

const LE = ["Let's Encrypt", "R10"];
const caa = (flags: number, tag: string, value: string): CaaRecord => ({ flags, tag, value });
const at = (from: string, setAt: string | null, records: CaaRecord[]): CaaSet => ({ from, setAt, records });

function judge(options: { domain?: string; sans: string[]; sets: CaaSet[] }) {
  return judgeCaa({
    domain: options.domain ?? "www.example.com",
    subjectAlternativeNames: options.sans,
    issuerNames: LE,
    identities: BUILT_IN_CAA_IDENTITIES,
    sets: new Map(options.sets.map((set) => [set.from, set])),
  });
}

describe("CAA (RFC 8659 §4.2, §4.3)", () => {
  test("a wildcard SAN whose base's set has no issuewild is judged by issue: an issue naming another CA forbids it", () => {
    // RFC 8659 §4.3: "If at least one issuewild Property is specified in the Relevant RRset for a
    // Wildcard Domain Name, each issue Property MUST be ignored" -- and, without one, issue speaks for it.
    const verdict = judge({ sans: ["*.example.com"], sets: [at("example.com", "example.com", [caa(0, "issue", "digicert.com")])] });
    expect(verdict.status).toBe("forbidden");
    expect(verdict.blocking).toMatchObject({ name: "*.example.com", setAt: "example.com", property: "issue", reason: "not_listed" });
  });

  test("a leaf none of whose SANs covers the checked name is still judged for that name (the renewal asks for it)", () => {
    // caa.ts judgedNames: "the domain itself when a SAN names it exactly (or none covers it)".
    const verdict = judge({ sans: ["other.example.net"], sets: [at("www.example.com", "example.com", [caa(0, "issue", "digicert.com")])] });
    expect(verdict.status).toBe("forbidden");
    expect(verdict.blocking).toMatchObject({ name: "www.example.com", property: "issue" });
  });
});

const opensslMissing = existsSync("/usr/bin/openssl") ? null : "openssl not installed";

describe.skipIf(Boolean(opensslMissing))("DANE-TA (RFC 7672 §3.1.1, RFC 7671 §5.2.2)", () => {
  test("DANE-TA 2 0 0 holding a self-signed leaf's own certificate is no trust anchor above it: mismatch", async () => {
    // The same rule the existing test pins for "2 1 0" (the key): a self-signed leaf is not issued by
    // an anchor above it; only DANE-EE (usage 3) pins the leaf itself. The leaf is made as
    // `openssl req -x509` makes one by default (basicConstraints CA:TRUE, no keyUsage), as many
    // self-signed mail servers have: it passes OpenSSL's issuer check against itself.
    const dir = mkdtempSync(join(tmpdir(), "certkeeper-selfsigned-"));
    try {
      execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", join(dir, "k.pem"), "-subj", "/CN=mx1.example.com", "-addext", "subjectAltName=DNS:mx1.example.com", "-days", "30", "-out", join(dir, "c.pem")], { stdio: "ignore" });
      const der = new Uint8Array(Buffer.from(readFileSync(join(dir, "c.pem"), "utf8").replace(/-----[^-]+-----|\s/g, ""), "base64"));
      const served = { ders: [der], leafNames: ["mx1.example.com"], referenceNames: ["mx1.example.com"] };
      const record = { usage: 2, selector: 0, matchingType: 0, data: Buffer.from(der).toString("hex") };
      expect(daneVerdict({ name: "_25._tcp.mx1.example.com", validated: true, records: [record] }, served).status).toBe("mismatch");
      // The same data as DANE-EE matches: only the usage differs.
      expect(daneVerdict({ name: "_25._tcp.mx1.example.com", validated: true, records: [{ ...record, usage: 3 }] }, served).status).toBe("match");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("MTA-STS (RFC 8461)", () => {
  test("a *. pattern needs a label before the rest: a host of one label is matched by no *. pattern", () => {
    // RFC 8461 §4.1: "*.example.com" matches "mx1.example.com" but not "example.com"; likewise
    // "*.example" does not match "example".
    expect(mxMatches("*.example", "example")).toBe(false);
    expect(mxMatches("*.localhost", "localhost")).toBe(false);
    expect(mxMatches("*.example", "mx.example")).toBe(true);
  });

  test("a repeated version field: the first one counts (mta_sts.ts: 'The first of a repeated field counts')", () => {
    expect(parseStsPolicy("version: STSv1\nversion: STSv2\nmode: enforce\nmx: mx1.example.com\nmax_age: 86400\n")).toEqual({
      mode: "enforce",
      mx: ["mx1.example.com"],
      maxAge: 86400,
    });
  });
});
