/**
 * Hostile DNS and hostile policy servers against whole checks (CONTRACT §22): a resolver that never
 * answers, floods, answers for other names, loops CNAMEs or truncates into garbage costs a check at
 * most its time limit and changes nothing: no status, no event, no warning. MTA-STS policies obey the
 * private-address rule, are read without following redirects, and no more than 64 KiB of them.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import * as dnsPacket from "dns-packet";
import { FetchFailure } from "../core/net/mod.ts";
import { fetchStsPolicy, MTA_STS_MAX_BYTES } from "../core/dns/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { answerTo, dnsDaemonsMissing, startFixtureDns, startKnot, type FixtureReply } from "./support/dns_servers.ts";
import { addAndGet, checkNow, dnsWorld, eventsOf, startPolicyServer, type DnsWorld, type PolicyServer } from "./support/dns_world.ts";

setDefaultTimeout(30_000);
const missing = dnsDaemonsMissing();
if (missing) console.warn(`dns_checks.security.test.ts: skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const D = TEST_DOMAIN;
let intermediate: Issued;
let server: TlsTestServer;
let smtpPort: number;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  intermediate = (await testPki()).rsaIntermediate;
  const leaf = await createLeaf({ issuer: intermediate, dnsNames: [`*.${D}`, `*.mail.${D}`] });
  server = await startTlsServer({ cert: chainPem(leaf, intermediate), key: leaf.keyPem });
  const smtp = new SMTPServer({ secure: false, key: leaf.keyPem, cert: chainPem(leaf, intermediate), authOptional: true, logger: false });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  smtpPort = (smtp.server.address() as { port: number }).port;
  closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
});

afterAll(async () => {
  await server?.close();
  for (const close of closers.reverse()) await close();
});

const caa = (name: string, value: string): dnsPacket.Answer => ({ type: "CAA", name, ttl: 60, data: { flags: 0, tag: "issue", value } });
const flood = (name: string) => Array.from({ length: 400 }, (_, i) => caa(name, `ca${i}.example`));

/** Each resolver answers every question (CAA, TLSA, TXT, CNAME) its own hostile way. */
const HOSTILE: Record<string, (query: dnsPacket.DecodedPacket, transport: "udp" | "tcp") => FixtureReply> = {
  "never answers": () => ({ silent: true }),
  "floods records (truncated over UDP, 400 records over TCP)": (query, transport) =>
    transport === "udp"
      ? { message: answerTo(query, [], { flags: dnsPacket.TRUNCATED_RESPONSE }) }
      : { message: answerTo(query, flood(query.questions![0]!.name)) },
  "answers another question": (query) => ({
    message: answerTo(query, [caa("evil.test", ";")], { question: { type: "CAA", name: "evil.test", class: "IN" } }),
  }),
  "slips forbidding records of other names into its answers": (query) => ({ message: answerTo(query, [caa(`evil.${query.questions![0]!.name}`, ";"), caa("evil.invalid", ";")]) }),
  "truncates over UDP and sends garbage over TCP": (query, transport) =>
    transport === "udp" ? { message: answerTo(query, [], { flags: dnsPacket.TRUNCATED_RESPONSE }) } : { message: Buffer.from("garbage that is no DNS message at all") },
  "answers with a CNAME pointing to itself": (query) => {
    const name = query.questions![0]!.name;
    return { message: answerTo(query, [{ type: "CNAME", name, ttl: 60, data: name }]) };
  },
};

withDaemons("hostile resolvers cost a check its time limit at most and change nothing", () => {
  for (const [behaviour, reply] of Object.entries(HOSTILE)) {
    test(`a resolver that ${behaviour}`, async () => {
      const fixture = await startFixtureDns(reply);
      closers.push(() => fixture.close());
      const w = await dnsWorld(fixture.port, { config: { tlsTimeoutMs: 1000 } });
      closers.push(() => w.close());
      const cert = await addAndGet(w.h, { domain: `hostile.${D}`, port: server.port });
      const mail = await addAndGet(w.h, { domain: `mx.mail.${D}`, port: smtpPort, protocol: "smtp" });
      const checked = [await checkNow(w.h, cert.id), await checkNow(w.h, mail.id)];
      for (const view of [cert, mail, ...checked]) {
        expect([view.status, view.statusReason, view.warnings]).toEqual(["valid", null, []]);
      }
      // Records of other names are no answer: the TLSA set is empty (none); every other hostile answer gives no verdict.
      const slipped = behaviour.startsWith("slips");
      expect(checked[1].endpoints.map((e: any) => e.dane)).toEqual([slipped ? { status: "none", validated: false } : null]);
      expect([...(await eventsOf(w.h, cert.id)), ...(await eventsOf(w.h, mail.id))]).toEqual([]);
      expect(fixture.questions().length).toBeGreaterThan(0);
    });
  }

  test("a CNAME loop served by a real Knot DNS: no verdict, nothing announced", async () => {
    const knot = await startKnot(`loop.certkeeper CNAME loop2.certkeeper\nloop2.certkeeper CNAME loop.certkeeper\n`);
    closers.push(() => knot.close());
    const w = await dnsWorld(knot.port);
    closers.push(() => w.close());
    const cert = await addAndGet(w.h, { domain: `loop.${D}`, port: server.port });
    expect([cert.status, cert.warnings, await eventsOf(w.h, cert.id)]).toEqual(["valid", [], []]);
  });
});

describe("MTA-STS policies are read like any document from outside (security)", () => {
  let policy: PolicyServer | null = null;
  let unavailable = "";
  let root: Issued;

  beforeAll(async () => {
    root = (await testPki()).root;
    const web = await createLeaf({ issuer: intermediate, dnsNames: [`mta-sts.mail.${D}`] });
    const started = await startPolicyServer(chainPem(web, intermediate), web.keyPem);
    if ("unavailable" in started) {
      unavailable = started.unavailable;
      console.warn(`dns_checks.security.test.ts: the MTA-STS tests are skipped: ${unavailable}`);
      return;
    }
    policy = started;
    closers.push(() => started.close());
  });

  const fetcher = (allowPrivateTargets: boolean) => {
    const created = createHttpFetcher({
      trust: new TrustStore([root.certPem]),
      resolve: [{ pattern: `mta-sts.mail.${D}`, address: policy!.address }],
      allowPrivateTargets,
    });
    closers.push(() => created.close());
    return created;
  };

  async function refusal(promise: Promise<unknown>): Promise<FetchFailure> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof FetchFailure) return error;
      throw error;
    }
    throw new Error("the policy was fetched");
  }

  test("the private-address rule: a policy host resolving to a loopback address is never connected to", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    policy.respond({ status: 200, body: "version: STSv1\nmode: enforce\nmx: *.mail.certkeeper.test\nmax_age: 600\n" });
    const before = policy.requests().length;
    const failure = await refusal(fetchStsPolicy(fetcher(false), `mail.${D}`, 2000));
    expect([failure.reason, failure.message]).toEqual(["refused", `mta-sts.mail.${D} resolves to a loopback address, which certkeeper does not connect to`]);
    expect(policy.requests().length).toBe(before);
    // Allowed (CERTKEEPER_ALLOW_PRIVATE_TARGETS=true), the same policy is read.
    expect(await fetchStsPolicy(fetcher(true), `mail.${D}`, 2000)).toEqual({ mode: "enforce", mx: [`*.mail.${D}`], maxAge: 600 });
  });

  test("a redirect is not followed: the policy is not had, and the place it points to is never asked", async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    policy.respond({ status: 302, body: "", headers: { location: `https://mta-sts.mail.${D}/elsewhere.txt` } });
    const before = policy.requests().length;
    const failure = await refusal(fetchStsPolicy(fetcher(true), `mail.${D}`, 2000));
    expect(failure.message).toBe(`https://mta-sts.mail.${D}/.well-known/mta-sts.txt answered HTTP 302, not 200 (redirects are not followed)`);
    expect(policy.requests().slice(before)).toEqual([`GET /.well-known/mta-sts.txt mta-sts.mail.${D}`]);
  });

  test(`a policy larger than ${MTA_STS_MAX_BYTES} bytes is cut off unread, declared or not`, async () => {
    if (!policy) return console.warn(`skipped: ${unavailable}`);
    const huge = `version: STSv1\nmode: enforce\nmax_age: 600\n${"mx: a.example\n".repeat(6000)}`;
    expect(huge.length).toBeGreaterThan(MTA_STS_MAX_BYTES);
    policy.respond({ status: 200, body: huge });
    expect((await refusal(fetchStsPolicy(fetcher(true), `mail.${D}`, 2000))).reason).toBe("too_large");
    policy.respond({ status: 200, body: Buffer.from(huge), headers: { "transfer-encoding": "chunked" } });
    expect((await refusal(fetchStsPolicy(fetcher(true), `mail.${D}`, 2000))).reason).toBe("too_large");
  });

  test("through a check: a redirecting policy server leaves no policy, hence no warning", async () => {
    if (!policy || missing) return console.warn(`skipped: ${unavailable || missing}`);
    const knot = await startKnot(`_mta-sts.mail.certkeeper TXT "v=STSv1; id=9;"\n`);
    closers.push(() => knot.close());
    const w = await dnsWorld(knot.port, { resolve: [{ pattern: `mta-sts.mail.${D}`, address: policy.address }] });
    closers.push(() => w.close());
    policy.respond({ status: 301, body: "", headers: { location: "https://127.0.0.1/policy" } });
    const cert = await addAndGet(w.h, { domain: `mx.mail.${D}`, port: smtpPort, protocol: "smtp" });
    expect([cert.status, cert.warnings]).toEqual(["valid", []]);
    const listed = expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200);
    expect(listed.mailDomain).toBe(`mail.${D}`);
  });
});
