/** The system's resolvers: the `nameserver` lines of /etc/resolv.conf, as the C library reads them. */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { DnsServer } from "../config/dns_settings.ts";

/** The C library reads at most three (MAXNS). */
const MAX_NAMESERVERS = 3;

/** The resolvers `text` (resolv.conf's contents) names, in order; port 53. */
export function parseResolvConf(text: string): DnsServer[] {
  const servers: DnsServer[] = [];
  for (const line of text.split("\n")) {
    const [keyword, address] = line.replace(/[#;].*$/, "").trim().split(/\s+/);
    // A link-local address with a zone (fe80::1%eth0) names an interface; those are left out.
    if (keyword !== "nameserver" || !address || address.includes("%") || isIP(address) === 0) continue;
    servers.push({ address, port: 53 });
    if (servers.length === MAX_NAMESERVERS) break;
  }
  return servers;
}

/** The resolvers of `path` (default /etc/resolv.conf); none when it cannot be read. */
export function systemDnsServers(path = "/etc/resolv.conf"): DnsServer[] {
  try {
    return parseResolvConf(readFileSync(path, "utf8"));
  } catch {
    return [];
  }
}
