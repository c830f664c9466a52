/**
 * Where DANE's TLSA records are looked for (RFC 7672 §2.2.3, CONTRACT §22) and what `validated` says:
 * an MX host name that is an alias is expanded only when DNSSEC validated the expansion, the
 * expanded name's records come first and the name's own are the fallback. An in-process DNS fixture
 * sets the AD bit per name, as a validating resolver would.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as dnsPacket from "dns-packet";
import { BUILT_IN_CAA_IDENTITIES, DnsClient, DnsInspector, lookupTlsa } from "../core/dns/mod.ts";
import { deadline } from "../core/net/mod.ts";
import { answerTo, startFixtureDns, type FixtureDnsServer } from "./support/dns_servers.ts";

const EE = "aa".repeat(32);
const OWN = "bb".repeat(32);

interface Zone {
  cnames: Record<string, string>;
  tlsa: Record<string, string>;
  /** Names whose answers carry the AD bit. */
  validated: string[];
}

let zone: Zone = { cnames: {}, tlsa: {}, validated: [] };
let dns: FixtureDnsServer;

beforeAll(async () => {
  dns = await startFixtureDns((query) => {
    const { name, type } = query.questions![0]!;
    const flags = zone.validated.includes(name) ? dnsPacket.AUTHENTIC_DATA : 0;
    if (zone.cnames[name]) return { message: answerTo(query, [{ type: "CNAME", name, ttl: 60, data: zone.cnames[name]! }], { flags }) };
    if (type === "TLSA" && zone.tlsa[name]) {
      return { message: answerTo(query, [{ type: "TLSA", name, ttl: 60, data: { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.from(zone.tlsa[name]!, "hex") } }], { flags }) };
    }
    return { message: answerTo(query, [], { flags }) };
  });
});

afterAll(async () => {
  await dns?.close();
});

const lookup = () => lookupTlsa(new DnsClient([{ address: "127.0.0.1", port: dns.port }]), "mx.mail.test", 25, deadline(2000));

describe("TLSA of an MX host name that is an alias", () => {
  test("an alias DNSSEC did not validate is not followed: the records at the name itself are the ones judged", async () => {
    zone = { cnames: { "mx.mail.test": "mx.provider.test" }, tlsa: { "_25._tcp.mx.provider.test": EE }, validated: ["_25._tcp.mx.provider.test", "_25._tcp.mx.mail.test"] };
    expect(await lookup()).toEqual({ name: "_25._tcp.mx.mail.test", validated: true, records: [] });
  });

  test("a validated alias: the expanded name's records come first, before the name's own", async () => {
    zone = {
      cnames: { "mx.mail.test": "mx.provider.test" },
      tlsa: { "_25._tcp.mx.provider.test": EE, "_25._tcp.mx.mail.test": OWN },
      validated: ["mx.mail.test", "mx.provider.test", "_25._tcp.mx.provider.test", "_25._tcp.mx.mail.test"],
    };
    expect(await lookup()).toEqual({ name: "_25._tcp.mx.provider.test", validated: true, records: [{ usage: 3, selector: 1, matchingType: 1, data: EE }] });
  });

  test("a validated alias whose expanded name has no records: the name's own records are taken", async () => {
    zone = {
      cnames: { "mx.mail.test": "mx.provider.test" },
      tlsa: { "_25._tcp.mx.mail.test": OWN },
      validated: ["mx.mail.test", "mx.provider.test", "_25._tcp.mx.provider.test", "_25._tcp.mx.mail.test"],
    };
    expect(await lookup()).toEqual({ name: "_25._tcp.mx.mail.test", validated: true, records: [{ usage: 3, selector: 1, matchingType: 1, data: OWN }] });
  });

  test("validated is false when the TLSA answer itself carried no AD bit, the alias's expansion validated or not", async () => {
    zone = { cnames: { "mx.mail.test": "mx.provider.test" }, tlsa: { "_25._tcp.mx.provider.test": EE }, validated: ["mx.mail.test", "mx.provider.test"] };
    expect(await lookup()).toMatchObject({ name: "_25._tcp.mx.provider.test", validated: false });
    zone = { cnames: {}, tlsa: { "_25._tcp.mx.mail.test": OWN }, validated: [] };
    expect(await lookup()).toMatchObject({ name: "_25._tcp.mx.mail.test", validated: false });
  });
});

describe("DANE is for smtp certificates only", () => {
  test("a certificate checked over plain TLS (the default) or IMAP asks no TLSA question, and its endpoints get no DANE verdict", async () => {
    zone = { cnames: {}, tlsa: { "_443._tcp.www.mail.test": EE, "_25._tcp.mx.mail.test": EE }, validated: [] };
    const dnsInspector = new DnsInspector({ client: new DnsClient([{ address: "127.0.0.1", port: dns.port }]), systemResolvers: false, timeoutMs: 2000, identities: BUILT_IN_CAA_IDENTITIES });
    const details = { serialNumber: "01", notBefore: 0, notAfter: Date.now() + 86_400_000, issuer: "Internal CA", subject: "www.mail.test", subjectAlternativeNames: ["www.mail.test"], signatureAlgorithm: "sha256WithRSAEncryption", chain: [] };
    const endpoint = { address: "127.0.0.1", ders: [new Uint8Array([0x30, 0x00])], chain: "x", details };
    const asked = dns.questions().length;
    for (const protocol of [undefined, "tls", "imap"] as const) {
      const { dane } = await dnsInspector.begin({ domain: "www.mail.test", port: 443, protocol })!.finish({ details, endpoints: [endpoint] });
      expect(dane.size).toBe(0);
    }
    expect(dns.questions().slice(asked).filter((q) => q.question.startsWith("TLSA") || q.question.startsWith("CNAME"))).toEqual([]);
    // The same host as smtp does ask.
    const smtp = await dnsInspector.begin({ domain: "mx.mail.test", port: 25, protocol: "smtp" })!.finish({ details: { ...details, subjectAlternativeNames: ["mx.mail.test"] }, endpoints: [endpoint] });
    expect(smtp.dane.size).toBe(1);
  });
});
