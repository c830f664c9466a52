/**
 * CONTRACT §5's and §11's name rules at the edges the suite left open (each test fails on a one-line
 * change of core/certificates/domain_name.ts or add_rules.ts that no other test caught): a domain of
 * 254 characters is refused; a connectTo whose last label is all digits but which is no IP address is
 * refused; a mailDomain on a certificate that does not speak smtp is refused.
 */
import { describe, expect, test } from "bun:test";
import { normalizeConnectTo, normalizeDomain } from "../core/certificates/domain_name.ts";
import { parseAddCertificate } from "../core/certificates/add_rules.ts";
import { CertkeeperError } from "../core/base/errors.ts";

function refusal(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof CertkeeperError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("accepted");
}

describe("domain length (CONTRACT §5: total ≤ 253)", () => {
  test("253 characters are accepted, 254 are invalid_domain", () => {
    const at253 = Array.from({ length: 4 }, () => "a".repeat(61)).join(".") + ".abcde";
    const at254 = Array.from({ length: 4 }, () => "a".repeat(61)).join(".") + ".abcdef";
    expect(at254.length).toBe(254);
    expect(normalizeDomain(at253)).toBe(at253);
    const refused = refusal(() => normalizeDomain(at254));
    expect(refused.code).toBe("invalid_domain");
    expect(refused.message).toContain("253");
  });
});

describe("connectTo (CONTRACT §11: a host name or an IP literal)", () => {
  test("something shaped like an IPv4 address that is none (10.0.0.256) is no host name either: invalid_request", () => {
    for (const value of ["10.0.0.256", "1.2.3.4.5"]) {
      const refused = refusal(() => normalizeConnectTo(value));
      expect(refused.code).toBe("invalid_request");
      expect(refused.message).toContain("connectTo");
    }
    expect(normalizeConnectTo("10.0.0.25")).toBe("10.0.0.25");
    expect(normalizeConnectTo("lb1.example.net")).toBe("lb1.example.net");
  });
});

describe("mailDomain (CONTRACT §22: for smtp certificates)", () => {
  test("given with protocol tls (the default) it is invalid_request naming the field; with smtp it is kept", () => {
    const refused = refusal(() => parseAddCertificate({ domain: "www.example.com", mailDomain: "example.com" }));
    expect(refused.code).toBe("invalid_request");
    expect(refused.message).toContain("mailDomain");
    expect(parseAddCertificate({ domain: "mx1.example.com", protocol: "smtp", mailDomain: "example.com" }).mailDomain).toBe("example.com");
  });
});
