/**
 * MTA-STS as the DnsInspector holds it from check to check (CONTRACT §22, RFC 8461 §3, §4.1, §5): the
 * `_mta-sts` TXT record from an in-process DNS fixture, the policy from a scripted fetcher, time from
 * a fixed clock. What a user sees is `mta_sts_mismatch` (findings.mtaSts.mismatch) and whether the
 * policy host is asked again; both are asserted here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CertificateDetails, DnsFindings } from "../core/base/records.ts";
import { BUILT_IN_CAA_IDENTITIES, DnsClient, DnsInspector, mxMatches, parseStsPolicy } from "../core/dns/mod.ts";
import type { FetchLimits, FetchRequest, FetchResult, HttpFetcher } from "../core/net/http_fetch.ts";
import { FetchFailure } from "../core/net/mod.ts";
import { answerTo, startFixtureDns, type FixtureDnsServer } from "./support/dns_servers.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 1);

/** What the fixture's `_mta-sts.<domain>` TXT records say, by mail domain. */
const txt = new Map<string, string[]>();
let dns: FixtureDnsServer;

/** Mail domains whose `_mta-sts` TXT lookups fail (SERVFAIL). */
const failingTxt = new Set<string>();

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

describe("when a policy is a mismatch", () => {
  test("an enforce policy whose mx patterns miss the host: mta_sts_mismatch, though the certificate covers the host", async () => {
    txt.set("a1.example", ["v=STSv1; id=one"]);
    const { fetcher } = scriptedFetcher(new Map([[url("a1.example"), { body: policyText("enforce", ["other.a1.example"]) }]]));
    const findings = await check(inspector(fetcher), "mx.a1.example");
    expect(findings?.mtaSts).toMatchObject({ mailDomain: "a1.example", id: "one", mismatch: true });
  });

  test("an enforce policy naming the host, served a leaf that does not cover it: mta_sts_mismatch", async () => {
    txt.set("a2.example", ["v=STSv1; id=one"]);
    const { fetcher } = scriptedFetcher(new Map([[url("a2.example"), { body: policyText("enforce", ["*.a2.example"]) }]]));
    expect((await check(inspector(fetcher), "mx.a2.example", { names: ["mail.other.example"] }))?.mtaSts?.mismatch).toBe(true);
    expect((await check(inspector(fetcher), "mx.a2.example", { names: ["mx.a2.example"] }))?.mtaSts?.mismatch).toBe(false);
  });

  test("a testing policy that misses the host is no mismatch: only enforce is judged", async () => {
    txt.set("a3.example", ["v=STSv1; id=one"]);
    const { fetcher } = scriptedFetcher(new Map([[url("a3.example"), { body: policyText("testing", ["other.a3.example"]) }]]));
    expect((await check(inspector(fetcher), "mx.a3.example"))?.mtaSts).toMatchObject({ policy: { mode: "testing" }, mismatch: false });
  });
});

describe("where the policy is read from", () => {
  test("the mailDomain given is the one asked about, not the domain minus its first label", async () => {
    txt.set("given.example", ["v=STSv1; id=g1"]);
    const { fetcher, requests } = scriptedFetcher(new Map([[url("given.example"), { body: policyText("enforce", ["nomatch.given.example"]) }]]));
    const findings = await check(inspector(fetcher), "mx.default.example", { mailDomain: "given.example" });
    expect(findings?.mtaSts).toMatchObject({ mailDomain: "given.example", mismatch: true });
    expect(requests.map((r) => r.url)).toEqual([url("given.example")]);
  });

  test("the policy is read with the 64 KiB limit", async () => {
    txt.set("limit.example", ["v=STSv1; id=l1"]);
    const { fetcher, requests } = scriptedFetcher(new Map([[url("limit.example"), { body: policyText("enforce", ["mx.limit.example"]) }]]));
    await check(inspector(fetcher), "mx.limit.example");
    expect(requests.map((r) => r.limits.maxBytes)).toEqual([65_536]);
  });

  test("an answer other than 200 is no policy, even one whose body is a policy (a redirect is not followed nor read)", async () => {
    txt.set("redirect.example", ["v=STSv1; id=r1"]);
    for (const status of [301, 204, 203]) {
      const { fetcher } = scriptedFetcher(new Map([[url("redirect.example"), { status, body: policyText("enforce", ["nomatch.redirect.example"]) }]]));
      expect({ status, mtaSts: (await check(inspector(fetcher), "mx.redirect.example"))?.mtaSts }).toEqual({
        status,
        mtaSts: { mailDomain: "redirect.example", id: null, policy: null, fetchedAt: null, mismatch: false },
      });
    }
  });

  test("with the system's resolvers, a mail domain under a special-use name is not asked about (the host's own name is)", async () => {
    txt.set("corp.test", ["v=STSv1; id=t1"]);
    const { fetcher, requests } = scriptedFetcher(new Map([[url("corp.test"), { body: policyText("enforce", ["nomatch.corp.test"]) }]]));
    const asked = dns.questions().length;
    const findings = await check(inspector(fetcher, { systemResolvers: true }), "mx.public.net", { mailDomain: "corp.test" });
    expect(findings).not.toBeNull();
    expect(findings?.mtaSts).toBeUndefined();
    expect(requests).toEqual([]);
    expect(dns.questions().slice(asked).map((q) => q.question)).not.toContain("TXT _mta-sts.corp.test");
  });
});

describe("the policy senders cache (RFC 8461 §5)", () => {
  const enforceMiss = (domain: string) => policyText("enforce", [`nomatch.${domain}`]);

  test("while max_age lasts, the same id is not fetched again", async () => {
    txt.set("cache1.example", ["v=STSv1; id=c1"]);
    const { fetcher, requests } = scriptedFetcher(new Map([[url("cache1.example"), { body: enforceMiss("cache1.example") }]]));
    const first = await check(inspector(fetcher, { now: NOW }), "mx.cache1.example");
    expect(first?.mtaSts).toMatchObject({ id: "c1", fetchedAt: NOW, mismatch: true });
    const later = await check(inspector(fetcher, { now: NOW + 3_600_000 }), "mx.cache1.example", { previous: first });
    expect(later?.mtaSts).toMatchObject({ id: "c1", fetchedAt: NOW, mismatch: true });
    expect(requests.length).toBe(1);
  });

  test("once max_age has passed (at fetchedAt + max_age exactly), the policy is fetched again", async () => {
    txt.set("cache2.example", ["v=STSv1; id=c2"]);
    const { fetcher, requests } = scriptedFetcher(new Map([[url("cache2.example"), { body: policyText("enforce", ["nomatch.cache2.example"], 3600) }]]));
    const first = await check(inspector(fetcher, { now: NOW }), "mx.cache2.example");
    const expired = await check(inspector(fetcher, { now: NOW + 3_600_000 }), "mx.cache2.example", { previous: first });
    expect(expired?.mtaSts?.fetchedAt).toBe(NOW + 3_600_000);
    expect(requests.length).toBe(2);
  });

  test("the TXT record removed: the cached enforce policy still holds until max_age (its mismatch stays)", async () => {
    txt.set("cache3.example", ["v=STSv1; id=c3"]);
    const { fetcher } = scriptedFetcher(new Map([[url("cache3.example"), { body: enforceMiss("cache3.example") }]]));
    const first = await check(inspector(fetcher, { now: NOW }), "mx.cache3.example");
    txt.delete("cache3.example");
    const later = await check(inspector(fetcher, { now: NOW + 60_000 }), "mx.cache3.example", { previous: first });
    expect(later?.mtaSts).toMatchObject({ id: "c3", policy: { mode: "enforce" }, mismatch: true });
    // After max_age, with no record, no policy is held.
    const expired = await check(inspector(fetcher, { now: NOW + 2 * DAY }), "mx.cache3.example", { previous: later });
    expect(expired?.mtaSts).toMatchObject({ id: null, policy: null, mismatch: false });
  });

  test("a new id whose policy cannot be fetched: the cached policy still holds", async () => {
    txt.set("cache4.example", ["v=STSv1; id=old"]);
    const policies = new Map<string, { status?: number; body: string }>([[url("cache4.example"), { body: enforceMiss("cache4.example") }]]);
    const { fetcher } = scriptedFetcher(policies);
    const first = await check(inspector(fetcher, { now: NOW }), "mx.cache4.example");
    txt.set("cache4.example", ["v=STSv1; id=new"]);
    policies.set(url("cache4.example"), { status: 500, body: "" });
    const later = await check(inspector(fetcher, { now: NOW + 60_000 }), "mx.cache4.example", { previous: first });
    expect(later?.mtaSts).toMatchObject({ id: "old", fetchedAt: NOW, mismatch: true });
  });

  test("a policy cached for another mail domain (mailDomain changed) is not held for the new one", async () => {
    txt.set("was.example", ["v=STSv1; id=same"]);
    txt.set("now.example", ["v=STSv1; id=same"]);
    const { fetcher } = scriptedFetcher(new Map([[url("was.example"), { body: enforceMiss("was.example") }]]));
    const first = await check(inspector(fetcher, { now: NOW }), "mx.was.example", { mailDomain: "was.example" });
    expect(first?.mtaSts?.mismatch).toBe(true);
    // now.example's policy host answers nothing: no policy, whatever was held for was.example.
    const later = await check(inspector(fetcher, { now: NOW + 60_000 }), "mx.was.example", { mailDomain: "now.example", previous: first });
    expect(later?.mtaSts).toEqual({ mailDomain: "now.example", id: null, policy: null, fetchedAt: null, mismatch: false });
  });
});

describe("the policy text (RFC 8461 §3.2)", () => {
  test("a repeated mode field: the first one counts, as for version and max_age", () => {
    expect(parseStsPolicy("version: STSv1\nmode: enforce\nmode: none\nmx: mx1.example.com\nmax_age: 86400\nmax_age: 1\n")).toEqual({
      mode: "enforce",
      mx: ["mx1.example.com"],
      maxAge: 86400,
    });
  });
});

describe("field names are case-sensitive (RFC 8461 §3.2's ABNF: %s\"version\", %s\"mode\")", () => {
  test("Version: or Mode: is no such field: the policy lacks it and is none", () => {
    expect(parseStsPolicy("Version: STSv1\nmode: enforce\nmx: mx1.example.com\nmax_age: 86400\n")).toBeNull();
    expect(parseStsPolicy("version: STSv1\nMode: enforce\nmx: mx1.example.com\nmax_age: 86400\n")).toBeNull();
  });
});

describe("mx patterns without a wildcard (RFC 8461 §4.1)", () => {
  test("a plain pattern matches that host alone: not a name below it, not a name ending in it", () => {
    expect(mxMatches("mx1.example.com", "a.mx1.example.com")).toBe(false);
    expect(mxMatches("mx1.example.com", "evilmx1.example.com")).toBe(false);
    expect(mxMatches("*.example.com", "mx1.evilexample.com")).toBe(false);
  });
});

describe("special-use names (RFC 6761) and the system's resolvers", () => {
  test("a host under .test, .example, .invalid or .localhost is not looked up through the system's resolvers; a configured resolver is asked", async () => {
    const { fetcher } = scriptedFetcher(new Map());
    for (const domain of ["mx.shop.test", "mx.shop.example", "mx.shop.invalid", "mx.localhost"]) {
      expect({ domain, started: inspector(fetcher, { systemResolvers: true }).begin({ domain, port: 25, protocol: "smtp" }) }).toEqual({ domain, started: null });
      const configured = inspector(fetcher, { systemResolvers: false }).begin({ domain, port: 25, protocol: "smtp" });
      expect(configured).not.toBeNull();
      configured!.cancel();
    }
  });
});

// After mailDomain changes (add, patch), a failed lookup of the new one holds nothing of the old one's policy.
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

