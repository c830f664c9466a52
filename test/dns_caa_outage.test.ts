/**
 * CAA through a DNS outage (CONTRACT §22: "DNS failures never change a status"), at the DnsInspector:
 * the sets found before stand only for a leaf whose names need exactly those climbs; a leaf that needs
 * a climb never answered gets no verdict (and the check still completes), and the sets are kept for
 * when the earlier leaf is served again. An in-process DNS fixture answers, then fails.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CertificateDetails, DnsFindings } from "../core/base/records.ts";
import { BUILT_IN_CAA_IDENTITIES, DnsClient, DnsInspector } from "../core/dns/mod.ts";
import { answerTo, startFixtureDns, type FixtureDnsServer } from "./support/dns_servers.ts";

let failing = false;
let dns: FixtureDnsServer;

beforeAll(async () => {
  // shop.test names letsencrypt.org only: a leaf of DigiCert is forbidden under it.
  dns = await startFixtureDns((query) => {
    if (failing) return { message: answerTo(query, [], { rcode: "SERVFAIL" }) };
    const { name, type } = query.questions![0]!;
    const records = type === "CAA" && name === "shop.test" ? [{ type: "CAA" as const, name, ttl: 60, data: { flags: 0, tag: "issue" as const, value: "letsencrypt.org" } }] : [];
    return { message: answerTo(query, records) };
  });
});

afterAll(async () => {
  await dns?.close();
});

const inspector = () =>
  new DnsInspector({ client: new DnsClient([{ address: "127.0.0.1", port: dns.port }]), systemResolvers: false, timeoutMs: 2000, identities: BUILT_IN_CAA_IDENTITIES });

function digicertLeaf(names: string[]): CertificateDetails {
  return {
    serialNumber: names.join(","),
    notBefore: 0,
    notAfter: Date.now() + 60 * 86_400_000,
    issuer: "DigiCert Inc",
    subject: names[0]!,
    subjectAlternativeNames: names,
    signatureAlgorithm: "sha256WithRSAEncryption",
    chain: [{ subject: names[0]!, issuer: "DigiCert Global G2 TLS RSA SHA256 2020 CA1" } as CertificateDetails["chain"][number]],
  };
}

async function check(domain: string, details: CertificateDetails, previous: DnsFindings | null) {
  return inspector().begin({ domain, port: 443 }, previous)!.finish({ details, endpoints: [] });
}

describe("a DNS outage after a CAA verdict", () => {
  test("the same leaf: the verdict stands (from the sets kept), and it is not announced as new", async () => {
    failing = false;
    const first = await check("www.shop.test", digicertLeaf(["www.shop.test"]), null);
    expect([first.findings.caa?.status, first.caaAnswered]).toEqual(["forbidden", true]);
    failing = true;
    const outage = await check("www.shop.test", digicertLeaf(["www.shop.test"]), first.findings);
    expect([outage.findings.caa?.status, outage.caaAnswered]).toEqual(["forbidden", false]);
  });

  test("a leaf that also names the wildcard (a climb from shop.test never answered): no verdict, the check completes, the sets are kept for later", async () => {
    failing = false;
    const first = await check("www.shop.test", digicertLeaf(["www.shop.test"]), null);
    failing = true;
    const wider = await check("www.shop.test", digicertLeaf(["www.shop.test", "*.shop.test"]), first.findings);
    expect([wider.findings.caa, wider.caaAnswered]).toEqual([undefined, false]);
    expect(wider.findings.caaSets).toEqual(first.findings.caaSets);
    // The first leaf served again, DNS still failing: judged by the sets kept through the other leaf's check.
    const back = await check("www.shop.test", digicertLeaf(["www.shop.test"]), wider.findings);
    expect([back.findings.caa?.status, back.caaAnswered]).toEqual(["forbidden", false]);
  });
});
