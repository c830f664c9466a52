/**
 * How CAA records are read off the wire (core/dns/caa.ts's caaRecord): the flags
 * octet's critical bit and the tag's case, through the API, against a DNSSEC-signed Knot DNS zone
 * behind a validating Unbound on loopback (as caa_apex_wildcard_dname_tags does).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { TEST_DOMAIN } from "./support/harness.ts";
import { dnsDaemonsMissing } from "./support/dns_servers.ts";
import { addAndGet, eventsOf, signedDnsWorld, type SignedDnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`caa_critical_and_tag_case.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN; // certkeeper.test; the test PKI's RSA intermediate maps to ca.certkeeper.test (dnsWorld).
const ZONE = `
crit.certkeeper CAA 0 issue "ca.${D}"
crit.certkeeper CAA 128 tbs "unknown"
upper.certkeeper CAA 0 ISSUE "digicert.com"
`;

let w: SignedDnsWorld;
const serve = (dnsNames: string[]) => w.serve(dnsNames);

beforeAll(async () => {
  if (!missing) w = await signedDnsWorld(ZONE);
}, 60_000);

afterAll(() => w?.close());

withDaemons("CAA records as the resolver returns them", () => {
  // RFC 8659 §4.1: "A CA MUST NOT issue certificates for any FQDN if the Relevant RRset for that FQDN
  // contains a CAA critical Property for an unknown or unsupported Property Tag." The critical bit is
  // bit 0 of the flags octet (128).
  test("`128 tbs` (critical, unknown tag) beside an issue naming the CA forbids the renewal: caa_forbids_issuer, reason critical", async () => {
    const server = await serve([`crit.${D}`]);
    const cert = await addAndGet(w.h, { domain: `crit.${D}`, port: server.port });
    expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
    const events = await eventsOf(w.h, cert.id);
    expect(events.map((event) => event.type)).toEqual(["certificate.renewal_blocked"]);
    expect(events[0].data.caa).toMatchObject({ setAt: `crit.${D}`, reason: "critical" });
  });

  // RFC 8659 §4.1: "Matching of tag values is case insensitive." An `ISSUE` property naming only
  // digicert.com is an issue property: it does not let ca.certkeeper.test issue.
  test("an upper-case ISSUE tag is an issue property: naming another CA, it forbids the renewal", async () => {
    const server = await serve([`upper.${D}`]);
    const cert = await addAndGet(w.h, { domain: `upper.${D}`, port: server.port });
    expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
    const [event] = await eventsOf(w.h, cert.id);
    expect(event.data.caa).toMatchObject({ setAt: `upper.${D}`, property: "issue", reason: "not_listed" });
  });
});
