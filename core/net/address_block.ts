/**
 * The block of addresses one client holds, for counting its attempts: an IPv4 address alone, an IPv6
 * address's /64 (what one home or server is given: it may pick any address in it, so counting exact
 * addresses would let it start afresh at every attempt), an IPv4-mapped IPv6 address as its IPv4.
 * Text that is no address is returned as given, lower-cased.
 */
import ipaddr from "ipaddr.js";

export function addressBlock(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/%.*$/, ""));
  } catch {
    return address.toLowerCase();
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts.slice(0, 4).map((part) => part.toString(16)).join(":")}::/64`;
}
