/**
 * When DNS fails (CONTRACT §22): a resolver gone, failing or never asked; a policy server that
 * answers no policy; and the request errors of mailDomain. DNS failures never change a status, never
 * raise an event, and keep the last conclusive answer rather than flapping a warning.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { expectData, expectError, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { answerTo, dnsDaemonsMissing, startFixtureDns, startKnot, type FixtureDnsServer, type KnotServer } from "./support/dns_servers.ts";
import { addAndGet, checkNow, dnsWorld, eventsOf, opensslTlsa, startPolicyServer, type DnsWorld, type PolicyServer } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`dns_checks.error.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN;
let intermediate: Issued;
let leaf: Issued;
let server: TlsTestServer;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  intermediate = (await testPki()).rsaIntermediate;
  leaf = await createLeaf({ issuer: intermediate, dnsNames: [`*.${D}`] });
  server = await startTlsServer({ cert: chainPem(leaf, intermediate), key: leaf.keyPem });
});

afterAll(async () => {
  await server?.close();
  for (const close of closers.reverse()) await close();
});

async function world(port: number | null, options?: Parameters<typeof dnsWorld>[1]): Promise<DnsWorld> {
  const w = await dnsWorld(port, options);
  closers.push(() => w.close());
  return w;
}

withDaemons("a resolver that fails after a verdict", () => {
  let knot: KnotServer;
  let w: DnsWorld;

  beforeAll(async () => {
    if (missing) return;
    // The wildcard leaf is judged at its base, certkeeper.test.
    knot = await startKnot(`certkeeper CAA 0 issue "letsencrypt.org"\n`);
    // Stopped by the test itself; this covers a test that fails before it does.
    closers.push(() => knot.close());
    w = await world(knot.port);
  });

  test("the warning stays, nothing is announced, the status does not move, even across a renewal", async () => {
    const cert = await addAndGet(w.h, { domain: `gone.${D}`, port: server.port });
    expect([cert.status, cert.warnings]).toEqual(["valid", ["caa_forbids_issuer"]]);
    await knot.close();
    const checked = await checkNow(w.h, cert.id);
    expect([checked.status, checked.statusReason, checked.warnings]).toEqual(["valid", null, ["caa_forbids_issuer"]]);
    const next = await createLeaf({ issuer: intermediate, dnsNames: [`*.${D}`], daysLeft: 120 });
    server.setCertificate(chainPem(next, intermediate), next.keyPem);
    const renewed = await checkNow(w.h, cert.id);
    expect([renewed.status, renewed.warnings]).toEqual(["valid", ["caa_forbids_issuer"]]);
    expect((await eventsOf(w.h, cert.id)).map((e) => e.type)).toEqual(["certificate.renewal_blocked", "certificate.renewed"]);
    server.setCertificate(chainPem(leaf, intermediate), leaf.keyPem);
    const text = w.h.core.services.metrics.dnsLookups.render();
    expect(Number(/certkeeper_dns_lookups_total\{type="CAA",result="error"\} (\d+)/.exec(text)![1]) + Number(/certkeeper_dns_lookups_total\{type="CAA",result="timeout"\} (\d+)/.exec(text)![1])).toBeGreaterThan(0);
  });
});

describe("a resolver that fails while the served leaf changes", () => {
  let failing = false;
  let fixture: FixtureDnsServer;

  beforeAll(async () => {
    // shopN.certkeeper.test and certkeeper.test itself name only letsencrypt.org.
    fixture = await startFixtureDns((query) => {
      if (failing) return { message: answerTo(query, [], { rcode: "SERVFAIL" }) };
      const question = query.questions![0]!;
      const name = question.name.toLowerCase();
      const shop = question.type === "CAA" && (/^shop\d\./.test(name) || name === D);
      return { message: answerTo(query, shop ? [{ type: "CAA", name: question.name, ttl: 60, data: { flags: 0, tag: "issue", value: "letsencrypt.org" } }] : []) };
    });
    closers.push(() => fixture.close());
  });

  /** A certificate for `name` from the RSA CA (forbidden by the records), judged while DNS answers; then DNS fails. */
  async function forbiddenThenOutage(name: string, config?: Parameters<typeof dnsWorld>[1]) {
    failing = false;
    const first = await createLeaf({ issuer: intermediate, dnsNames: [name] });
    const served = await startTlsServer({ cert: chainPem(first, intermediate), key: first.keyPem });
    closers.push(() => served.close());
    const w = await world(fixture.port, config);
    const cert = await addAndGet(w.h, { domain: name, port: served.port });
    expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
    failing = true;
    return { w, cert, served };
  }

  test("a leaf renewed by a CA with no known CAA domain is not judged: the old CA's verdict does not stay", async () => {
    const { w, cert, served } = await forbiddenThenOutage(`shop1.${D}`);
    // The EC CA has no CAA domain, configured or built in; the new leaf is a wildcard, so its climb starts elsewhere.
    const { ecIntermediate } = await testPki();
    const next = await createLeaf({ issuer: ecIntermediate, dnsNames: [`*.${D}`], daysLeft: 120 });
    served.setCertificate(chainPem(next, ecIntermediate), next.keyPem);
    const checked = await checkNow(w.h, cert.id);
    expect(checked.issuer).not.toContain("RSA");
    expect([checked.status, checked.warnings]).toEqual(["valid", []]);
    expect((await eventsOf(w.h, cert.id)).map((e) => e.type)).toEqual(["certificate.renewal_blocked", "certificate.renewed"]);
  });

  test("a leaf renewed by another judged CA, whose records were never read: no verdict until DNS answers again", async () => {
    const config = { config: { caaIdentities: [{ name: "certkeeper Test RSA CA", domain: `ca.${D}` }, { name: "certkeeper Test EC CA", domain: `ec.${D}` }] } };
    const { w, cert, served } = await forbiddenThenOutage(`shop2.${D}`, config);
    const { ecIntermediate } = await testPki();
    const next = await createLeaf({ issuer: ecIntermediate, dnsNames: [`*.${D}`], daysLeft: 120 });
    served.setCertificate(chainPem(next, ecIntermediate), next.keyPem);
    const outage = await checkNow(w.h, cert.id);
    expect(outage.warnings).toEqual([]);
    failing = false;
    // DNS back: the wildcard is judged at certkeeper.test, whose records name letsencrypt.org only.
    const answered = await checkNow(w.h, cert.id);
    expect(answered.warnings).toEqual(["caa_forbids_issuer"]);
  });
});

withDaemons("a resolver that never gave an answer", () => {
  let failing: FixtureDnsServer;

  beforeAll(async () => {
    if (missing) return;
    failing = await startFixtureDns((query) => ({ message: answerTo(query, [], { rcode: "SERVFAIL" }) }));
    closers.push(() => failing.close());
  });

  test("SERVFAIL everywhere: no verdict, no warning, no DANE verdict, the status what the chain says", async () => {
    const w = await world(failing.port);
    const cert = await addAndGet(w.h, { domain: `servfail.${D}`, port: server.port });
    expect([cert.status, cert.warnings]).toEqual(["valid", []]);
    expect((await eventsOf(w.h, cert.id)).map((e) => e.type)).toEqual([]);
    const smtpLeaf = await createLeaf({ issuer: intermediate, dnsNames: [`mx.servfail.${D}`] });
    const smtp = new SMTPServer({ secure: false, key: smtpLeaf.keyPem, cert: chainPem(smtpLeaf, intermediate), authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    const port = (smtp.server.address() as { port: number }).port;
    const mail = await addAndGet(w.h, { domain: `mx.servfail.${D}`, port, protocol: "smtp" });
    expect([mail.status, mail.warnings, mail.endpoints[0].dane]).toEqual(["valid", [], null]);
  });

  test("a DANE verdict stands through a failing TLSA lookup", async () => {
    let fail = false;
    const issued = await createLeaf({ issuer: intermediate, dnsNames: [`mx.flaky.${D}`], freshKey: true });
    const smtp = new SMTPServer({ secure: false, key: issued.keyPem, cert: chainPem(issued, intermediate), authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    const port = (smtp.server.address() as { port: number }).port;
    const tlsa = Buffer.from("00".repeat(32), "hex");
    const flaky = await startFixtureDns((query) => {
      if (fail) return { message: answerTo(query, [], { rcode: "SERVFAIL" }) };
      const question = query.questions![0]!;
      const answers = question.type === "TLSA" ? [{ type: "TLSA" as const, name: question.name, ttl: 60, data: { usage: 3, selector: 1, matchingType: 1, certificate: tlsa } }] : [];
      return { message: answerTo(query, answers) };
    });
    closers.push(() => flaky.close());
    expect(opensslTlsa(issued.certPem, 1, "sha256")).not.toBe(tlsa.toString("hex"));
    const w = await world(flaky.port);
    const cert = await addAndGet(w.h, { domain: `mx.flaky.${D}`, port, protocol: "smtp" });
    expect([cert.warnings, cert.endpoints[0].dane]).toEqual([["dane_mismatch"], { status: "mismatch", validated: false }]);
    fail = true;
    const checked = await checkNow(w.h, cert.id);
    expect([checked.status, checked.warnings, checked.endpoints[0].dane]).toEqual(["valid", ["dane_mismatch"], { status: "mismatch", validated: false }]);
  });

  test("CERTKEEPER_DNS_SERVERS=off: nothing is looked up, DANE is null", async () => {
    const w = await world(null);
    const cert = await addAndGet(w.h, { domain: `off.${D}`, port: server.port });
    expect(cert.warnings).toEqual([]);
    expect(w.h.core.services.metrics.dnsLookups.render()).not.toMatch(/certkeeper_dns_lookups_total\{[^}]*\} [1-9]/);
  });
});

withDaemons("MTA-STS policies that cannot be had", () => {
  let policy: PolicyServer | null = null;
  let unavailable = "";
  let knot: KnotServer;
  let w: DnsWorld;
  let port: number;

  beforeAll(async () => {
    if (missing) return;
    const web = await createLeaf({ issuer: intermediate, dnsNames: [`mta-sts.nopolicy.${D}`] });
    const mxLeaf = await createLeaf({ issuer: intermediate, dnsNames: [`*.nopolicy.${D}`] });
    const started = await startPolicyServer(chainPem(web, intermediate), web.keyPem);
    if ("unavailable" in started) {
      unavailable = started.unavailable;
      console.warn(`dns_checks.error.test.ts: the MTA-STS tests are skipped: ${unavailable}`);
      return;
    }
    policy = started;
    closers.push(() => started.close());
    knot = await startKnot(`_mta-sts.nopolicy.certkeeper TXT "v=STSv1; id=1;"\n`);
    closers.push(() => knot.close());
    w = await world(knot.port, { resolve: [{ pattern: `mta-sts.nopolicy.${D}`, address: policy.address }] });
    const smtp = new SMTPServer({ secure: false, key: mxLeaf.keyPem, cert: chainPem(mxLeaf, intermediate), authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    port = (smtp.server.address() as { port: number }).port;
  });

  test("a 404, a server error or a text that is no policy: no policy, no warning", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    for (const [i, answer] of [
      { status: 404, body: "not found" },
      { status: 500, body: "oops" },
      { status: 200, body: "<html>welcome</html>" },
    ].entries()) {
      policy.respond(answer);
      const cert = await addAndGet(w.h, { domain: `mx${i}.nopolicy.${D}`, port, protocol: "smtp" });
      expect([cert.status, cert.warnings]).toEqual(["valid", []]);
    }
  });

  test("a cached policy stays in force while its max_age lasts when the next one cannot be fetched", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    policy.respond({ status: 200, body: "version: STSv1\nmode: enforce\nmx: elsewhere.example\nmax_age: 86400\n" });
    const cert = await addAndGet(w.h, { domain: `mx9.nopolicy.${D}`, port, protocol: "smtp" });
    expect(cert.warnings).toEqual(["mta_sts_mismatch"]);
    await knot.setZone(`_mta-sts.nopolicy.certkeeper TXT "v=STSv1; id=2;"\n`);
    policy.respond({ status: 503, body: "down" });
    expect((await checkNow(w.h, cert.id)).warnings).toEqual(["mta_sts_mismatch"]);
  });

  test("a held policy lapses once its max_age has passed: with the next one not to be had, the warning goes", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    const clock = new FakeClock(Date.now());
    const clocked = await world(knot.port, { resolve: [{ pattern: `mta-sts.nopolicy.${D}`, address: policy.address }], clock });
    await knot.setZone(`_mta-sts.nopolicy.certkeeper TXT "v=STSv1; id=7;"\n`);
    policy.respond({ status: 200, body: "version: STSv1\nmode: enforce\nmx: elsewhere.example\nmax_age: 3600\n" });
    const cert = await addAndGet(clocked.h, { domain: `mx10.nopolicy.${D}`, port, protocol: "smtp" });
    expect(cert.warnings).toEqual(["mta_sts_mismatch"]);
    await knot.setZone(`_mta-sts.nopolicy.certkeeper TXT "v=STSv1; id=8;"\n`);
    policy.respond({ status: 503, body: "down" });
    clock.advance(3599_000);
    expect((await checkNow(clocked.h, cert.id)).warnings).toEqual(["mta_sts_mismatch"]);
    clock.advance(2_000);
    expect((await checkNow(clocked.h, cert.id)).warnings).toEqual([]);
  });
});

describe("mailDomain in requests (error)", () => {
  let w: DnsWorld;
  beforeAll(async () => {
    w = await world(null);
  });

  test("add: a mailDomain for a protocol other than smtp, or one that is not a domain, is invalid_request", async () => {
    expectError(await w.h.request("POST", "/v1/certificates", { body: { domain: `a.${D}`, port: server.port, mailDomain: D } }), 400, "invalid_request");
    for (const mailDomain of ["not a domain", "https://example.com/", "*.example.com", 42, "", "x".repeat(254)]) {
      const response = await w.h.request("POST", "/v1/certificates", { body: { domain: `a.${D}`, protocol: "smtp", mailDomain } });
      expectError(response, 400, "invalid_request");
      expect(response.body.error.message).toContain("mailDomain");
    }
  });

  test("patch: a mailDomain for a tls certificate is invalid_request; for a missing one, certificate_not_found", async () => {
    const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain: `p.${D}`, port: server.port } }), 201);
    const refused = await w.h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mailDomain: D } });
    expectError(refused, 400, "invalid_request");
    expect(refused.body.error.message).toBe(`Field "mailDomain" applies to smtp certificates only (MTA-STS); this one speaks "tls": leave it out or null.`);
    expectData(await w.h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mailDomain: null } }), 200);
    expectError(await w.h.request("PATCH", "/v1/certificates/cert_0000000000000000xxxx", { body: { mailDomain: D } }), 404, "certificate_not_found");
  });

  test("import: an smtp item keeps its mailDomain; a tls item with one fails alone, as POST would refuse it", async () => {
    const smtp = new SMTPServer({ secure: false, key: leaf.keyPem, cert: chainPem(leaf, intermediate), authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    const port = (smtp.server.address() as { port: number }).port;
    const created = expectData(
      await w.h.request("POST", "/v1/imports", {
        body: {
          certificates: [
            { domain: `mx.imported.${D}`, port, protocol: "smtp", mailDomain: `Mail.Example.Test` },
            { domain: `www.imported.${D}`, port: server.port, mailDomain: `imported.${D}` },
          ],
        },
      }),
      202,
    );
    await w.h.core.services.imports!.loop.runDue();
    const done = expectData(await w.h.request("GET", `/v1/imports/${created.id}`), 200);
    expect(done.results.map((r: any) => [r.status, r.error?.code ?? null])).toEqual([
      ["created", null],
      ["failed", "invalid_request"],
    ]);
    const imported = expectData(await w.h.request("GET", `/v1/certificates/${done.results[0].certificateId}`), 200);
    expect([imported.protocol, imported.mailDomain]).toEqual(["smtp", "mail.example.test"]);
  });
});
