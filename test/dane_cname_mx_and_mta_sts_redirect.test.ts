/**
 * DANE and MTA-STS through the API (core/dns/dns_inspector.ts, mta_sts.ts), against a
 * DNSSEC-signed Knot DNS zone behind a validating Unbound on loopback (as dns_checks.happy does):
 * DANE-TA's reference names for an MX host that is an alias (RFC 7672 §3.2.3), and an MTA-STS
 * policy answered with a redirect (RFC 8461 §3.3; CONTRACT §22: "no redirects").
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { dnsDaemonsMissing, startKnot, startUnbound, type KnotServer, type UnboundServer } from "./support/dns_servers.ts";
import { addAndGet, dnsWorld, opensslTlsa, startPolicyServer, type DnsWorld, type PolicyServer } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`dane_cname_mx_and_mta_sts_redirect.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN; // certkeeper.test, in the zone test.
const mail = `redirect.${D}`;

let knot: KnotServer;
let unbound: UnboundServer;
let w: DnsWorld;
let intermediate: Issued;
const closers: Array<() => Promise<unknown>> = [];

async function smtpServer(issued: Issued): Promise<number> {
  const smtp = new SMTPServer({ secure: false, key: issued.keyPem, cert: chainPem(issued, intermediate), authOptional: true, logger: false });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
  return (smtp.server.address() as { port: number }).port;
}

let aliasLeaf: Issued;
let aliasPort: number;
let stsLeaf: Issued;
let stsPort: number;

beforeAll(async () => {
  if (missing) return;
  intermediate = (await testPki()).rsaIntermediate;
  // The MX host mx.alias.certkeeper.test is an alias of the provider's mxhost.provider.test, whose
  // certificate names only itself; the TLSA records are published at the alias's target.
  aliasLeaf = await createLeaf({ issuer: intermediate, dnsNames: [`mxhost.provider.test`], freshKey: true });
  aliasPort = await smtpServer(aliasLeaf);
  stsLeaf = await createLeaf({ issuer: intermediate, dnsNames: [`mx1.${mail}`] });
  stsPort = await smtpServer(stsLeaf);
  const zone = `
mx.alias.certkeeper CNAME mxhost.provider
_${aliasPort}._tcp.mxhost.provider TLSA 2 0 1 ${opensslTlsa(intermediate.certPem, 0, "sha256")}
_mta-sts.redirect.certkeeper TXT "v=STSv1; id=20260101r;"
`;
  knot = await startKnot(zone, { signed: true });
  unbound = await startUnbound({ zone: "test.", port: knot.port }, knot.dnskeys());
  w = await dnsWorld(unbound.port, { resolve: [{ pattern: "mxhost.provider.test", address: "127.0.0.1" }] });
}, 60_000);

afterAll(async () => {
  await Promise.all([w?.close(), ...closers.map((close) => close())]);
  await Promise.all([unbound?.close(), knot?.close()]);
});

withDaemons("DANE-TA for an MX host that is an alias (RFC 7672 §3.2.3)", () => {
  // RFC 7672 §3.2.3 (paraphrased): with DANE-TA, the reference identifiers are the MX host name and,
  // when that name is a DNSSEC-validated CNAME, the TLSA base domain it expands to; a certificate naming
  // the TLSA base domain matches.
  test("a leaf naming the alias's target (the TLSA base domain) matches the TLSA there: no dane_mismatch", async () => {
    const cert = await addAndGet(w.h, { domain: `mx.alias.${D}`, port: aliasPort, protocol: "smtp" });
    expect(cert.endpoints.map((endpoint: any) => endpoint.dane)).toEqual([{ status: "match", validated: true }]);
    expect(cert.warnings).not.toContain("dane_mismatch");
  });
});

withDaemons("an MTA-STS policy answered with a redirect", () => {
  let policy: PolicyServer | null = null;
  let unavailable: string | null = null;
  let sts: DnsWorld;

  beforeAll(async () => {
    if (missing) return;
    const web = await createLeaf({ issuer: intermediate, dnsNames: [`mta-sts.${mail}`] });
    const started = await startPolicyServer(chainPem(web, intermediate), web.keyPem);
    if ("unavailable" in started) {
      unavailable = started.unavailable;
      console.warn(`dane_cname_mx_and_mta_sts_redirect.test.ts: the MTA-STS test is skipped: ${unavailable}`);
      return;
    }
    policy = started;
    sts = await dnsWorld(unbound.port, { resolve: [{ pattern: `mta-sts.${mail}`, address: policy.address }] });
  });

  afterAll(async () => {
    await Promise.all([sts?.close(), policy?.close()]);
  });

  // RFC 8461 §3.3: "HTTP 3xx redirects MUST NOT be followed, and HTTP caches ... MUST NOT be used";
  // CONTRACT §22: "no redirects". An answer that is not a 200 holds no policy, whatever its body: an
  // enforce policy missing the host carried in a 301's body raises no mta_sts_mismatch.
  test("a 301 whose body reads as an enforce policy is no policy: no mta_sts_mismatch", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    policy.respond({ status: 301, body: "version: STSv1\r\nmode: enforce\r\nmx: elsewhere.example\r\nmax_age: 86400\r\n", headers: { location: "https://elsewhere.example/" } });
    const cert = await addAndGet(sts.h, { domain: `mx1.${mail}`, port: stsPort, protocol: "smtp" });
    expect(policy.requests()).toContain(`GET /.well-known/mta-sts.txt mta-sts.${mail}`);
    expect(cert.warnings).toEqual([]);
  });
});
