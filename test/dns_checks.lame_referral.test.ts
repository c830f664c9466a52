/**
 * A resolver that is no resolver: CERTKEEPER_DNS_SERVERS naming a server that does not recurse for the
 * name (a lame or misconfigured one, or an authoritative server of another zone) answers with a
 * referral: NOERROR, no answer, NS records in the authority section, neither RA nor AA set. That is no
 * answer to the question (RFC 2308 §2.2: NODATA carries the SOA, not a referral), so it is a DNS
 * failure, which never changes a status or a warning (CONTRACT §22): the CAA warning found before stays.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import * as dnsPacket from "dns-packet";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startFixtureDns, type FixtureDnsServer } from "./support/dns_servers.ts";
import { addAndGet, checkNow, dnsWorld, type DnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const D = TEST_DOMAIN;
let server: TlsTestServer;
let fixture: FixtureDnsServer;
let w: DnsWorld;
let lame = false;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`shop.${D}`] });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  fixture = await startFixtureDns((query) => {
    const question = query.questions![0]!;
    if (lame) {
      // A referral to the root's servers: no RA, no AA, no answer, NS in authority.
      return {
        message: dnsPacket.encode({
          type: "response",
          id: query.id,
          flags: dnsPacket.RECURSION_DESIRED,
          questions: [question],
          answers: [],
          authorities: [{ type: "NS", name: ".", ttl: 518400, data: "a.root-servers.net" }],
        }),
      };
    }
    const answers: dnsPacket.Answer[] =
      question.type === "CAA" && question.name.toLowerCase() === `shop.${D}` ? [{ type: "CAA", name: question.name, ttl: 60, data: { flags: 0, tag: "issue", value: "letsencrypt.org" } }] : [];
    return {
      message: dnsPacket.encode({
        type: "response",
        id: query.id,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
        questions: [question],
        answers,
      }),
    };
  });
  w = await dnsWorld(fixture.port);
});

afterAll(async () => {
  await w?.close();
  await fixture?.close();
  await server?.close();
});

test("a referral is no answer: the CAA warning found before stays", async () => {
  const cert = await addAndGet(w.h, { domain: `shop.${D}`, port: server.port });
  expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
  lame = true;
  const checked = await checkNow(w.h, cert.id);
  expect(checked.warnings).toEqual(["caa_forbids_issuer"]);
});
