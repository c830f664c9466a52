/**
 * `certificate add --org O DOMAIN[:PORT]` and `check` read a bare IPv6 address whole, never cut at its
 * last colon (`2001:db8::1` was the domain "2001:db8:" on port 1): `certificate add` then refuses it as
 * POST refuses an address ("IP addresses cannot be monitored by name"), and `check`'s advice invents no
 * port. An IPv6 address with a port is written in brackets, `[2001:db8::1]:8443` (docs/cli.md, CONTRACT
 * §23: the add route's rules and errors).
 */
import { describe, expect, test } from "bun:test";
import { targetFields } from "../adapters/cli/certificates.ts";
import { normalizeDomain } from "../core/certificates/domain_name.ts";
import { runCli } from "./support/cli.ts";

describe("certificate add reads an IPv6 target as written", () => {
  test.each(["2001:db8::1", "::1", "fd00::8443", "::ffff:10.0.0.1"])("%s is passed whole, with no port cut from it", (target) => {
    expect(targetFields(target)).toEqual({ domain: target });
  });

  test("so that the route refuses it as POST refuses an address", () => {
    const { domain } = targetFields("2001:db8::1");
    expect(() => normalizeDomain(domain)).toThrow(/IP addresses cannot be monitored by name/);
  });

  test("the bracketed form still carries a port", () => {
    expect(targetFields("[2001:db8::1]:8443")).toEqual({ domain: "2001:db8::1", port: 8443 });
    expect(targetFields("[2001:db8::1]")).toEqual({ domain: "2001:db8::1" });
    expect(targetFields("example.com:8443")).toEqual({ domain: "example.com", port: 8443 });
  });
});

/**
 * `check DOMAIN[:PORT]` refuses a bare IPv6 address (rightly) but its advice invents a port: for
 * `check 2001:db8::1` it says "certkeeper check example.com:1 --connect-to 2001:db8::1", cutting the
 * address's last group off as a port, so following the advice checks port 1. `[::1]:8443` gives
 * "example.com:8443" (right) and `[2001:db8::1]` gives "example.com" (right): only the bare form is cut.
 * docs/cli.md: "an address is read as written, an IPv6 one with a port in brackets". The refusal comes
 * before anything is resolved or connected to.
 */
describe("check's advice for a bare IPv6 address names no port the user did not write", () => {
  test.each(["2001:db8::1", "::1"])("check %s", async (target) => {
    const result = await runCli(["check", target], { env: { CERTKEEPER_DNS_SERVERS: "off" } });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`is an IP address`);
    expect(result.stderr).toContain(`certkeeper check example.com --connect-to ${target} `);
  });
});
