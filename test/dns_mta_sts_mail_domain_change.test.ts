/**
 * DEFECT (fails on the current code): MTA-STS after `mailDomain` is changed (CONTRACT §22: add, patch)
 * and the new mail domain's `_mta-sts` TXT lookup fails. dns_inspector.ts keeps the policy held only
 * for the same mail domain when the lookup fails (#mtaSts), but its fallback (#kept with
 * previous.mtaSts) hands back the OLD mail domain's findings, whose enforce policy is then judged
 * against the host: mta_sts_mismatch drawn from a policy of a domain the certificate no longer names.
 *
 * MTA-STS as the DnsInspector holds it from check to check (CONTRACT §22, RFC 8461 §3, §4.1, §5): the
 * `_mta-sts` TXT record from an in-process DNS fixture, the policy from a scripted fetcher, time from
 * a fixed clock. What a user sees is `mta_sts_mismatch` (findings.mtaSts.mismatch) and whether the
 * policy host is asked again; both are asserted here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CertificateDetails, DnsFindings } from "../core/base/records.ts";
import { BUILT_IN_CAA_IDENTITIES, DnsClient, DnsInspector } from "../core/dns/mod.ts";
import type { FetchLimits, FetchRequest, FetchResult, HttpFetcher } from "../core/net/http_fetch.ts";
import { FetchFailure } from "../core/net/mod.ts";
import { answerTo, startFixtureDns, type FixtureDnsServer } from "./support/dns_servers.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 1);

/** What the fixture's `_mta-sts.<domain>` TXT records say, by mail domain. */
const txt = new Map<string, string[]>();
/** Mail domains whose `_mta-sts` TXT lookups fail (SERVFAIL). */
const failingTxt = new Set<string>();
let dns: FixtureDnsServer;

beforeAll(async () => {
  dns = await startFixtureDns((query) => {
    const { name, type } = query.questions![0]!;
    const domain = name.replace(/^_mta-sts\./, "");
    if (failingTxt.has(domain)) return { message: answerTo(query, [], { rcode: "SERVFAIL" }) };
    if (type === "TXT" && name.startsWith("_mta-sts.") && txt.has(domain)) {
      return { message: answerTo(query, txt.get(domain)!.map((text) => ({ type: "TXT", name, ttl: 60, data: text }))) };
    }
    return { message: answerTo(query, []) };
  });
});

afterAll(async () => {
  await dns?.close();
});

/** A fetcher answering each policy URL from `policies` (status 200 unless given), counting requests. */
function scriptedFetcher(policies: Map<string, { status?: number; body: string }>) {
  const requests: Array<{ url: string; limits: FetchLimits }> = [];
  const fetcher: HttpFetcher = {
    async fetch(request: FetchRequest, limits: FetchLimits): Promise<FetchResult> {
      requests.push({ url: request.url, limits });
      const policy = policies.get(request.url);
      if (!policy) throw new FetchFailure("network", `no policy at ${request.url}`);
      return { status: policy.status ?? 200, headers: {}, body: new TextEncoder().encode(policy.body) };
    },
  };
  return { fetcher, requests };
}

function inspector(fetcher: HttpFetcher, options: { now?: number; systemResolvers?: boolean } = {}) {
  const client = new DnsClient([{ address: "127.0.0.1", port: dns.port }]);
  const clock = { now: () => options.now ?? NOW, sleep: () => Promise.resolve() };
  return new DnsInspector({ client, systemResolvers: options.systemResolvers ?? false, fetcher, timeoutMs: 2000, identities: BUILT_IN_CAA_IDENTITIES, clock });
}

function details(names: string[]): CertificateDetails {
  return {
    serialNumber: "01",
    notBefore: NOW - 10 * DAY,
    notAfter: NOW + 80 * DAY,
    issuer: "Internal Issuing CA",
    subject: names[0]!,
    subjectAlternativeNames: names,
    signatureAlgorithm: "sha256WithRSAEncryption",
    chain: [],
  };
}

/** One check of `domain` (smtp, port 25) serving a leaf naming `names`. */
async function check(dnsInspector: DnsInspector, domain: string, options: { names?: string[]; mailDomain?: string; previous?: DnsFindings | null } = {}) {
  const served = details(options.names ?? [domain]);
  const started = dnsInspector.begin({ domain, port: 25, protocol: "smtp", mailDomain: options.mailDomain ?? null }, options.previous ?? null);
  if (!started) return null;
  const { findings } = await started.finish({ details: served, endpoints: [{ address: "127.0.0.1", ders: null, chain: null, details: served }] });
  return findings;
}

const policyText = (mode: string, mx: string[], maxAge = 86_400) => `version: STSv1\nmode: ${mode}\n${mx.map((m) => `mx: ${m}`).join("\n")}\nmax_age: ${maxAge}\n`;
const url = (mailDomain: string) => `https://mta-sts.${mailDomain}/.well-known/mta-sts.txt`;

describe("a DNS failure after the mail domain changed", () => {
  test("the TXT lookup of the new mail domain fails: the old mail domain's policy is not judged for it", async () => {
    txt.set("before.example", ["v=STSv1; id=b1"]);
    failingTxt.add("after.example");
    const { fetcher } = scriptedFetcher(new Map([[url("before.example"), { body: policyText("enforce", ["nomatch.before.example"]) }]]));
    const first = await check(inspector(fetcher, { now: NOW }), "mx.before.example", { mailDomain: "before.example" });
    expect(first?.mtaSts).toMatchObject({ mailDomain: "before.example", mismatch: true });
    const later = await check(inspector(fetcher, { now: NOW + 60_000 }), "mx.before.example", { mailDomain: "after.example", previous: first });
    // Nothing is known of after.example's policy: no mta_sts_mismatch drawn from before.example's.
    expect(later?.mtaSts?.mismatch ?? false).toBe(false);
    expect(later?.mtaSts?.mailDomain ?? "after.example").toBe("after.example");
  });
});

