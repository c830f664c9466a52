/**
 * CONTRACT §22's settings: CERTKEEPER_DNS_SERVERS (the resolvers asked for CAA, TLSA and TXT records)
 * and CERTKEEPER_CAA_IDENTITIES (which CAA domain names each certificate authority).
 */
import { isIP } from "node:net";
import { splitEscaped } from "./escaped_list.ts";

/** A resolver to ask: an IP address and a port. */
export interface DnsServer {
  address: string;
  port: number;
}

/** `system`: the resolvers of /etc/resolv.conf; `off`: no lookups (no CAA, DANE or MTA-STS judgement). */
export type DnsServersSetting = "system" | "off" | DnsServer[];

/** An issuer name (compared case-insensitively with the issuer's O and CN) and the CAA domain of its CA. */
export interface CaaIdentity {
  name: string;
  domain: string;
}

/** Most resolvers one may list; a lookup tries them in order. */
const MAX_SERVERS = 8;

/** `host[:port]` items separated by commas, each host an IP address (`[v6]:port` for a port after IPv6). */
export function parseDnsServers(text: string): DnsServersSetting {
  const value = text.trim();
  if (value === "system" || value === "off") return value;
  const servers = value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map(parseServer);
  if (servers.length === 0) throw new Error("name at least one resolver, such as 127.0.0.1:53, or say system or off");
  if (servers.length > MAX_SERVERS) throw new Error(`name at most ${MAX_SERVERS} resolvers`);
  return servers;
}

function parseServer(part: string): DnsServer {
  const refuse = (why: string) => new Error(`"${part}" ${why}: write an IP address with an optional port, such as 192.0.2.53:53 or [2001:db8::53]:53`);
  let host = part;
  let port = 53;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(part);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (isIP(part) === 0 && part.includes(":") && part.indexOf(":") === part.lastIndexOf(":")) {
    host = part.slice(0, part.indexOf(":"));
    port = Number(part.slice(part.indexOf(":") + 1));
  }
  if (isIP(host) === 0) throw refuse("is not an IP address (a resolver is named by its address)");
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw refuse("has a port outside 1-65535");
  return { address: host, port };
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * `issuer name=caa-domain` pairs separated by commas, e.g. `Example CA=ca.example,Internal Issuing CA=pki.corp.example`.
 * A comma inside an issuer name is written `\,` (`Entrust\, Inc.=entrust.net`), a backslash `\\`.
 */
export function parseCaaIdentities(text: string): CaaIdentity[] {
  return splitEscaped(text)
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const eq = part.lastIndexOf("=");
      const name = part.slice(0, eq).trim();
      const domain = part.slice(eq + 1).trim().toLowerCase().replace(/\.$/, "");
      if (eq <= 0 || name === "") {
        throw new Error(`"${part}" is not a pair: write issuer name=caa-domain, such as Example CA=ca.example (a comma in a name as \\,)`);
      }
      if (!DOMAIN.test(domain)) throw new Error(`"${domain}" in "${part}" is not a domain name such as letsencrypt.org`);
      return { name, domain };
    });
}
