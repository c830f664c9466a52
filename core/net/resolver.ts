/** Name resolution with CERTKEEPER_RESOLVE's overrides, and the private-address guard applied to its answer. */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { matchResolveRule, type ResolveRule } from "../config/resolve_rules.ts";
import { refusedAddressReason } from "./address_policy.ts";
import type { NetFailureReason } from "../base/records.ts";


/** A failure to reach a target, classified as CONTRACT §5's statusReason values. */
export class NetFailure extends Error {
  constructor(
    readonly reason: NetFailureReason,
    message: string,
  ) {
    super(message);
    this.name = "NetFailure";
  }
}

export interface ResolverOptions {
  rules: ResolveRule[];
  allowPrivateTargets: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves `host` and vets every address it resolves to. Refuses the whole name when any address is
 * not allowed: a name that answers with one public and one private address is a classic DNS-rebinding
 * setup, and the order of the answers is the attacker's to choose.
 */
export async function resolveVetted(host: string, options: ResolverOptions): Promise<ResolvedAddress[]> {
  const addresses = await resolveHost(host, options.rules);
  if (!options.allowPrivateTargets) {
    for (const { address } of addresses) {
      const reason = refusedAddressReason(address);
      if (reason) {
        // The kind of address, not the address: callers must not map the server's network through us.
        throw new NetFailure("connection_refused", `${host} resolves to ${reason}, which certkeeper does not connect to`);
      }
    }
  }
  return addresses;
}

export async function resolveHost(host: string, rules: ResolveRule[]): Promise<ResolvedAddress[]> {
  // A host name ending in a letter is no IP literal: skip isIP's large IPv6 expression on the hot path.
  const family = /[a-z]$/i.test(host) ? 0 : isIP(host);
  if (family !== 0) return [{ address: host, family: family as 4 | 6 }];
  const rule = matchResolveRule(rules, host);
  if (rule) {
    if (rule.address === null) throw new NetFailure("dns_error", `${host} does not resolve (NXDOMAIN)`);
    return (rule.addresses ?? [rule.address]).map((address) => ({ address, family: isIP(address) as 4 | 6 }));
  }
  try {
    const answers = await lookup(host, { all: true, verbatim: true });
    if (answers.length === 0) throw new NetFailure("dns_error", `${host} has no addresses`);
    return answers.map((answer) => ({ address: answer.address, family: answer.family as 4 | 6 }));
  } catch (error) {
    if (error instanceof NetFailure) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new NetFailure("dns_error", `${host} does not resolve (${code})`);
  }
}
