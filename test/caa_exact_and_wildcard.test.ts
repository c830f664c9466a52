/**
 * CONTRACT §22 / RFC 8659: a leaf naming `www.example.com` exactly and also `*.example.com` is renewed
 * for both names, so both are judged: `issue` for the exact name, `issuewild` for the wildcard. A set
 * whose `issuewild` lets the CA issue but whose `issue` names only another CA forbids the renewal (the
 * exact name), with `caa_forbids_issuer`. (The existing case has the wildcard forbidden, which does not
 * tell whether the exact name is judged at all.)
 */
import { describe, expect, test } from "bun:test";
import type { CaaRecord } from "../core/base/records.ts";
import { BUILT_IN_CAA_IDENTITIES, judgeCaa, type CaaSet } from "../core/dns/mod.ts";

const caa = (flags: number, tag: string, value: string): CaaRecord => ({ flags, tag, value });
const at = (from: string, setAt: string | null, records: CaaRecord[]): CaaSet => ({ from, setAt, records });

/** The verdict for a leaf of www.example.com and *.example.com from Let's Encrypt, under `records` set at example.com. */
const judge = (records: CaaRecord[]) =>
  judgeCaa({
    domain: "www.example.com",
    subjectAlternativeNames: ["www.example.com", "*.example.com"],
    issuerNames: ["Let's Encrypt", "R10"],
    identities: BUILT_IN_CAA_IDENTITIES,
    sets: new Map([["www.example.com", at("www.example.com", "example.com", records)], ["example.com", at("example.com", "example.com", records)]]),
  });

describe("CAA with an exact SAN and a wildcard covering it (CONTRACT §22)", () => {
  test("issue forbids the CA, issuewild permits it: the exact name blocks the renewal", () => {
    const verdict = judge([caa(0, "issue", "digicert.com"), caa(0, "issuewild", "letsencrypt.org")]);
    expect([verdict.status, verdict.blocking?.name, verdict.blocking?.property, verdict.blocking?.reason]).toEqual(["forbidden", "www.example.com", "issue", "not_listed"]);
  });

  test("both permit it: permitted", () => {
    expect(judge([caa(0, "issue", "letsencrypt.org"), caa(0, "issuewild", "letsencrypt.org")]).status).toBe("permitted");
  });
});
