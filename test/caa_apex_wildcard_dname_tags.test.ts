/**
 * CAA verdicts (CONTRACT §22, RFC 8659) judged against what a CA does, through the API, against
 * a DNSSEC-signed Knot DNS zone behind a validating Unbound on loopback (as dns_checks.happy does).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { TEST_DOMAIN } from "./support/harness.ts";
import { dnsDaemonsMissing } from "./support/dns_servers.ts";
import { addAndGet, eventsOf, signedDnsWorld, type SignedDnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`caa_apex_wildcard_dname_tags.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN; // certkeeper.test, in the zone test.
// The test PKI's RSA intermediate maps to the CAA domain ca.certkeeper.test (dnsWorld).
const ZONE = `
pair.certkeeper CAA 0 issue "letsencrypt.org"
pair.certkeeper CAA 0 issuewild "ca.${D}"
dn.certkeeper CAA 0 issue "ca.${D}"
dn.certkeeper DNAME target.provider
host.target.provider CAA 0 issue "letsencrypt.org"
critmail.certkeeper CAA 0 issue "ca.${D}"
critmail.certkeeper CAA 128 issuemail "ca.${D}"
${Array.from({ length: 40 }, (_, i) => `big.certkeeper CAA 0 iodef "mailto:security-team-number-${i}-of-a-large-organization@${D}"`).join("\n")}
big.certkeeper CAA 0 issue "letsencrypt.org"
`;

let w: SignedDnsWorld;
const serve = (dnsNames: string[]) => w.serve(dnsNames);

beforeAll(async () => {
  if (!missing) w = await signedDnsWorld(ZONE);
}, 60_000);

afterAll(() => w?.close());

withDaemons("CAA for the usual apex + wildcard certificate, checked under a name the wildcard covers", () => {
  // RFC 8659 §4.2 (paraphrased): issue properties in the Relevant RRset of an FQDN authorize only the
  // CAs they name; §4.3: "Each issuewild Property MUST be ignored when processing a request for an
  // FQDN that is not a Wildcard Domain Name."
  // CONTRACT §22: "... the next renewal from that CA will fail: warnings gains caa_forbids_issuer".
  // The renewal of a certificate naming pair.certkeeper.test and *.pair.certkeeper.test asks the CA for
  // both names. The set at pair.certkeeper.test lets ca.certkeeper.test issue the wildcard (issuewild)
  // but not pair.certkeeper.test itself (issue names only letsencrypt.org): the renewal fails.
  test("the apex the certificate names is refused by `issue`: caa_forbids_issuer whether the check is under the apex or under www", async () => {
    const server = await serve([`pair.${D}`, `*.pair.${D}`]);
    // Checked under the apex: certkeeper judges both names and warns (this holds).
    const apex = await addAndGet(w.h, { domain: `pair.${D}`, port: server.port });
    expect(apex.warnings).toEqual(["caa_forbids_issuer"]);
    // The same certificate, the same record set, checked under www (covered by the wildcard): the
    // renewal is just as blocked, yet certkeeper judges only `*.pair.certkeeper.test` by issuewild.
    const www = await addAndGet(w.h, { domain: `www.pair.${D}`, port: server.port });
    expect(www.warnings).toEqual(["caa_forbids_issuer"]);
    const events = await eventsOf(w.h, www.id);
    expect(events.map((event) => event.type)).toEqual(["certificate.renewal_blocked"]);
    expect(events[0].data.caa).toMatchObject({ name: `pair.${D}`, setAt: `pair.${D}`, property: "issue", reason: "not_listed" });
  });
});

withDaemons("CAA through a DNAME (RFC 8659 §3: CNAMEs followed as the resolver follows them; a DNAME answer is a synthesized CNAME)", () => {
  // RFC 8659 §3 (paraphrased): CAA(X) is the CAA RRset DNS resolution of X returns, aliases followed;
  // RFC 6672: a DNAME answer carries a CNAME synthesized for the name asked. host.dn → host.target.provider, whose set names only letsencrypt.org.
  test("a name under a DNAME takes the set at its substituted target", async () => {
    const server = await serve([`host.dn.${D}`]);
    const cert = await addAndGet(w.h, { domain: `host.dn.${D}`, port: server.port });
    expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
    const [event] = await eventsOf(w.h, cert.id);
    expect(event.data.caa).toMatchObject({ name: `host.dn.${D}`, setAt: "host.target.provider.test" });
  });

  // RFC 8659 §3 (RelevantCAASet): when CAA(X) is empty, the climb goes on at parent(X), the alias's own
  // parent: dn.certkeeper.test, whose set names ca.certkeeper.test.
  test("a name under a DNAME whose target has no records climbs from its own parent, the DNAME owner", async () => {
    const server = await serve([`nothing.dn.${D}`]);
    const cert = await addAndGet(w.h, { domain: `nothing.dn.${D}`, port: server.port });
    expect(cert.warnings).toEqual([]);
    expect((await eventsOf(w.h, cert.id)).map((event) => event.type)).toEqual([]);
  });
});

withDaemons("a critical property of a registered tag the CA knows", () => {
  // RFC 8659 §4.1: "A CA MUST NOT issue certificates for any FQDN if the Relevant RRset for that FQDN
  // contains a CAA critical Property for an unknown or unsupported Property Tag." issuemail is a
  // registered CAA Property Tag (RFC 9495, IANA "Certification Authority Restriction Properties"),
  // and the CA software of Let's Encrypt (Boulder, va/caa.go filterCAA) recognizes it: "we do not bail
  // out if someone has a critical issuemail tag". A set that names the CA in `issue` and carries a
  // critical issuemail lets the renewal through: no caa_forbids_issuer (CONTRACT §22: the warning is
  // for "the next renewal from that CA will fail").
  test("`128 issuemail` beside an issue naming the CA does not forbid the renewal", async () => {
    const server = await serve([`critmail.${D}`]);
    const cert = await addAndGet(w.h, { domain: `critmail.${D}`, port: server.port });
    expect(cert.warnings).toEqual([]);
    expect((await eventsOf(w.h, cert.id)).map((event) => event.type)).toEqual([]);
  });
});

withDaemons("a CAA set too large for UDP, through the validating resolver", () => {
  // RFC 7766 §6.2.1.1 / RFC 1035 §4.2.1: a truncated (TC) answer is asked again over TCP; the whole
  // set is the relevant one (RFC 8659 §3), its issue naming only letsencrypt.org.
  test("41 records (~3.5 KB): read over TCP, judged whole: caa_forbids_issuer", async () => {
    const server = await serve([`big.${D}`]);
    const cert = await addAndGet(w.h, { domain: `big.${D}`, port: server.port });
    expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
    const [event] = await eventsOf(w.h, cert.id);
    expect(event.data.caa.records.length).toBe(41);
  });
});
