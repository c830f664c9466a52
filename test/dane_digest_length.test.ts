/**
 * DANE for SMTP (CONTRACT §22, RFC 7672 / RFC 6698) as DANE senders judge it, through the API,
 * against a DNSSEC-signed Knot DNS zone behind a validating Unbound (the AD bit) on loopback.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { dnsDaemonsMissing, startKnot, startUnbound, type KnotServer, type UnboundServer } from "./support/dns_servers.ts";
import { addAndGet, dnsWorld, opensslTlsa, type DnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`dane_digest_length.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN;

let knot: KnotServer;
let unbound: UnboundServer;
let intermediate: Issued;
let w: DnsWorld;
const closers: Array<() => Promise<unknown>> = [];
const smtp: Record<string, { port: number; issued: Issued }> = {};

async function smtpServer(name: string, dnsNames: string[]) {
  const issued = await createLeaf({ issuer: intermediate, dnsNames, freshKey: true });
  const server = new SMTPServer({ secure: false, key: issued.keyPem, cert: chainPem(issued, intermediate), authOptional: true, logger: false });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  smtp[name] = { port: (server.server.address() as { port: number }).port, issued };
}

beforeAll(async () => {
  if (missing) return;
  intermediate = (await testPki()).rsaIntermediate;
  await smtpServer("alias", [`mxalias.dane.${D}`, `mxreal.dane.${D}`]);
  await smtpServer("short", [`mxshort.dane.${D}`]);
  const aliasSpki = opensslTlsa(smtp.alias!.issued.certPem, 1, "sha256");
  const realSpki = opensslTlsa(smtp.short!.issued.certPem, 1, "sha256");
  const zone = `
mxalias.dane.certkeeper CNAME mxreal.dane.certkeeper
_${smtp.alias!.port}._tcp.mxreal.dane.certkeeper TLSA 3 1 1 ${aliasSpki}
_${smtp.short!.port}._tcp.mxshort.dane.certkeeper TLSA 3 1 1 ${realSpki.slice(0, 62)}
`;
  knot = await startKnot(zone, { signed: true });
  unbound = await startUnbound({ zone: "test.", port: knot.port }, knot.dnskeys());
  w = await dnsWorld(unbound.port);
}, 60_000);

afterAll(async () => {
  await Promise.all([w?.close(), ...closers.map((close) => close())]);
  await Promise.all([unbound?.close(), knot?.close()]);
});

withDaemons("DANE for SMTP against a validating resolver", () => {
  // RFC 7672 §2.2.3 (paraphrased): when the MX host name is an alias whose CNAME expansion is DNSSEC
  // validated, TLSA records are first sought at the expanded name, then at the original name.
  // docs/dns.md: "the records at the expanded name come first, then those at the name itself".
  test("an MX host that is a validated alias: the TLSA records at the expanded name are the ones judged", async () => {
    const cert = await addAndGet(w.h, { domain: `mxalias.dane.${D}`, port: smtp.alias!.port, protocol: "smtp" });
    expect([cert.warnings, cert.endpoints.map((e: any) => e.dane)]).toEqual([[], [{ status: "match", validated: true }]]);
  });

  // RFC 6698 §2.1.3: matching type 1 is a SHA-256 hash (32 octets). RFC 7672 §2.2 (paraphrased): TLSA
  // records a client cannot use are "unusable", and when no record is usable the client uses TLS
  // without DANE authentication. DANE senders built on OpenSSL's DANE support (Postfix, Exim) refuse a
  // record whose data length does not fit its matching type (SSL_dane_tlsa_add: bad digest length),
  // so such a record is unusable and mail is delivered as without DANE.
  // docs/dns.md: "`none` | no usable TLSA record (none published, or only unusable ones): senders use
  // TLS without DANE"; "`mismatch` | usable records exist and none matches: warnings gains dane_mismatch".
  // A "3 1 1" of 31 octets can match no certificate: certkeeper calls it a mismatch and warns.
  test("a 3 1 1 record whose digest is one octet short is unusable: none, no dane_mismatch", async () => {
    const cert = await addAndGet(w.h, { domain: `mxshort.dane.${D}`, port: smtp.short!.port, protocol: "smtp" });
    expect([cert.warnings, cert.endpoints.map((e: any) => e.dane)]).toEqual([[], [{ status: "none", validated: true }]]);
  });
});
