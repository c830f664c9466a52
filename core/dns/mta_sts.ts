/**
 * MTA-STS (RFC 8461): the `_mta-sts` TXT record of a mail domain, its policy fetched over HTTPS, and
 * whether a mail server's host name and certificate are covered by an `enforce` policy.
 */
import type * as dnsPacket from "dns-packet";
import type { MtaStsPolicy } from "../base/records.ts";
import type { Deadline } from "../net/deadline.ts";
import { FetchFailure, type HttpFetcher } from "../net/http_fetch.ts";
import type { DnsClient } from "./dns_client.ts";

/** RFC 8461 §3.3's bound on a policy's body is the sender's choice; CONTRACT §22 reads 64 KiB. */
export const MTA_STS_MAX_BYTES = 64 * 1024;
/** RFC 8461 §3.2: max_age is at most 31557600 seconds (a year). */
const MAX_AGE_LIMIT = 31_557_600;

/** What the TXT record says: a policy with this id exists, or none (absent, several, or malformed: RFC 8461 §3.1). */
export type StsRecord = { id: string } | null;

/** The `_mta-sts.<mailDomain>` TXT answer; throws DnsFailure when the resolvers gave none. */
export async function lookupStsRecord(client: DnsClient, mailDomain: string, limit: Deadline): Promise<StsRecord> {
  const set = await client.lookup<dnsPacket.TxtData>(`_mta-sts.${mailDomain}`, "TXT", limit);
  return parseStsRecords(set.records.map(txtText));
}

/** A TXT record's strings, concatenated (RFC 8461 §3.1), as text. */
function txtText(data: dnsPacket.TxtData): string {
  const parts = Array.isArray(data) ? data : [data];
  return parts.map((part) => (typeof part === "string" ? part : Buffer.from(part).toString("utf8"))).join("");
}

/** RFC 8461 §3.1's record: `v=STSv1`, then `;`-separated fields, each `id=…` or `name=value`. */
const STS_SEPARATOR = "[ \\t]*;[ \\t]*";
const STS_FIELD = "[A-Za-z0-9][A-Za-z0-9_.-]{0,31}=[\\x21-\\x3a\\x3c\\x3e-\\x7e]+";
const STS_RECORD = new RegExp(`^v=STSv1(?:${STS_SEPARATOR}${STS_FIELD})+(?:${STS_SEPARATOR})?$`);

/**
 * Records not starting with `v=STSv1` are discarded; anything but exactly one record, or one outside
 * the grammar, means no policy (RFC 8461 §3.1: senders then assume none, and so does certkeeper).
 */
export function parseStsRecords(texts: readonly string[]): StsRecord {
  // RFC 8461 §3.1: "Records that do not begin with "v=STSv1;" are discarded" (a bare "v=STSv1" among them).
  const candidates = texts.filter((text) => /^v=STSv1[ \t]*;/.test(text));
  if (candidates.length !== 1 || !STS_RECORD.test(candidates[0]!)) return null;
  const fields = candidates[0]!.split(";").map((field) => field.trim()).filter((field) => field !== "");
  const id = fields.find((field) => field.startsWith("id="))?.slice(3);
  return id !== undefined && /^[A-Za-z0-9]{1,32}$/.test(id) ? { id } : null;
}

/** The policy text of RFC 8461 §3.2, or null when it lacks a field a sender needs or holds a bad value. */
export function parseStsPolicy(text: string): MtaStsPolicy | null {
  let version: string | undefined;
  let mode: string | undefined;
  let maxAge: string | undefined;
  const mx: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    // The first of a repeated field counts (RFC 8461 §3.2), mx excepted: it may repeat.
    if (key === "version") version ??= value;
    else if (key === "mode") mode ??= value;
    else if (key === "max_age") maxAge ??= value;
    else if (key === "mx" && value !== "") mx.push(value.toLowerCase().replace(/\.$/, ""));
  }
  if (version !== "STSv1" || (mode !== "enforce" && mode !== "testing" && mode !== "none")) return null;
  if (maxAge === undefined || !/^\d{1,10}$/.test(maxAge)) return null;
  if (mode !== "none" && mx.length === 0) return null;
  return { mode, mx, maxAge: Math.min(Number(maxAge), MAX_AGE_LIMIT) };
}

/** RFC 8461 §4.1: `*.example.com` matches one label more (`mx1.example.com`), not `example.com` nor two labels more. */
export function mxMatches(pattern: string, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (!pattern.startsWith("*.")) return pattern === name;
  const dot = name.indexOf(".");
  return dot > 0 && name.slice(dot + 1) === pattern.slice(2);
}

/**
 * Fetches `https://mta-sts.<mailDomain>/.well-known/mta-sts.txt` (private-address rule, no redirect,
 * 64 KiB, the time limit). Throws FetchFailure when no policy came: not a 200, or not a policy.
 */
export async function fetchStsPolicy(fetcher: HttpFetcher, mailDomain: string, timeoutMs: number): Promise<MtaStsPolicy> {
  const url = `https://mta-sts.${mailDomain}/.well-known/mta-sts.txt`;
  const response = await fetcher.fetch({ url, method: "GET", headers: { accept: "text/plain" } }, { timeoutMs, maxBytes: MTA_STS_MAX_BYTES });
  if (response.status !== 200) throw new FetchFailure("network", `${url} answered HTTP ${response.status}, not 200 (redirects are not followed)`);
  const policy = parseStsPolicy(new TextDecoder().decode(response.body));
  if (!policy) throw new FetchFailure("network", `${url} does not hold a valid MTA-STS policy`);
  return policy;
}
