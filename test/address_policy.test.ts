import { describe, expect, test } from "bun:test";
import { isLoopbackAddress, refusedAddressReason } from "../core/net/address_policy.ts";
import { matchResolveRule, parseResolveRules } from "../core/config/resolve_rules.ts";
import { NetFailure, resolveVetted } from "../core/net/resolver.ts";

describe("isLoopbackAddress()", () => {
  test("loopback in IPv4, IPv6 and IPv4 mapped into IPv6; nothing else, names included", () => {
    expect(["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"].map(isLoopbackAddress)).toEqual([true, true, true, true]);
    expect(["10.0.0.1", "::", "fe80::1", "8.8.8.8", "localhost", "127.0.0.1.example", ""].map(isLoopbackAddress)).toEqual([false, false, false, false, false, false, false]);
  });
});

describe("refusedAddressReason()", () => {
  test.each([
    "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.0.1", "169.254.169.254",
    "100.64.0.1", "100.127.255.255", "224.0.0.1", "239.1.1.1", "0.0.0.0", "255.255.255.255", "192.0.2.1",
    "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "2001:db8::1",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "::127.0.0.1",
  ])("refuses %s", (address) => {
    expect(refusedAddressReason(address)).not.toBeNull();
  });

  test.each(["93.184.216.34", "8.8.8.8", "1.1.1.1", "100.128.0.1", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"])(
    "allows the public address %s",
    (address) => {
      expect(refusedAddressReason(address)).toBeNull();
    },
  );

  test("names the kind of address refused", () => {
    expect(refusedAddressReason("127.0.0.1")).toBe("a loopback address");
    expect(refusedAddressReason("100.64.0.1")).toBe("a carrier-grade NAT address");
    expect(refusedAddressReason("::ffff:10.0.0.1")).toBe("a private address (within an IPv6 address)");
  });
});

describe("CERTKEEPER_RESOLVE rules", () => {
  const rules = parseResolveRules("a.test=10.0.0.1, *.test=127.0.0.1,*.deep.test=127.0.0.2,gone.test=none");

  test("an exact name wins over wildcards; the longest wildcard suffix wins", () => {
    expect(matchResolveRule(rules, "a.test")?.address).toBe("10.0.0.1");
    expect(matchResolveRule(rules, "b.test")?.address).toBe("127.0.0.1");
    expect(matchResolveRule(rules, "x.deep.test")?.address).toBe("127.0.0.2");
    expect(matchResolveRule(rules, "A.TEST.")?.address).toBe("10.0.0.1");
  });

  test("a wildcard matches subdomains, not the name itself", () => {
    expect(matchResolveRule(parseResolveRules("*.example.test=127.0.0.1"), "example.test")).toBeUndefined();
  });

  test("none makes the name fail to resolve, as NXDOMAIN would", async () => {
    const failure = await resolveVetted("gone.test", { rules, allowPrivateTargets: true }).catch((error) => error);
    expect(failure).toBeInstanceOf(NetFailure);
    expect(failure.reason).toBe("dns_error");
  });

  test("a resolved private address is refused unless private targets are allowed", async () => {
    const refused = await resolveVetted("b.test", { rules, allowPrivateTargets: false }).catch((error) => error);
    expect([refused.reason, refused.message]).toEqual([
      "connection_refused",
      "b.test resolves to a loopback address, which certkeeper does not connect to",
    ]);
    expect(await resolveVetted("b.test", { rules, allowPrivateTargets: true })).toEqual([{ address: "127.0.0.1", family: 4 }]);
  });

  test("several addresses separated by | stand for a name with several A/AAAA records, in the order given", async () => {
    const multi = parseResolveRules("lb.test=127.0.0.3|::1| 127.0.0.1");
    expect(matchResolveRule(multi, "lb.test")).toEqual({ pattern: "lb.test", address: "127.0.0.3", addresses: ["127.0.0.3", "::1", "127.0.0.1"] });
    expect(await resolveVetted("lb.test", { rules: multi, allowPrivateTargets: true })).toEqual([
      { address: "127.0.0.3", family: 4 },
      { address: "::1", family: 6 },
      { address: "127.0.0.1", family: 4 },
    ]);
  });

  test("endpointAddresses(): distinct, IPv4 first then IPv6, numeric order, at most 16, each vetted on its own", async () => {
    const { endpointAddresses } = await import("../core/net/endpoint_addresses.ts");
    const many = Array.from({ length: 20 }, (_, i) => `10.0.0.${20 - i}`).join("|");
    const rules = parseResolveRules(`lb.test=2001:db8::2|127.0.0.10|127.0.0.9|2001:db8::2|::1|127.0.0.9,big.test=${many}`);
    expect(await endpointAddresses("lb.test", { rules, allowPrivateTargets: false })).toEqual([
      { address: "127.0.0.9", family: 4, refused: "a loopback address" },
      { address: "127.0.0.10", family: 4, refused: "a loopback address" },
      { address: "::1", family: 6, refused: "a loopback address" },
      { address: "2001:db8::2", family: 6, refused: "a reserved address (reserved)" },
    ]);
    const big = await endpointAddresses("big.test", { rules, allowPrivateTargets: true });
    expect(big.map((a) => a.address)).toEqual(Array.from({ length: 16 }, (_, i) => `10.0.0.${i + 1}`));
    expect(big.every((a) => a.refused === null)).toBe(true);
  });

  test.each(["noequals", "=1.2.3.4", "a.test=not-an-ip", "a.test=1.2.3.4|nope", "a.test=1.2.3.4|", "a.*.test=1.2.3.4", "*.=1.2.3.4"])("refuses the malformed rule %p", (text) => {
    expect(() => parseResolveRules(text)).toThrow();
  });

  test.each(["app.internal:8443=127.0.0.1", "*.app.internal:443=127.0.0.1", "https://app.internal=127.0.0.1", "app internal=127.0.0.1"])(
    "refuses %p, whose name is no host name (it would never match), saying why",
    (text) => {
      expect(() => parseResolveRules(text)).toThrow(/is not a host name \(a rule names a host alone, without a port/);
    },
  );
});
