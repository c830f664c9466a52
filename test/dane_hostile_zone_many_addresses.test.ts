/**
 * DANE at every check of a hostile mail server does not hold the event loop. The monitored party owns
 * the server and its zone: sixteen A records (the most a check connects to), each address serving a
 * leaf padded to ~91 KB by one opaque extension, under 199 TLSA records: 32 "2 1 0" ones, each a
 * distinct 8,192-bit RSA key with exponent 2^33-1 (each a full verification of the leaf's signature),
 * and 167 "3 0 2" ones (SHA-512 of the whole leaf, none matching). A check judges each distinct chain
 * once, in a turn of its own, with a signature budget of its own, each certificate hashed once a
 * selector and matching type. Yardstick: the same sixteen endpoints with an honest certificate and one
 * TLSA record. Revocation is off in both worlds so that only DANE is measured.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { SMTPServer } from "smtp-server";
import * as dnsPacket from "dns-packet";
import { meterEventLoop } from "./support/event_loop_meter.ts";
import { pem } from "./support/hostile_certs.ts";
import { oid, seq, SHA256_RSA, tlv } from "./support/forged_certs.ts";
import { TEST_DOMAIN } from "./support/harness.ts";
import { answerTo, startFixtureDns } from "./support/dns_servers.ts";
import { dnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(180_000);
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const ADDRESSES = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 1}`);
const int = (b: Buffer) => tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
const name = (cn: string) => seq(tlv(0x31, seq(oid("550403"), tlv(0x0c, Buffer.from(cn)))));
const time = (s: string) => tlv(0x18, Buffer.from(s));

/** A self-issued leaf for `host` (its signature random: DANE-EE judges no signature), padded by `pad` bytes of an unknown extension. */
function leaf(host: string, spki: Buffer, pad: number): Buffer {
  const extensions = [seq(oid("551d11"), tlv(0x04, seq(tlv(0x82, Buffer.from(host)))))];
  if (pad > 0) extensions.push(seq(oid("2a0304"), tlv(0x04, Buffer.alloc(pad, 0x41))));
  const tbs = seq(tlv(0xa0, int(Buffer.from([2]))), int(Buffer.from([1, 2, 3])), SHA256_RSA, name(host), seq(time("20200101000000Z"), time("20991231000000Z")), name(host), spki, tlv(0xa3, seq(...extensions)));
  // 1,024 bytes below any 8,192-bit modulus: checked under such a key, it costs a full exponentiation.
  const signature = randomBytes(1024);
  signature[0] = 0x01;
  return seq(tbs, SHA256_RSA, tlv(0x03, Buffer.from([0]), signature));
}

const RSA = seq(oid("2a864886f70d010101"), Buffer.from([5, 0]));
/** An RSA "key" of 8,192 bits (the most path building and DANE accept) with the largest exponent accepted (2^33 - 1). */
function costlyKey(): Buffer {
  const n = randomBytes(1024);
  n[0] = 0xff;
  n[n.length - 1]! |= 1;
  return seq(RSA, tlv(0x03, Buffer.from([0]), seq(int(n), int(Buffer.from("01ffffffff", "hex")))));
}

/** Sixteen SMTP servers (STARTTLS) on one port, one per loopback address, serving `der`. */
async function mailServers(der: Buffer, key: string): Promise<number> {
  let port = 0;
  for (const address of ADDRESSES) {
    const smtp = new SMTPServer({ secure: false, key, cert: pem(der), authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(port, address, () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    port = (smtp.server.address() as { port: number }).port;
  }
  return port;
}

async function checkStall(label: string, pad: number, tlsaCount: number, keyRecords = 0): Promise<number> {
  const host = `dane-${label}.${TEST_DOMAIN}`;
  const keys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const spki = keys.publicKey.export({ type: "spki", format: "der" }) as Buffer;
  const der = leaf(host, spki, pad);
  const port = await mailServers(der, keys.privateKey.export({ type: "pkcs8", format: "pem" }) as string);
  const tlsaName = `_${port}._tcp.${host}`;
  // "2 1 0" records first (each a distinct costly key: a signature check each, up to the verdict's budget), then "3 0 2" ones.
  const records = Array.from({ length: tlsaCount }, (_, i) => ({
    type: "TLSA",
    name: tlsaName,
    ttl: 60,
    data: i < keyRecords ? { usage: 2, selector: 1, matchingType: 0, certificate: costlyKey() } : { usage: 3, selector: 0, matchingType: 2, certificate: randomBytes(64) },
  }) as unknown as dnsPacket.Answer);
  const fixture = await startFixtureDns((query, transport) => {
    const q = query.questions![0]!;
    if (q.type !== "TLSA") return { message: answerTo(query, []) };
    return { message: transport === "udp" ? answerTo(query, [], { flags: dnsPacket.TRUNCATED_RESPONSE }) : answerTo(query, records) };
  });
  closers.push(() => fixture.close());
  // Revocation off: the untrusted leaf's re-parse at each re-check (recheck_distinct_chains_no_reparse.test.ts) stays out of this measure.
  const w = await dnsWorld(fixture.port, { resolve: [{ pattern: host, address: ADDRESSES[0]!, addresses: ADDRESSES }], config: { revocation: false } });
  closers.push(() => w.close());

  const created = await w.h.request("POST", "/v1/certificates", { body: { domain: host, port, protocol: "smtp", name: label } });
  if (created.status !== 201) console.log(JSON.stringify(created.body));
  expect(created.status).toBe(201);
  const id = (created.body as any).data.id as string;
  // Every check judges DANE again: re-checks, each metered.
  // The stall every re-check causes: the least, over three re-checks, of each one's longest.
  const stalls: number[] = [];
  for (let i = 0; i < 3; i++) {
    const meter = meterEventLoop(5);
    const checked = await w.h.request("POST", `/v1/certificates/${id}/check`);
    stalls.push(meter.stop().longestMs);
    expect(checked.status).toBe(200);
  }
  const longest = Math.min(...stalls);
  const got = await w.h.request("GET", `/v1/certificates/${id}`);
  const endpoints = (got.body as any).data.endpoints ?? [];
  console.log(`${label}: leaf ${der.length} bytes, ${tlsaCount} TLSA records, ${endpoints.length} endpoints, dane: ${JSON.stringify(endpoints.map((e: any) => e.dane?.status))}; longest stall of each re-check ${stalls.map(Math.round).join(", ")} ms`);
  expect(endpoints.length).toBe(16);
  return longest;
}

test("re-checking a mail server whose 16 endpoints serve a ~95 KB leaf under 199 TLSA records does not hold the event loop", async () => {
  const honest = await checkStall("honest", 0, 1);
  const hostile = await checkStall("hostile", 90_000, 199, 32);
  console.log(`stall per re-check: hostile ${Math.round(hostile)} ms vs honest ${Math.round(honest)} ms`);
  expect(hostile).toBeLessThan(Math.max(200, 10 * honest));
});
