/**
 * What DNS says about a certificate (CONTRACT §22), through the API, against a DNSSEC-signed Knot DNS
 * zone behind a validating Unbound: CAA verdicts (tree climb, CNAMEs, issuewild) with their warning,
 * event, messages and PagerDuty key; DANE for SMTP STARTTLS servers with TLSA records computed by
 * openssl from the served certificates; MTA-STS policies fetched over HTTPS and cached by their id.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { SMTPServer } from "smtp-server";
import type { ChannelRecord, ChannelType, EventRecord } from "../core/base/records.ts";
import { renderNotification } from "../core/notify/payloads.ts";
import { pagerdutyRequests } from "../core/notify/pagerduty_payload.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { dnsDaemonsMissing, startKnot, startUnbound, type KnotServer, type UnboundServer } from "./support/dns_servers.ts";
import { addAndGet, checkNow, dnsWorld, eventsOf, opensslTlsa, startPolicyServer, type DnsWorld, type PolicyServer } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`dns_checks.happy.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN; // certkeeper.test, in the zone test.
const DAY = 86_400_000;
/** The zone's records that never change; each test adds its own through publish(). */
const BASE = `
allowed.certkeeper CAA 0 issue "ca.${D}"
malformed.certkeeper CAA 0 issue "ca.${D}; validationmethods"
blocked.certkeeper CAA 0 issue "letsencrypt.org"
blocked.certkeeper CAA 0 iodef "mailto:security@${D}"
parent.certkeeper CAA 0 issue "letsencrypt.org; validationmethods=dns-01"
aliased.certkeeper CNAME cdn.provider
cdn.provider CAA 0 issue "letsencrypt.org"
sub2.certkeeper CAA 0 issue "letsencrypt.org"
alias.sub2.certkeeper CNAME plain.provider
plain.provider TXT "no CAA here"
provider CAA 0 issue "ca.${D}"
wild.certkeeper CAA 0 issue "ca.${D}"
wild.certkeeper CAA 0 issuewild "letsencrypt.org"
`;

let knot: KnotServer;
let unbound: UnboundServer;
let w: DnsWorld;
let server: TlsTestServer;
let leaf: Issued;
let intermediate: Issued;
const extra: string[] = [];
const closers: Array<() => Promise<unknown>> = [];

async function publish(records: string) {
  extra.push(records);
  await knot.setZone(`${BASE}\n${extra.join("\n")}`);
  // Knot serves the new zone; the validating resolver too, once it answers with the record (it may
  // still hold a proof, made before, that the name has none).
  const [name, type] = records.split(/\s+/);
  const started = Date.now();
  while (!resolverHas(`${name}.test.`, type!, records.split(/\s+/).slice(2).join(" "))) {
    if (Date.now() - started > 10_000) throw new Error(`unbound never answered ${records}`);
    await Bun.sleep(50);
  }
}

/** Whether unbound answers `type` records of `name`, one of them `data` (compared without quotes or case). */
function resolverHas(name: string, type: string, data: string): boolean {
  const answer = spawnSync("dig", ["+short", "+time=1", "+tries=1", "-p", String(unbound.port), "@127.0.0.1", type, name], { encoding: "utf8" }).stdout;
  const plain = (text: string) => text.replace(/["\s]/g, "").toLowerCase();
  return answer.split("\n").some((line) => line.trim() !== "" && plain(line) === plain(data));
}

const NAMES = ["allowed", "malformed", "blocked", "x.parent", "aliased", "alias.sub2", "plain", "renewing", "changing"].map((name) => `${name}.${D}`);

beforeAll(async () => {
  if (missing) return;
  const pki = await testPki();
  intermediate = pki.rsaIntermediate;
  knot = await startKnot(BASE, { signed: true });
  unbound = await startUnbound({ zone: "test.", port: knot.port }, knot.dnskeys());
  w = await dnsWorld(unbound.port);
  leaf = await createLeaf({ issuer: intermediate, dnsNames: NAMES });
  server = await startTlsServer({ cert: chainPem(leaf, intermediate), key: leaf.keyPem });
}, 60_000);

afterAll(async () => {
  await Promise.all([w?.close(), server?.close(), ...closers.map((close) => close())]);
  await Promise.all([unbound?.close(), knot?.close()]);
});

withDaemons("CAA: will the next renewal be allowed?", () => {
  test("records naming the issuer's CA permit it: no warning, no event", async () => {
    const cert = await addAndGet(w.h, { domain: `allowed.${D}`, port: server.port });
    expect([cert.status, cert.warnings]).toEqual(["valid", []]);
    expect((await eventsOf(w.h, cert.id)).map((e) => e.type)).toEqual([]);
  });

  test("a record naming the issuer's CA with a parameter that is no tag=value forbids it, as RFC 8659 §4.2 reads a value outside its grammar", async () => {
    const cert = await addAndGet(w.h, { domain: `malformed.${D}`, port: server.port });
    expect([cert.status, cert.warnings]).toEqual(["valid", ["caa_forbids_issuer"]]);
    expect((await eventsOf(w.h, cert.id)).map((e) => e.type)).toEqual(["certificate.renewal_blocked"]);
  });

  test("records naming only other CAs: caa_forbids_issuer on every view and one certificate.renewal_blocked naming the set", async () => {
    const cert = await addAndGet(w.h, { domain: `blocked.${D}`, port: server.port });
    expect([cert.status, cert.statusReason, cert.warnings]).toEqual(["valid", null, ["caa_forbids_issuer"]]);
    const listed = expectData(await w.h.request("GET", `/v1/certificates?domain=blocked.${D}`), 200);
    expect(listed[0].warnings).toEqual(["caa_forbids_issuer"]);
    const events = await eventsOf(w.h, cert.id);
    expect(events.map((e) => e.type)).toEqual(["certificate.renewal_blocked"]);
    expect(events[0].data.caa).toEqual({
      name: `blocked.${D}`,
      setAt: `blocked.${D}`,
      property: "issue",
      reason: "not_listed",
      records: [`0 iodef "mailto:security@${D}"`, '0 issue "letsencrypt.org"'],
      issuerDomain: `ca.${D}`,
    });
    expect(events[0].data.certificate.warnings).toEqual(["caa_forbids_issuer"]);
    // A check later: the same serial and the same set are not announced again.
    const checked = await checkNow(w.h, cert.id);
    expect(checked.warnings).toEqual(["caa_forbids_issuer"]);
    expect((await eventsOf(w.h, cert.id)).length).toBe(1);
  });

  test("the set is found by climbing the tree: a name without records takes its parent's", async () => {
    const cert = await addAndGet(w.h, { domain: `x.parent.${D}`, port: server.port });
    expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
    const [event] = await eventsOf(w.h, cert.id);
    expect([event.data.caa.name, event.data.caa.setAt]).toEqual([`x.parent.${D}`, `parent.${D}`]);
  });

  test("CNAMEs are followed: the alias target's records are the set", async () => {
    const cert = await addAndGet(w.h, { domain: `aliased.${D}`, port: server.port });
    const [event] = await eventsOf(w.h, cert.id);
    expect(event.data.caa.setAt).toBe("cdn.provider.test");
  });

  test("an alias whose target has no records climbs from the alias's parent, not the target's (RFC 8659 §3)", async () => {
    const cert = await addAndGet(w.h, { domain: `alias.sub2.${D}`, port: server.port });
    expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
    const [event] = await eventsOf(w.h, cert.id);
    expect(event.data.caa.setAt).toBe(`sub2.${D}`);
  });

  test("a wildcard certificate is judged by issuewild at the wildcard's base", async () => {
    const wildLeaf = await createLeaf({ issuer: intermediate, dnsNames: [`*.wild.${D}`] });
    const wild = await startTlsServer({ cert: chainPem(wildLeaf, intermediate), key: wildLeaf.keyPem });
    closers.push(() => wild.close());
    const cert = await addAndGet(w.h, { domain: `app.wild.${D}`, port: wild.port });
    expect(cert.warnings).toEqual(["caa_forbids_issuer"]);
    const [event] = await eventsOf(w.h, cert.id);
    expect(event.data.caa).toMatchObject({ name: `*.wild.${D}`, setAt: `wild.${D}`, property: "issuewild" });
  });

  test("an issuer with no known CAA domain is not judged", async () => {
    const selfSigned = await createLeaf({ dnsNames: [`plain.${D}`] });
    const other = await startTlsServer({ cert: selfSigned.certPem, key: selfSigned.keyPem });
    closers.push(() => other.close());
    await publish(`plain.certkeeper CAA 0 issue ";"`);
    const cert = await addAndGet(w.h, { domain: `plain.${D}`, port: other.port });
    expect(cert.warnings).toEqual([]);
    expect((await eventsOf(w.h, cert.id)).map((e) => e.type)).not.toContain("certificate.renewal_blocked");
  });

  test("another record set that still forbids is announced again; records fixed: the warning goes, silently", async () => {
    await publish(`changing.certkeeper CAA 0 issue "digicert.com"`);
    const cert = await addAndGet(w.h, { domain: `changing.${D}`, port: server.port });
    extra.splice(extra.indexOf(`changing.certkeeper CAA 0 issue "digicert.com"`), 1);
    await publish(`changing.certkeeper CAA 0 issue "sectigo.com"`);
    expect((await checkNow(w.h, cert.id)).warnings).toEqual(["caa_forbids_issuer"]);
    extra.splice(extra.indexOf(`changing.certkeeper CAA 0 issue "sectigo.com"`), 1);
    await publish(`changing.certkeeper CAA 0 issue "ca.${D}"`);
    expect((await checkNow(w.h, cert.id)).warnings).toEqual([]);
    const events = await eventsOf(w.h, cert.id);
    expect(events.map((e) => [e.type, e.data.caa?.records])).toEqual([
      ["certificate.renewal_blocked", ['0 issue "digicert.com"']],
      ["certificate.renewal_blocked", ['0 issue "sectigo.com"']],
    ]);
  });

  test("a renewed certificate still blocked is announced once more: once per serial", async () => {
    await publish(`renewing.certkeeper CAA 0 issue "letsencrypt.org"`);
    const renewing = await startTlsServer({ cert: chainPem(leaf, intermediate), key: leaf.keyPem });
    closers.push(() => renewing.close());
    const cert = await addAndGet(w.h, { domain: `renewing.${D}`, port: renewing.port });
    const next = await createLeaf({ issuer: intermediate, dnsNames: NAMES, daysLeft: 120 });
    renewing.setCertificate(chainPem(next, intermediate), next.keyPem);
    await checkNow(w.h, cert.id);
    await checkNow(w.h, cert.id);
    expect((await eventsOf(w.h, cert.id)).map((e) => e.type)).toEqual(["certificate.renewal_blocked", "certificate.renewed", "certificate.renewal_blocked"]);
  });

  test("two addresses serving leaves of two CAs, one forbidden: only its endpoint is renewal_blocked, the other renewal_overdue", async () => {
    const { ecIntermediate } = await testPki();
    // 90-day leaves with 5 and 6 days left: both past their renewal deadline.
    const now = Date.now();
    const forbidden = await createLeaf({ issuer: intermediate, dnsNames: [`multi.${D}`], notBefore: new Date(now - 85 * DAY), notAfter: new Date(now + 5 * DAY) });
    const permitted = await createLeaf({ issuer: ecIntermediate, dnsNames: [`multi.${D}`], notBefore: new Date(now - 84 * DAY), notAfter: new Date(now + 6 * DAY) });
    const a = await startTlsServer({ cert: chainPem(forbidden, intermediate), key: forbidden.keyPem, host: "127.0.0.1" });
    closers.push(() => a.close());
    const b = await startTlsServer({ cert: chainPem(permitted, ecIntermediate), key: permitted.keyPem, host: "127.0.0.2", port: a.port });
    closers.push(() => b.close());
    await publish(`multi.certkeeper CAA 0 issue "ec.${D}"`);
    const migrating = await dnsWorld(unbound.port, {
      resolve: [{ pattern: `multi.${D}`, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }],
      config: { caaIdentities: [{ name: "certkeeper Test RSA CA", domain: `ca.${D}` }, { name: "certkeeper Test EC CA", domain: `ec.${D}` }] },
    });
    closers.push(() => migrating.close());
    const cert = await addAndGet(migrating.h, { domain: `multi.${D}`, port: a.port, alertPolicy: "renewal" });
    expect([cert.status, cert.statusReason, cert.warnings]).toEqual(["expiring", "renewal_blocked", ["caa_forbids_issuer"]]);
    expect(cert.endpoints.map((e: any) => [e.address, e.status, e.statusReason])).toEqual([
      ["127.0.0.1", "expiring", "renewal_blocked"],
      ["127.0.0.2", "expiring", "renewal_overdue"],
    ]);
  });

  test("the messages of every channel type name the domain, the CA and the record to add; PagerDuty opens `renewal`, a renewal resolves it", async () => {
    const blocked = expectData(await w.h.request("GET", `/v1/certificates?domain=blocked.${D}`), 200)[0];
    const [view] = await eventsOf(w.h, blocked.id);
    const event: EventRecord = { ...view, organizationId: w.h.org.id, mode: "live", createdAt: Date.parse(view.createdAt) };
    const channel = (type: ChannelType, config: Record<string, unknown>): ChannelRecord => ({
      id: "ch_Z9y8X7w6V5u4T3s2",
      organizationId: w.h.org.id,
      mode: "live",
      type,
      name: type,
      enabled: true,
      filter: null,
      config,
      signingSecret: null,
      createdAt: 0,
      updatedAt: 0,
    });
    const texts: Record<string, string> = {};
    for (const [type, config] of [
      ["email", { email: "ops@example.com" }],
      ["slack", { webhookUrl: "https://hooks.slack.com/services/T/B/X" }],
      ["discord", { webhookUrl: "https://discord.com/api/webhooks/1/x" }],
      ["teams", { webhookUrl: "https://example.webhook.office.com/x" }],
      ["telegram", { botToken: "123:abc", chatId: 42 }],
    ] as const) {
      const rendered = renderNotification(event, channel(type, config), { now: Date.now(), mailFrom: "certkeeper@localhost" });
      texts[type] = rendered.kind === "email" ? `${rendered.message.subject}\n${rendered.message.text}` : rendered.request.body;
    }
    for (const [type, text] of Object.entries(texts)) {
      expect({ type, domain: text.includes(`blocked.${D}`), ca: text.includes("certkeeper intermediates"), fix: text.includes(`CAA 0 issue`) && text.includes(`ca.${D}`) }).toEqual({
        type,
        domain: true,
        ca: true,
        fix: true,
      });
    }
    expect(describeEvent(event).summary).toBe(
      `The CAA records at blocked.${D} do not allow certkeeper intermediates (ca.${D}) to issue for blocked.${D}, so the next renewal of the ` +
        `certificate for blocked.${D}:${blocked.port} from that CA will fail. Add the record blocked.${D}. CAA 0 issue "ca.${D}" (or renew from a CA the records name).`,
    );
    const [trigger] = pagerdutyRequests(event, describeEvent(event), { baseUrl: "https://events.pagerduty.com", routingKey: "r".repeat(32) });
    expect(JSON.parse(trigger!.body)).toMatchObject({ event_action: "trigger", dedup_key: `${blocked.id}:renewal`, payload: { severity: "warning", class: "certificate.renewal_blocked" } });
    const renewed: EventRecord = { ...event, id: "evt_renewed000000000000", type: "certificate.renewed" };
    const resolves = pagerdutyRequests(renewed, describeEvent(renewed), { baseUrl: "https://events.pagerduty.com", routingKey: "r".repeat(32) }).map((r) => JSON.parse(r.body));
    expect(resolves.map((r) => [r.event_action, r.dedup_key])).toContainEqual(["resolve", `${blocked.id}:renewal`]);
  });

  test("a channel can filter on certificate.renewal_blocked", async () => {
    const created = expectData(
      await w.h.request("POST", "/v1/channels", { body: { type: "webhook", name: "CAA", config: { url: "https://hooks.example.net/caa" }, filter: { events: ["certificate.renewal_blocked"] } } }),
      201,
    );
    expect(created.filter).toEqual({ events: ["certificate.renewal_blocked"] });
  });

  test("each question is counted by record type and result", () => {
    const text = w.h.core.services.metrics.dnsLookups.render();
    const count = (type: string, result: string) => Number(new RegExp(`certkeeper_dns_lookups_total\\{type="${type}",result="${result}"\\} (\\d+)`).exec(text)?.[1] ?? "NaN");
    expect(count("CAA", "ok")).toBeGreaterThan(10);
    expect(count("CAA", "nxdomain")).toBeGreaterThan(0);
    expect(count("CAA", "error")).toBe(0);
  });
});

withDaemons("DANE for SMTP (RFC 7672)", () => {
  async function smtpServer(domain: string, issued: Issued) {
    const smtp = new SMTPServer({ secure: false, key: issued.keyPem, cert: chainPem(issued, intermediate), authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    const port = (smtp.server.address() as { port: number }).port;
    return { smtp, port, domain };
  }

  test("a TLSA record of the served key (3 1 1, by openssl): match, validated by the resolver; no warning", async () => {
    const issued = await createLeaf({ issuer: intermediate, dnsNames: [`mx1.dane.${D}`], freshKey: true });
    const mx = await smtpServer(`mx1.dane.${D}`, issued);
    await publish(`_${mx.port}._tcp.mx1.dane.certkeeper TLSA 3 1 1 ${opensslTlsa(issued.certPem, 1, "sha256")}`);
    const cert = await addAndGet(w.h, { domain: mx.domain, port: mx.port, protocol: "smtp" });
    expect([cert.status, cert.warnings, cert.endpoints.map((e: any) => e.dane)]).toEqual(["valid", [], [{ status: "match", validated: true }]]);
  });

  test("a renewal that changed the key while TLSA still names the old one: mismatch and dane_mismatch, the status unchanged", async () => {
    const old = await createLeaf({ issuer: intermediate, dnsNames: [`mx2.dane.${D}`], freshKey: true });
    const mx = await smtpServer(`mx2.dane.${D}`, old);
    await publish(`_${mx.port}._tcp.mx2.dane.certkeeper TLSA 3 1 1 ${opensslTlsa(old.certPem, 1, "sha256")}`);
    const cert = await addAndGet(w.h, { domain: mx.domain, port: mx.port, protocol: "smtp" });
    expect(cert.endpoints[0].dane.status).toBe("match");
    const renewed = await createLeaf({ issuer: intermediate, dnsNames: [`mx2.dane.${D}`], freshKey: true, daysLeft: 120 });
    mx.smtp.updateSecureContext({ key: renewed.keyPem, cert: chainPem(renewed, intermediate) });
    const checked = await checkNow(w.h, cert.id);
    expect([checked.status, checked.warnings, checked.endpoints[0].dane]).toEqual(["valid", ["dane_mismatch"], { status: "mismatch", validated: true }]);
  });

  test("a DANE-TA record of the intermediate the server sends (2 0 1) matches across a key change", async () => {
    const issued = await createLeaf({ issuer: intermediate, dnsNames: [`mx3.dane.${D}`], freshKey: true });
    const mx = await smtpServer(`mx3.dane.${D}`, issued);
    await publish(`_${mx.port}._tcp.mx3.dane.certkeeper TLSA 2 0 1 ${opensslTlsa(intermediate.certPem, 0, "sha256")}`);
    const cert = await addAndGet(w.h, { domain: mx.domain, port: mx.port, protocol: "smtp" });
    expect(cert.endpoints[0].dane).toEqual({ status: "match", validated: true });
  });

  test("no TLSA record: none; a tls certificate shows dane null and no mailDomain", async () => {
    const issued = await createLeaf({ issuer: intermediate, dnsNames: [`mx4.dane.${D}`] });
    const mx = await smtpServer(`mx4.dane.${D}`, issued);
    const cert = await addAndGet(w.h, { domain: mx.domain, port: mx.port, protocol: "smtp" });
    expect([cert.endpoints[0].dane, cert.mailDomain]).toEqual([{ status: "none", validated: true }, `dane.${D}`]);
    const tls = await addAndGet(w.h, { domain: `allowed.${D}`, port: server.port, connectTo: "127.0.0.1" });
    expect([tls.endpoints[0].dane, tls.mailDomain]).toEqual([null, null]);
  });

  test("a resolver that does not validate (Knot asked directly) reports validated: false", async () => {
    const direct = await dnsWorld(knot.port);
    closers.push(() => direct.close());
    const issued = await createLeaf({ issuer: intermediate, dnsNames: [`mx5.dane.${D}`], freshKey: true });
    const mx = await smtpServer(`mx5.dane.${D}`, issued);
    await publish(`_${mx.port}._tcp.mx5.dane.certkeeper TLSA 3 1 1 ${opensslTlsa(issued.certPem, 1, "sha256")}`);
    const cert = await addAndGet(direct.h, { domain: mx.domain, port: mx.port, protocol: "smtp" });
    expect(cert.endpoints[0].dane).toEqual({ status: "match", validated: false });
  });
});

withDaemons("MTA-STS (RFC 8461)", () => {
  let policy: PolicyServer | null = null;
  let unavailable: string | null = null;
  let sts: DnsWorld;
  let mx: { port: number; close(): Promise<void> };
  const mail = `mail.${D}`;

  beforeAll(async () => {
    if (missing) return;
    const web = await createLeaf({ issuer: intermediate, dnsNames: [`mta-sts.${mail}`, `mta-sts.other.${D}`] });
    const started = await startPolicyServer(chainPem(web, intermediate), web.keyPem);
    if ("unavailable" in started) {
      unavailable = started.unavailable;
      console.warn(`dns_checks.happy.test.ts: the MTA-STS tests are skipped: ${unavailable}`);
      return;
    }
    policy = started;
    sts = await dnsWorld(unbound.port, {
      resolve: [
        { pattern: `mta-sts.${mail}`, address: policy.address },
        { pattern: `mta-sts.other.${D}`, address: policy.address },
      ],
    });
    const issued = await createLeaf({ issuer: intermediate, dnsNames: [`mx1.${mail}`, `mx9.${D}`] });
    const smtp = new SMTPServer({ secure: false, key: issued.keyPem, cert: chainPem(issued, intermediate), authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    mx = { port: (smtp.server.address() as { port: number }).port, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
  });

  afterAll(async () => {
    await Promise.all([sts?.close(), policy?.close(), mx?.close()]);
  });

  const enforce = (mxLine: string) => ({ status: 200, body: `version: STSv1\r\nmode: enforce\r\n${mxLine}\r\nmax_age: 86400\r\n` });

  test("an enforce policy whose mx patterns cover the host and whose host the certificate names: no warning; fetched once per id", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    await publish(`_mta-sts.mail.certkeeper TXT "v=STSv1; id=20260101a;"`);
    policy.respond(enforce(`mx: *.${mail}`));
    const before = policy.requests().length;
    const cert = await addAndGet(sts.h, { domain: `mx1.${mail}`, port: mx.port, protocol: "smtp" });
    expect([cert.mailDomain, cert.warnings]).toEqual([mail, []]);
    await checkNow(sts.h, cert.id);
    await checkNow(sts.h, cert.id);
    expect(policy.requests().slice(before)).toEqual([`GET /.well-known/mta-sts.txt mta-sts.${mail}`]);
  });

  test("a policy whose patterns miss the host: mta_sts_mismatch once the TXT id changes and the new policy is fetched", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    const cert = expectData(await sts.h.request("GET", `/v1/certificates?domain=mx1.${mail}`), 200)[0];
    policy.respond(enforce(`mx: mx7.${mail}`));
    // The same id: the cached policy stands, not refetched.
    expect((await checkNow(sts.h, cert.id)).warnings).toEqual([]);
    extra.splice(extra.indexOf(`_mta-sts.mail.certkeeper TXT "v=STSv1; id=20260101a;"`), 1);
    await publish(`_mta-sts.mail.certkeeper TXT "v=STSv1; id=20260101b;"`);
    const checked = await checkNow(sts.h, cert.id);
    expect([checked.status, checked.warnings]).toEqual(["valid", ["mta_sts_mismatch"]]);
  });

  test("a testing policy never warns; mailDomain given at add, and changed by PATCH, is the one judged", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    await publish(`_mta-sts.other.certkeeper TXT "v=STSv1; id=1;"`);
    policy.respond({ status: 200, body: `version: STSv1\nmode: testing\nmx: nothing.example\nmax_age: 600\n` });
    const cert = await addAndGet(sts.h, { domain: `mx9.${D}`, port: mx.port, protocol: "smtp", mailDomain: `Other.${D}.` });
    expect([cert.mailDomain, cert.warnings]).toEqual([`other.${D}`, []]);
    policy.respond(enforce(`mx: nothing.example`));
    const patched = expectData(await sts.h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mailDomain: mail } }), 200);
    expect([patched.mailDomain, patched.warnings]).toEqual([mail, ["mta_sts_mismatch"]]);
    const reset = expectData(await sts.h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mailDomain: null } }), 200);
    expect(reset.mailDomain).toBe(D);
  });

  test("an enforce policy covering a host its certificate does not name: mta_sts_mismatch", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    policy.respond(enforce(`mx: *.wrong.${D}`));
    const cert = await addAndGet(sts.h, { domain: `mx1.wrong.${D}`, port: mx.port, protocol: "smtp", mailDomain: `other.${D}` });
    expect([cert.status, cert.statusReason, cert.warnings]).toEqual(["invalid", "hostname_mismatch", ["mta_sts_mismatch"]]);
  });
});
