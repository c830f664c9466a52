/**
 * CERTKEEPER_RESOLVE: static name overrides, `host=address[|address…][,host=address…]`. Several
 * addresses separated by `|` stand for a name with several A/AAAA records. `*.example.test` matches
 * every subdomain of example.test (not example.test itself); the address `none` makes the name fail
 * as NXDOMAIN would. The most specific rule wins: an exact name, then the longest wildcard suffix.
 */
import { isIP } from "node:net";

export interface ResolveRule {
  /** Lower-case host name, or `*.suffix` for every subdomain. */
  pattern: string;
  /** The first IP address, or null for "does not resolve". */
  address: string | null;
  /** Every address the rule lists (empty for "does not resolve"); absent: just `address`. */
  addresses?: string[];
}

export function parseResolveRules(text: string): ResolveRule[] {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const eq = part.indexOf("=");
      const pattern = part.slice(0, eq).trim().toLowerCase().replace(/\.$/, "");
      const address = part.slice(eq + 1).trim();
      if (eq <= 0 || pattern === "" || pattern === "*." || (pattern.includes("*") && !/^\*\.[^*]+$/.test(pattern))) {
        throw new Error(`"${part}" is not a rule: write host=address or *.domain=address`);
      }
      // A rule decides what a name resolves to, whatever the port: "host:port=" would never match.
      if (/[:/@\s\[\]]/.test(pattern)) {
        throw new Error(`"${part}" is not a rule: "${pattern}" is not a host name (a rule names a host alone, without a port, scheme or path: write host=address)`);
      }
      if (address === "none") return { pattern, address: null, addresses: [] };
      const addresses = address.split("|").map((one) => one.trim());
      for (const one of addresses) {
        if (isIP(one) === 0) throw new Error(`"${one}" in "${part}" is not an IP address or "none"`);
      }
      return { pattern, address: addresses[0]!, addresses };
    });
}

/**
 * The rule that decides `host`, or undefined when no rule names it.
 * Returns `{ address: null }` for a name that must not resolve.
 */
export function matchResolveRule(rules: ResolveRule[], host: string): ResolveRule | undefined {
  const name = host.toLowerCase().replace(/\.$/, "");
  let best: ResolveRule | undefined;
  let bestLength = -1;
  for (const rule of rules) {
    if (rule.pattern === name) return rule;
    if (rule.pattern.startsWith("*.")) {
      const suffix = rule.pattern.slice(1);
      if (name.endsWith(suffix) && name.length > suffix.length && suffix.length > bestLength) {
        best = rule;
        bestLength = suffix.length;
      }
    }
  }
  return best;
}
