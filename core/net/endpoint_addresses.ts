/**
 * Every address a check connects to (CONTRACT §11): all A and AAAA records of a name (or the
 * CERTKEEPER_RESOLVE rule's addresses), distinct, IPv4 first then IPv6, each in ascending numeric
 * order, at most 16. Each address is vetted on its own: a refused one is reported, never connected to.
 */
import ipaddr from "ipaddr.js";
import { refusedAddressReason } from "./address_policy.ts";
import { resolveHost, type ResolverOptions } from "./resolver.ts";

/** Most addresses one check connects to; a name with more is checked on its first 16. */
export const MAX_ENDPOINTS = 16;

export interface EndpointAddress {
  address: string;
  family: 4 | 6;
  /** Why the private-address rule refuses this address, or null when it may be connected to. */
  refused: string | null;
}

/** Resolves `host` (a name or an IP literal) to the addresses to check; throws NetFailure `dns_error`. */
export async function endpointAddresses(host: string, options: ResolverOptions): Promise<EndpointAddress[]> {
  const resolved = await resolveHost(host, options.rules);
  if (resolved.length === 1) {
    // One address (the common case, and every IP literal): nothing to order or deduplicate, but
    // written as several are (an IPv6 address in its canonical form, whatever the rule spelled).
    const { family } = resolved[0]!;
    const address = ipaddr.parse(resolved[0]!.address).toString();
    return [{ address, family, refused: options.allowPrivateTargets ? null : refusedAddressReason(address) }];
  }
  const distinct = new Map<string, { address: string; family: 4 | 6; bytes: number[] }>();
  for (const { address, family } of resolved) {
    const parsed = ipaddr.parse(address);
    const canonical = parsed.toString();
    if (!distinct.has(canonical)) distinct.set(canonical, { address: canonical, family, bytes: parsed.toByteArray() });
  }
  return [...distinct.values()]
    .sort((a, b) => a.family - b.family || compareBytes(a.bytes, b.bytes))
    .slice(0, MAX_ENDPOINTS)
    .map(({ address, family }) => ({
      address,
      family,
      refused: options.allowPrivateTargets ? null : refusedAddressReason(address),
    }));
}

function compareBytes(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
