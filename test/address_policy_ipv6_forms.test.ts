/**
 * The private-address rule (CONTRACT §1 CERTKEEPER_ALLOW_PRIVATE_TARGETS, §11) for the IPv6 forms that
 * embed an IPv4 address and that no other test held at their edges: Teredo (the client's address is
 * stored inverted, RFC 4380 §4), 6to4 (words 1-2, RFC 3056), IPv4-translated ::ffff:0:a.b.c.d
 * (RFC 6145) and IPv4-compatible ::a.b.c.d with a small address (::0.0.0.2 is 0.0.0.0/8's).
 * And the stricter rule of deliveries: a webhook host with ANY refused address is refused, whatever
 * the order of its answers (a DNS-rebinding set-up puts the public one first).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { refusedAddressReason } from "../core/net/address_policy.ts";
import { NetFailure, resolveVetted } from "../core/net/resolver.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";
import { createHarness, TEST_DOMAIN, type Harness } from "./support/harness.ts";

/** Teredo client bits are the IPv4 address XOR 0xffffffff. */
const teredo = (v4: [number, number, number, number]) => {
  const [a, b, c, d] = v4.map((byte) => byte ^ 0xff) as [number, number, number, number];
  return `2001:0:4136:e378:8000:63bf:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

describe("refusedAddressReason(): IPv6 forms embedding an IPv4 address", () => {
  test("Teredo: the client's IPv4 address is read un-inverted (a loopback one refused, a public one allowed)", () => {
    expect(teredo([127, 0, 0, 1])).toBe("2001:0:4136:e378:8000:63bf:80ff:fffe");
    expect(refusedAddressReason(teredo([127, 0, 0, 1]))).toBe("a loopback address (within an IPv6 address)");
    expect(refusedAddressReason(teredo([10, 1, 2, 3]))).toBe("a private address (within an IPv6 address)");
    expect(refusedAddressReason(teredo([8, 8, 8, 8]))).toBeNull();
  });

  test("6to4: the IPv4 address is words 1 and 2 (2002:c0a8:101:: is 192.168.1.1)", () => {
    expect(refusedAddressReason("2002:c0a8:101::1")).toBe("a private address (within an IPv6 address)");
    expect(refusedAddressReason("2002:808:808::1")).toBeNull();
  });

  test("IPv4-translated ::ffff:0:a.b.c.d is judged by its IPv4 address", () => {
    expect(refusedAddressReason("::ffff:0:7f00:1")).toBe("a loopback address (within an IPv6 address)");
    expect(refusedAddressReason("::ffff:0:a00:1")).toBe("a private address (within an IPv6 address)");
    expect(refusedAddressReason("::ffff:0:808:808")).toBeNull();
  });

  test("IPv4-compatible ::0.0.0.2 to ::0.0.255.255 carry 0.0.0.0/8 addresses: refused", () => {
    for (const address of ["::2", "::ff", "::ffff"]) expect(refusedAddressReason(address)).toBe("an unspecified address (within an IPv6 address)");
    // ::1 and :: stay what they are.
    expect(refusedAddressReason("::1")).toBe("a loopback address");
    expect(refusedAddressReason("::")).toBe("an unspecified address");
  });
});

describe("a name with one public and one refused address (DNS rebinding)", () => {
  const rules = parseResolveRules(`first-public.test=93.184.216.34|127.0.0.1,first-private.test=10.0.0.1|93.184.216.34`);

  test.each(["first-public.test", "first-private.test"])("resolveVetted(%s) refuses the whole name", async (name) => {
    const failure = await resolveVetted(name, { rules, allowPrivateTargets: false }).catch((error) => error);
    expect(failure).toBeInstanceOf(NetFailure);
    expect(failure.reason).toBe("connection_refused");
  });

  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({
      config: {
        allowPrivateTargets: false,
        dnsServers: "off",
        resolve: parseResolveRules(`mixed.${TEST_DOMAIN}=93.184.216.34|127.0.0.1`),
      },
    });
  });
  afterAll(() => h.close());

  test("a webhook channel for it is refused: 400 invalid_webhook_url (CONTRACT §11: any refused address)", async () => {
    const response = await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Mixed", config: { url: `https://mixed.${TEST_DOMAIN}/hook` } } });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_webhook_url");
    expect(response.body.error.message).toContain("loopback address");
  });
});
