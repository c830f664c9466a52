/**
 * CAA (RFC 8659 §4.1): the issuer critical flag forbids issuance only on a property tag the CA does not
 * know. issuewild and iodef are tags every CA knows: a critical one is just that property.
 */
import { describe, expect, test } from "bun:test";
import type { CaaRecord } from "../core/base/records.ts";
import { BUILT_IN_CAA_IDENTITIES, judgeCaa, type CaaSet } from "../core/dns/mod.ts";

const caa = (flags: number, tag: string, value: string): CaaRecord => ({ flags, tag, value });

function judge(sans: string[], records: CaaRecord[]) {
  const sets: CaaSet[] = [
    { from: "www.example.com", setAt: "example.com", records },
    { from: "example.com", setAt: "example.com", records },
  ];
  return judgeCaa({
    domain: "www.example.com",
    subjectAlternativeNames: sans,
    issuerNames: ["Let's Encrypt", "R10"],
    identities: BUILT_IN_CAA_IDENTITIES,
    sets: new Map(sets.map((set) => [set.from, set])),
  });
}

describe("critical flags on known tags", () => {
  test("a critical issuewild naming the CA beside its issue: permitted, for the name and for its wildcard", () => {
    const records = [caa(0, "issue", "letsencrypt.org"), caa(128, "issuewild", "letsencrypt.org")];
    expect(judge(["www.example.com"], records).status).toBe("permitted");
    expect(judge(["*.example.com"], records).status).toBe("permitted");
  });

  test("a critical iodef is no reason to forbid either", () => {
    expect(judge(["www.example.com"], [caa(0, "issue", "letsencrypt.org"), caa(128, "iodef", "mailto:security@example.com")]).status).toBe("permitted");
  });
});
