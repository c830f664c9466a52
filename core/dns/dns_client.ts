/**
 * A stub resolver for the records CONTRACT §22 reads (CAA, TLSA, TXT, CNAME): asks the configured
 * resolvers in order, over UDP with TCP on truncation, under the caller's time limit, and follows
 * CNAME chains (bounded, loops refused). A/AAAA for connecting never come from here: they follow
 * CERTKEEPER_RESOLVE and the system's resolver (core/net).
 *
 * @example
 * const client = new DnsClient([{ address: "127.0.0.1", port: 53 }]);
 * const limit = deadline(10_000);
 * const caa = await client.lookup("example.com", "CAA", limit);
 */
import type * as dnsPacket from "dns-packet";
import type { DnsServer } from "../config/dns_settings.ts";
import type { Deadline } from "../net/deadline.ts";
import { DnsFailure, exchange, type DnsAnswerMessage, type DnsQuestionType } from "./_exchange.ts";

export { DnsFailure, type DnsQuestionType } from "./_exchange.ts";

/** How a lookup ended, as `certkeeper_dns_lookups_total{type,result}` counts it. */
export type DnsLookupResult = "ok" | "nxdomain" | "error" | "timeout";

export interface DnsClientOptions {
  /** Called once per question sent (each step of a CNAME chain or a CAA climb is one). */
  onLookup?: (lookup: { type: DnsQuestionType; result: DnsLookupResult }) => void;
}

/** Most CNAMEs followed from one name (RFC 1034 leaves it to the resolver; 8 is what stub resolvers use). */
export const MAX_CNAME_HOPS = 8;

/** The records of one type at the end of a name's CNAME chain. */
export interface RecordSet<T> {
  /** The name the records are at: the name asked, or the end of its CNAME chain. */
  owner: string;
  records: T[];
  /** Every answer on the way carried the AD bit. */
  authenticated: boolean;
}

export class DnsClient {
  constructor(
    readonly servers: readonly DnsServer[],
    private readonly options: DnsClientOptions = {},
  ) {}

  /**
   * The `type` records of `name`, CNAMEs followed (RFC 1034 §4.3.2): an empty set for NXDOMAIN or no
   * data. Records of other names that a resolver slipped into the answer are not taken. Throws
   * DnsFailure when no resolver gave a usable answer, or on a CNAME loop or a chain too long.
   */
  async lookup<T = unknown>(name: string, type: Exclude<DnsQuestionType, "CNAME">, limit: Deadline): Promise<RecordSet<T>> {
    const seen = new Set<string>();
    let current = canonical(name);
    let authenticated = true;
    for (;;) {
      const message = await this.ask(current, type, limit);
      authenticated &&= message.authenticated;
      const chain = followCnames(message.answers, current, seen);
      current = chain.end;
      const records = message.answers.filter((answer) => answer.type === type && canonical(answer.name) === current);
      // A resolver that answered the chain without the end's records (an authoritative server whose zone
      // ends there) is asked about the end itself; one that answered the end, or nothing new, is done.
      if (records.length > 0 || !chain.moved || message.answers.some((answer) => canonical(answer.name) === current)) {
        return { owner: current, records: records.map((answer) => (answer as unknown as { data: T }).data), authenticated };
      }
    }
  }

  /** Where `name`'s CNAME chain ends (`name` itself when it is no alias), and whether each step was validated. */
  async expandAlias(name: string, limit: Deadline): Promise<{ target: string; authenticated: boolean }> {
    const seen = new Set<string>();
    let current = canonical(name);
    let authenticated = true;
    for (;;) {
      const message = await this.ask(current, "CNAME", limit);
      authenticated &&= message.authenticated;
      const chain = followCnames(message.answers, current, seen);
      if (!chain.moved) return { target: current, authenticated };
      current = chain.end;
    }
  }

  /** One question, to each resolver in turn until one answers; each gets an equal share of the time left. */
  async ask(name: string, type: DnsQuestionType, limit: Deadline): Promise<DnsAnswerMessage> {
    let failure: DnsFailure | undefined;
    for (const [index, server] of this.servers.entries()) {
      const left = limit.dueAt - performance.now();
      if (left <= 0 || limit.signal.aborted) break;
      try {
        const message = await exchange({ server, name, type, signal: limit.signal, timeoutMs: left / (this.servers.length - index) });
        this.options.onLookup?.({ type, result: message.rcode === "NXDOMAIN" ? "nxdomain" : "ok" });
        return message;
      } catch (error) {
        if (!(error instanceof DnsFailure)) throw error;
        // Dropped before its time was up (the check no longer needs it): no outcome to count.
        const dropped = limit.signal.aborted && performance.now() < limit.dueAt;
        if (!dropped) this.options.onLookup?.({ type, result: error.reason === "timeout" ? "timeout" : "error" });
        failure = error;
      }
    }
    throw failure ?? new DnsFailure("timeout", `no resolver answered ${type} ${name} in time`);
  }
}

/** Letters, digits, hyphens and underscores (`_25._tcp`, `_mta-sts`), labels of 1-63 characters, 253 in all (canonical: lower case, no trailing dot). */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Lower case, without a trailing dot: how names are compared. */
export function canonical(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/** Follows the CNAMEs of `answers` from `start`; `seen` spans the whole lookup, so a loop across questions is caught too. */
function followCnames(answers: dnsPacket.Answer[], start: string, seen: Set<string>): { end: string; moved: boolean } {
  let current = start;
  for (;;) {
    const alias = answers.find((answer) => answer.type === "CNAME" && canonical(answer.name) === current);
    if (!alias) return { end: current, moved: current !== start };
    seen.add(current);
    const target = canonical(String((alias as { data: unknown }).data));
    // A label may hold any octet; a name certkeeper goes on to (and shows: where CAA was set) must be a host name.
    if (!HOST_NAME.test(target)) throw new DnsFailure("malformed", `the CNAME of ${current} points to ${JSON.stringify(target).slice(0, 80)}, which is no host name`);
    if (seen.has(target)) throw new DnsFailure("cname_loop", `the CNAME chain of ${start} loops back to ${target}`);
    if (seen.size >= MAX_CNAME_HOPS) throw new DnsFailure("cname_loop", `the CNAME chain of ${start} is longer than ${MAX_CNAME_HOPS} names`);
    current = target;
  }
}
