/**
 * A CA that honours several issuer domain names in CAA is judged by all of them: DigiCert issues
 * under `issue "rapidssl.com"` (or geotrust.com, thawte.com, symantec.com, www.digicert.com) and
 * Sectigo under comodoca.com, comodo.com, usertrust.com and trust-provider.com, so none of them warns.
 * An operator names a CA's further domains with one CERTKEEPER_CAA_IDENTITIES pair each; a pair adds
 * to the built-in domain, never takes it away.
 */
import { describe, expect, test } from "bun:test";
import type { CaaRecord } from "../core/base/mod.ts";
import { parseCaaIdentities } from "../core/config/mod.ts";
import { BUILT_IN_CAA_IDENTITIES, judgeCaa, type CaaSet } from "../core/dns/mod.ts";

const DIGICERT = ["DigiCert Inc", "RapidSSL TLS RSA CA G1"];
const SECTIGO = ["Sectigo Limited", "Sectigo RSA Domain Validation Secure Server CA"];

function judge(issuerNames: string[], values: string[], configured = "") {
  const set: CaaSet = { from: "www.example.com", setAt: "example.com", records: values.map((value): CaaRecord => ({ flags: 0, tag: "issue", value })) };
  return judgeCaa({
    domain: "www.example.com",
    subjectAlternativeNames: ["www.example.com"],
    issuerNames,
    identities: [...(configured ? parseCaaIdentities(configured) : []), ...BUILT_IN_CAA_IDENTITIES],
    sets: new Map([[set.from, set]]),
  });
}

describe("a CA's other CAA domains", () => {
  test("DigiCert's brands' domains let DigiCert issue; another CA's do not", () => {
    for (const value of ["rapidssl.com", "geotrust.com", "thawte.com", "symantec.com", "www.digicert.com", "RapidSSL.com; accounturi=x"]) {
      expect([value, judge(DIGICERT, [value]).status]).toEqual([value, "permitted"]);
    }
    const other = judge(DIGICERT, ["letsencrypt.org", "comodoca.com"]);
    expect(other.status).toBe("forbidden");
    expect(other.issuerDomain).toBe("digicert.com");
    expect(other.blocking).toMatchObject({ reason: "not_listed", records: ['0 issue "comodoca.com"', '0 issue "letsencrypt.org"'] });
  });

  test("Sectigo's former names let Sectigo issue; DigiCert's do not", () => {
    for (const value of ["comodoca.com", "comodo.com", "usertrust.com", "trust-provider.com", "sectigo.com"]) {
      expect([value, judge(SECTIGO, [value]).status]).toEqual([value, "permitted"]);
    }
    expect(judge(SECTIGO, ["rapidssl.com"]).status).toBe("forbidden");
  });

  test("Let's Encrypt and Google Trust Services stay at their one domain", () => {
    expect(judge(["Let's Encrypt", "R10"], ["letsencrypt.com"]).status).toBe("forbidden");
    expect(judge(["Google Trust Services", "WR1"], ["google.com"]).status).toBe("forbidden");
  });

  test("configured pairs for one issuer each add a domain, beside the built-in one", () => {
    const configured = "Internal CA=pki.corp.example,Internal CA=legacy-pki.corp.example,Let's Encrypt=le.corp.example";
    expect(judge(["Corp", "Internal CA"], ["legacy-pki.corp.example"], configured).status).toBe("permitted");
    expect(judge(["Corp", "Internal CA"], ["pki.corp.example"], configured).status).toBe("permitted");
    const neither = judge(["Corp", "Internal CA"], ["other.corp.example"], configured);
    expect([neither.status, neither.issuerDomain]).toEqual(["forbidden", "pki.corp.example"]);
    expect(judge(["Let's Encrypt", "R10"], ["letsencrypt.org"], configured).status).toBe("permitted");
    expect(judge(["Let's Encrypt", "R10"], ["le.corp.example"], configured).status).toBe("permitted");
  });
});
