/**
 * MTA-STS (CONTRACT §22, RFC 8461) as senders read it, through the API, against a DNSSEC-signed
 * Knot DNS zone behind a validating Unbound and an HTTPS policy server on port 443 of a loopback address.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { dnsDaemonsMissing, startKnot, startUnbound, type KnotServer, type UnboundServer } from "./support/dns_servers.ts";
import { addAndGet, dnsWorld, startPolicyServer, type DnsWorld, type PolicyServer } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`mta_sts_record_set.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN;
const ZONE = `
_mta-sts.plain.certkeeper TXT "v=STSv1; id=20261130a;"
_mta-sts.stray.certkeeper TXT "v=STSv1; id=20261130a;"
_mta-sts.stray.certkeeper TXT "v=STSv1"
_mta-sts.badcert.certkeeper TXT "v=STSv1; id=20261130a;"
`;

let knot: KnotServer;
let unbound: UnboundServer;
let intermediate: Issued;
let policy: PolicyServer | null = null;
let wrongCertPolicy: PolicyServer | null = null;
let unavailable: string | null = null;
let w: DnsWorld;
let mx: { port: number; close(): Promise<void> } | undefined;

const enforceMissingHost = { status: 200, body: `version: STSv1\r\nmode: enforce\r\nmx: only-this.example.net\r\nmax_age: 86400\r\n` };

beforeAll(async () => {
  if (missing) return;
  intermediate = (await testPki()).rsaIntermediate;
  knot = await startKnot(ZONE, { signed: true });
  unbound = await startUnbound({ zone: "test.", port: knot.port }, knot.dnskeys());
  const web = await createLeaf({ issuer: intermediate, dnsNames: [`mta-sts.plain.${D}`, `mta-sts.stray.${D}`] });
  // A certificate the test PKI issued, trusted, but for another host than mta-sts.badcert.certkeeper.test.
  const otherWeb = await createLeaf({ issuer: intermediate, dnsNames: [`www.badcert.${D}`] });
  const started = await startPolicyServer(chainPem(web, intermediate), web.keyPem);
  const startedOther = await startPolicyServer(chainPem(otherWeb, intermediate), otherWeb.keyPem);
  if ("unavailable" in started || "unavailable" in startedOther) {
    unavailable = "unavailable" in started ? started.unavailable : (startedOther as { unavailable: string }).unavailable;
    console.warn(`mta_sts_record_set.test.ts: skipped: ${unavailable}`);
    return;
  }
  policy = started;
  wrongCertPolicy = startedOther;
  policy.respond(enforceMissingHost);
  wrongCertPolicy.respond(enforceMissingHost);
  w = await dnsWorld(unbound.port, {
    resolve: [
      { pattern: `mta-sts.plain.${D}`, address: policy.address },
      { pattern: `mta-sts.stray.${D}`, address: policy.address },
      { pattern: `mta-sts.badcert.${D}`, address: wrongCertPolicy.address },
    ],
  });
  const issued = await createLeaf({ issuer: intermediate, dnsNames: [`mx1.plain.${D}`, `mx1.stray.${D}`, `mx1.badcert.${D}`] });
  const smtp = new SMTPServer({ secure: false, key: issued.keyPem, cert: chainPem(issued, intermediate), authOptional: true, logger: false });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  mx = { port: (smtp.server.address() as { port: number }).port, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
}, 60_000);

afterAll(async () => {
  await Promise.all([w?.close(), policy?.close(), wrongCertPolicy?.close(), mx?.close()]);
  await Promise.all([unbound?.close(), knot?.close()]);
});

withDaemons("the _mta-sts TXT record set as RFC 8461 §3.1 has senders read it", () => {
  // One record, an enforce policy whose mx lines miss the host.
  test("one v=STSv1 record and an enforce policy that misses the host: mta_sts_mismatch", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    const cert = await addAndGet(w.h, { domain: `mx1.plain.${D}`, port: mx!.port, protocol: "smtp" });
    expect([cert.mailDomain, cert.warnings]).toEqual([`plain.${D}`, ["mta_sts_mismatch"]]);
  });

  // RFC 8461 §3.1: "Records that do not begin with "v=STSv1;" are discarded. If the number of
  // resulting records is not one, or if the resulting record is syntactically invalid, senders MUST
  // assume the recipient domain does not have an available MTA-STS Policy."
  // A bare "v=STSv1" (no ";") does not begin with "v=STSv1;": it is discarded, one record remains,
  // and senders fetch and apply the enforce policy, which refuses mx1.stray. certkeeper counts the
  // bare record, sees two, assumes no policy and stays silent.
  test("a stray bare `v=STSv1` record beside the real one is discarded: the enforce policy still applies", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    const before = policy.requests().length;
    const cert = await addAndGet(w.h, { domain: `mx1.stray.${D}`, port: mx!.port, protocol: "smtp" });
    expect(policy.requests().slice(before)).toEqual([`GET /.well-known/mta-sts.txt mta-sts.stray.${D}`]);
    expect([cert.mailDomain, cert.warnings]).toEqual([`stray.${D}`, ["mta_sts_mismatch"]]);
  });
});

withDaemons("the policy host's HTTPS certificate (RFC 8461 §3.3)", () => {
  // RFC 8461 §3.3: the HTTPS endpoint "MUST present an X.509 certificate that is valid for the
  // "mta-sts" DNS-ID ... chain to a root CA that is trusted by the Sending MTA, and be non-expired."
  // With no valid policy, senders deliver as without MTA-STS: an enforce policy there refuses nothing.
  test("a policy served under a certificate that does not name mta-sts.<domain> is no policy: no mta_sts_mismatch", async () => {
    if (!wrongCertPolicy) return console.warn(`skipped: ${unavailable}`);
    const cert = await addAndGet(w.h, { domain: `mx1.badcert.${D}`, port: mx!.port, protocol: "smtp" });
    expect([cert.mailDomain, cert.warnings]).toEqual([`badcert.${D}`, []]);
  });
});
