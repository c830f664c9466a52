/**
 * DANE judged against a hostile server and zone (the monitored party controls both): a served chain
 * of nine "intermediates" all named like the leaf's issuer, each with a 16384-bit RSA key of exponent
 * 2^33-1, under 199 TLSA "2 1 0" records. The signature path is walked once per verdict, and a verdict
 * verifies a bounded number of signatures with keys of sane size, so adding the mail server holds the
 * event loop no longer than with no TLSA records at all (it held it ~6 s per endpoint per check before).
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { SMTPServer } from "smtp-server";
import * as dnsPacket from "dns-packet";
import { meterEventLoop } from "./support/event_loop_meter.ts";
import { costlyRsaSpki, hostileCertificate as certificate, pem } from "./support/hostile_certs.ts";
import { TEST_DOMAIN } from "./support/harness.ts";
import { answerTo, startFixtureDns } from "./support/dns_servers.ts";
import { dnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(120_000);
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

test("a hostile mail server's chain and TLSA set do not stall the event loop for seconds at each check (DANE judgement)", async () => {
  const host = `dane.${TEST_DOMAIN}`;
  const leafKeys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const leafSpki = leafKeys.publicKey.export({ type: "spki", format: "der" }) as Buffer;
  const chain = [certificate(1, "X", host, leafSpki, [host])];
  for (let i = 0; i < 9; i++) chain.push(certificate(2 + i, "X", "X", costlyRsaSpki()));

  const smtp = new SMTPServer({ secure: false, key: leafKeys.privateKey.export({ type: "pkcs8", format: "pem" }) as string, cert: chain.map(pem).join(""), authOptional: true, logger: false });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
  const port = (smtp.server.address() as { port: number }).port;

  // 199 "2 1 0" records naming some P-256 key: each sends signedUnderKey() through every sent certificate.
  const anchor = (generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ type: "spki", format: "der" }) as Buffer);
  const tlsaName = `_${port}._tcp.${host}`;
  const records: dnsPacket.Answer[] = Array.from({ length: 199 }, () => ({
    type: "TLSA",
    name: tlsaName,
    ttl: 60,
    data: { usage: 2, selector: 1, matchingType: 0, certificate: anchor },
  }) as unknown as dnsPacket.Answer);
  let served: dnsPacket.Answer[] = [];
  const fixture = await startFixtureDns((query, transport) => {
    const q = query.questions![0]!;
    if (q.type !== "TLSA") return { message: answerTo(query, []) };
    return { message: transport === "udp" ? answerTo(query, [], { flags: dnsPacket.TRUNCATED_RESPONSE }) : answerTo(query, served) };
  });
  closers.push(() => fixture.close());
  const w = await dnsWorld(fixture.port);
  closers.push(() => w.close());

  /** Adds the mail server, and says how long the event loop stood still meanwhile. */
  const stall = async (label: string) => {
    const meter = meterEventLoop(10);
    const started = performance.now();
    const created = await w.h.request("POST", "/v1/certificates", { body: { domain: host, port, protocol: "smtp", name: label } });
    const took = performance.now() - started;
    const longest = meter.stop().longestMs;
    if (created.status !== 201) console.log(JSON.stringify(created.body));
    expect(created.status).toBe(201);
    // The TLSA set was read over TCP: the judgement ran against it.
    expect(fixture.questions().some((q) => q.transport === "tcp" && q.question.startsWith("TLSA"))).toBe(true);
    console.log(`${label}: add took ${Math.round(took)} ms; the event loop stood still for up to ${Math.round(longest)} ms`);
    return { longest, id: (created.body as any).data.id as string };
  };
  // Without TLSA records the same hostile chain costs little: the chain's own judgement is not what stalls.
  const control = await stall("no TLSA records");
  expect(control.longest).toBeLessThan(1000);
  expect((await w.h.request("DELETE", `/v1/certificates/${control.id}`)).status).toBe(200);
  served = records;
  expect((await stall("199 TLSA 2 1 0 records")).longest).toBeLessThan(1000);
});
