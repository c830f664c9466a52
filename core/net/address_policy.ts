/**
 * Which addresses certkeeper may connect to on a caller's behalf. Unless private targets are allowed,
 * only globally routable unicast addresses pass: loopback, private, link-local, CGNAT, multicast,
 * unspecified, broadcast, documentation and other reserved ranges are refused, in IPv4, IPv6 and every
 * IPv6 form that embeds an IPv4 address (mapped, NAT64, 6to4, Teredo, IPv4-compatible); the local-use
 * NAT64 range as a whole.
 */
import ipaddr from "ipaddr.js";

const LOCAL_USE_NAT64 = ipaddr.parseCIDR("64:ff9b:1::/48") as [ipaddr.IPv6, number];

/** The reason `address` is refused, or null when it is a public unicast address. */
export function refusedAddressReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return "not an IP address";
  }
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6;
    // The local-use NAT64 prefix (RFC 8215) is not globally reachable, and its translator's prefix
    // length is the operator's (/32 to /96, RFC 6052): no one place holds the IPv4 address it embeds.
    if (v6.match(LOCAL_USE_NAT64)) return "a reserved address (local-use NAT64)";
    const embedded = embeddedIpv4(v6);
    if (embedded) {
      const reason = refusedAddressReason(embedded.toString());
      // The kind only, never the address: a refusal must not map the server's network for its caller.
      return reason ? `${reason} (within an IPv6 address)` : null;
    }
    const range = v6.range();
    // Global unicast is 2000::/3 (its IPv4 forms elsewhere are judged above): the rest is reserved or
    // unassigned, nothing routable.
    if (range === "unicast" && (v6.parts[0]! & 0xe000) !== 0x2000) return "a reserved address (outside 2000::/3)";
    return range === "unicast" ? null : describe(range);
  }
  const range = (parsed as ipaddr.IPv4).range();
  return range === "unicast" ? null : describe(range);
}

/** Whether `address` is a loopback address (127.0.0.0/8, ::1, or 127.x mapped into IPv6); false for anything not an address. */
export function isLoopbackAddress(address: string): boolean {
  try {
    return ipaddr.process(address).range() === "loopback";
  } catch {
    return false;
  }
}

function embeddedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = v6.range();
  const p = v6.parts;
  const fromWords = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (range) {
    case "ipv4Mapped":
      return v6.toIPv4Address();
    case "rfc6052": // NAT64 64:ff9b::/96 (the local-use 64:ff9b:1::/48 is refused whole, above)
    case "rfc6145": // ::ffff:0:a.b.c.d
      return fromWords(p[6]!, p[7]!);
    case "6to4": // 2002:AABB:CCDD::/48
      return fromWords(p[1]!, p[2]!);
    case "teredo": // 2001:0::/32: the server address sits in words 2-3, the client's is obfuscated in 6-7
      return fromWords(p[6]! ^ 0xffff, p[7]! ^ 0xffff);
  }
  // IPv4-compatible ::a.b.c.d (deprecated, but some stacks still route it)
  if (p.slice(0, 6).every((word) => word === 0) && (p[6]! !== 0 || p[7]! > 1)) return fromWords(p[6]!, p[7]!);
  return null;
}

function describe(range: string): string {
  const names: Record<string, string> = {
    loopback: "a loopback address",
    private: "a private address",
    uniqueLocal: "a private address",
    linkLocal: "a link-local address",
    carrierGradeNat: "a carrier-grade NAT address",
    multicast: "a multicast address",
    unspecified: "an unspecified address",
    broadcast: "a broadcast address",
  };
  return names[range] ?? `a reserved address (${range})`;
}

/** `host:port`, an IPv6 address in brackets (RFC 3986): `[::1]:443`, never `::1:443`. */
export function hostPort(host: string, port: number | string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}
