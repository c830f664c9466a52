import { describe, expect, test } from "bun:test";
import { normalizeDomain } from "../core/certificates/domain_name.ts";
import { CertkeeperError } from "../core/base/errors.ts";

function refusal(input: unknown): { code: string; message: string } {
  try {
    normalizeDomain(input);
  } catch (error) {
    if (error instanceof CertkeeperError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error(`${JSON.stringify(input)} was accepted`);
}

describe("normalizeDomain()", () => {
  test("lower-cases and removes one trailing dot", () => {
    expect(normalizeDomain("WWW.Example.COM.")).toBe("www.example.com");
  });

  test("stores internationalized names in punycode", () => {
    expect(normalizeDomain("bücher.example")).toBe("xn--bcher-kva.example");
    expect(normalizeDomain("BÜCHER.example")).toBe("xn--bcher-kva.example");
    expect(normalizeDomain("bu\u0308cher.example")).toBe("xn--bcher-kva.example"); // the same letter, decomposed
    expect(normalizeDomain("straße.de")).toBe("xn--strae-oqa.de");
    expect(normalizeDomain("例え.テスト")).toBe("xn--r8jz45g.xn--zckzah");
  });

  test("accepts hyphens inside labels, digits, long labels and names up to 253 characters", () => {
    expect(normalizeDomain("a-b.c0.example")).toBe("a-b.c0.example");
    expect(normalizeDomain(`${"a".repeat(63)}.example`)).toBe(`${"a".repeat(63)}.example`);
    const long = Array.from({ length: 4 }, () => "a".repeat(61)).join(".") + ".abcde"; // 253
    expect(long.length).toBe(253);
    expect(normalizeDomain(long)).toBe(long);
  });

  test.each([
    ["", "empty"],
    ["https://a.com/", "scheme"],
    ["a.com/path", "path"],
    ["a.com:8443", "port"],
    ["192.168.1.1", "IP"],
    ["[::1]", "IP"],
    ["::1", "IP"],
    ["*.example.com", "wildcard"],
    ["exa mple.com", "spaces"],
    [" example.com", "spaces"],
    ["localhost", "two labels"],
    ["localhost", "name it with CERTKEEPER_RESOLVE, such as app.internal=127.0.0.1"],
    ["intranet", "two labels"],
    ["-a.com", "hyphen"],
    ["a-.com", "hyphen"],
    ["a..com", "empty label"],
    [".a.com", "empty label"],
    ["a.123", "digits"],
    ["under_score.com", "letters"],
    [`${"a".repeat(64)}.com`, "63"],
    [Array.from({ length: 5 }, () => "a".repeat(50)).join(".") + ".com", "253"],
    ["user@a.com", "user information"],
    ["exa%6dple.com", 'character "%"'],
    ["exa%2emple.com", 'character "%"'],
    ["e\\x.com", 'character "\\\\"'],
    ["a!b.com", 'character "!"'],
    ["a\u0000b.com", "not allowed"],
    ["ｅxample.com", "would change"],
    ["ex\u00adample.com", "would change"],
    ["exa\u200bmple.com", "would change"],
    ["a\u3002b.com", "would change"],
    ["\ufb01.com", "would change"],
  ])("refuses %p as invalid_domain (%s)", (input, hint) => {
    const { code, message } = refusal(input);
    expect(code).toBe("invalid_domain");
    expect(message.toLowerCase()).toContain(hint.toLowerCase());
  });

  test("refuses a missing or non-string domain as invalid_domain", () => {
    expect(refusal(undefined).code).toBe("invalid_domain");
    expect(refusal(42).code).toBe("invalid_domain");
    expect(refusal(["a.com"]).code).toBe("invalid_domain");
  });

  test("the message quotes the value and says what to do", () => {
    expect(refusal("a.com:8443").message).toBe('Domain "a.com:8443" is not a valid domain: give the port in the port field, not in the domain.');
  });
});
