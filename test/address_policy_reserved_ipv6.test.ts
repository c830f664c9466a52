/**
 * Reserved IPv6 ranges refused whole: everything outside the global unicast 2000::/3 beyond the IPv4
 * forms of ::/8 and 64:ff9b::/96 (IETF reserved or unassigned, never routable), and
 * the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215), no globally reachable address (IANA
 * special-purpose registry: "Globally Reachable: False"), and within it the operator picks the
 * translator's prefix length (RFC 6052 §2.2: /32 to /96), so the IPv4 address it embeds sits in no one
 * place: an address laid out for a /48 or /56 translator with a public address in its last 32 bits
 * (ignored suffix bits) still reaches a private one. The whole range is refused; the well-known
 * 64:ff9b::/96 prefix is judged by the IPv4 address it embeds.
 *
 *   64:ff9b:1:a00:0:100:808:808   /48 layout: 10.0.0.1
 *   64:ff9b:1:a:0:1:808:808       /56 layout: 10.0.0.1
 */
import { expect, test } from "bun:test";
import { refusedAddressReason } from "../core/net/address_policy.ts";

test.each(["64:ff9b:1:a00:0:100:808:808", "64:ff9b:1:a:0:1:808:808", "64:ff9b:1::808:808"])(
  "%s (local-use NAT64, RFC 8215) is refused",
  (address) => {
    expect(refusedAddressReason(address)).not.toBeNull();
  },
);

test("the well-known NAT64 prefix 64:ff9b::/96 still passes a public IPv4 address and refuses a private one", () => {
  expect(refusedAddressReason("64:ff9b::808:808")).toBeNull();
  expect(refusedAddressReason("64:ff9b::a00:1")).not.toBeNull();
});

test.each(["::ffff:0:0:a00:1", "0:0:1::1", "ff::1", "100:0:0:1::1", "200::1", "400::1", "1000::1", "4000::1", "8000::1", "e000::1", "f000::1"])("%s (outside 2000::/3, reserved or unassigned, no IPv4 form) is refused", (address) => {
  expect(refusedAddressReason(address)).not.toBeNull();
});

test("global unicast addresses and the IPv4 forms in ::/8 are judged as before", () => {
  expect(refusedAddressReason("2606:4700:4700::1111")).toBeNull();
  expect(refusedAddressReason("::ffff:8.8.8.8")).toBeNull();
  expect(refusedAddressReason("::ffff:10.0.0.1")).not.toBeNull();
  expect(refusedAddressReason("::1")).toBe("a loopback address");
});
