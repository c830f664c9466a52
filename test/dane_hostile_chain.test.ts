/**
 * DANE judged against a hostile server and zone (the monitored party controls both): a served chain
 * of nine "intermediates" all named like the leaf's issuer, each with a 16384-bit RSA key of exponent
 * 2^33-1, under 199 TLSA "2 1 0" records. The signature path is walked once per verdict, and a verdict
 * verifies a bounded number of signatures with keys of sane size, so adding the mail server holds the
 * event loop no longer than with no TLSA records at all (it held it ~6 s per endpoint per check before).
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { SMTPServer } from "smtp-server";
import * as dnsPacket from "dns-packet";
import { meterEventLoop } from "./support/event_loop_meter.ts";
import { TEST_DOMAIN } from "./support/harness.ts";
import { answerTo, startFixtureDns } from "./support/dns_servers.ts";
import { dnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(120_000);
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

// --- a minimal DER writer for the hostile certificates ---
function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const b: number[] = [];
  for (let r = n; r > 0; r = Math.floor(r / 256)) b.unshift(r % 256);
  return Buffer.from([0x80 | b.length, ...b]);
}
const tlv = (tag: number, ...parts: Buffer[]) => {
  const v = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), len(v.length), v]);
};
const seq = (...p: Buffer[]) => tlv(0x30, ...p);
const int = (b: Buffer) => tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
const oid = (hex: string) => tlv(0x06, Buffer.from(hex, "hex"));
const SHA256_RSA = seq(oid("2a864886f70d01010b"), Buffer.from([5, 0]));
const RSA = seq(oid("2a864886f70d010101"), Buffer.from([5, 0]));
const name = (cn: string) => seq(tlv(0x31, seq(oid("550403"), tlv(0x0c, Buffer.from(cn)))));
const time = (s: string) => tlv(0x18, Buffer.from(s));
const BITS = 16384;

/** An RSA key that is only a big odd number and the largest exponent BoringSSL accepts: costly to verify with. */
function costlyRsaSpki(): Buffer {
  const n = randomBytes(BITS / 8);
  n[0] = 0xff;
  n[n.length - 1]! |= 1;
  return seq(RSA, tlv(0x03, Buffer.from([0]), seq(int(n), int(Buffer.from("01ffffffff", "hex")))));
}
function certificate(serial: number, issuer: string, subject: string, spki: Buffer, sans?: string[]): Buffer {
  const extensions = sans ? tlv(0xa3, seq(seq(oid("551d11"), tlv(0x04, seq(...sans.map((s) => tlv(0x82, Buffer.from(s)))))))) : Buffer.alloc(0);
  const tbs = seq(tlv(0xa0, int(Buffer.from([2]))), int(Buffer.from([serial, 1, 2, 3])), SHA256_RSA, name(issuer), seq(time("20200101000000Z"), time("20991231000000Z")), name(subject), spki, extensions);
  const signature = randomBytes(BITS / 8);
  signature[0] = 0x01; // below any modulus above: verified in full, then refused
  return seq(tbs, SHA256_RSA, tlv(0x03, Buffer.from([0]), signature));
}
const pem = (der: Buffer) => `-----BEGIN CERTIFICATE-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`;

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
