/**
 * A re-check of a hostile server does not parse every distinct chain it serves again, all in one turn.
 * The server: sixteen A records (the most a check connects to), each address serving its own untrusted
 * chain of three certificates (~91 KB, within the ~100 KB the TLS client accepts), each certificate
 * carrying 9,900 tiny DER INTEGERs in an unknown extension, under the ASN.1 parser's 10,000-node bound.
 * An unchanged untrusted chain has no revocation source to ask about; a trusted one is parsed as a new
 * chain is (a few milliseconds a turn). Yardstick: the same sixteen addresses, each serving its own
 * small self-signed chain. The bound is the process's own (core/base/turns.ts): a few milliseconds of
 * synchronous work a turn; the test allows the larger of 200 ms and ten times the yardstick.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { meterEventLoop } from "./support/event_loop_meter.ts";
import { pem } from "./support/hostile_certs.ts";
import { oid, seq, SHA256_RSA, tlv } from "./support/forged_certs.ts";
import { startTlsServer } from "./support/servers.ts";
import { TEST_DOMAIN } from "./support/harness.ts";
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

/** A random positive serial in minimal DER: its first byte never 0 (a leading zero before a byte under 0x80 is refused by TLS stacks). */
function serialNumber(): Buffer {
  const serial = randomBytes(8);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  return serial;
}

/** A certificate of `subject` naming `issuer` (random signature: nothing trusts it), with `count` tiny DER INTEGERs (02 01 00) in an unknown extension. */
function certificate(subject: string, issuer: string, spki: Buffer, host: string, count: number): Buffer {
  const extensions = [seq(oid("551d11"), tlv(0x04, seq(tlv(0x82, Buffer.from(host)))))];
  if (count > 0) extensions.push(seq(oid("2a0304"), tlv(0x04, seq(Buffer.alloc(count * 3).fill(Buffer.from([0x02, 0x01, 0x00]))))));
  const tbs = seq(tlv(0xa0, int(Buffer.from([2]))), int(serialNumber()), SHA256_RSA, name(issuer), seq(time("20200101000000Z"), time("20991231000000Z")), name(subject), spki, tlv(0xa3, seq(...extensions)));
  return seq(tbs, SHA256_RSA, tlv(0x03, Buffer.from([0]), randomBytes(256)));
}

async function recheckStall(label: string, certs: number, count: number): Promise<number> {
  const host = `reparse-${label}.${TEST_DOMAIN}`;
  const keys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const spki = keys.publicKey.export({ type: "spki", format: "der" }) as Buffer;
  const key = keys.privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  let port = 0;
  let bytes = 0;
  for (const address of ADDRESSES) {
    // Each address its own chain (fresh serials): sixteen distinct chains to judge.
    const chain = Array.from({ length: certs }, (_, i) => certificate(i === 0 ? host : `Hostile CA ${i}`, `Hostile CA ${i + 1}`, spki, host, count));
    bytes = chain.reduce((sum, der) => sum + der.length, 0);
    const server = await startTlsServer({ cert: chain.map(pem).join(""), key, host: address, port });
    closers.push(() => server.close());
    port = server.port;
  }
  const w = await dnsWorld(null, { resolve: [{ pattern: host, address: ADDRESSES[0]!, addresses: ADDRESSES }] });
  closers.push(() => w.close());
  const created = await w.h.request("POST", "/v1/certificates", { body: { domain: host, port, name: label } });
  if (created.status !== 201) console.log(JSON.stringify(created.body));
  expect(created.status).toBe(201);
  const id = (created.body as any).data.id as string;
  // The stall every re-check causes: the least, over three re-checks, of each one's longest.
  const stalls: number[] = [];
  for (let i = 0; i < 3; i++) {
    const meter = meterEventLoop(5);
    const checked = await w.h.request("POST", `/v1/certificates/${id}/check`);
    stalls.push(meter.stop().longestMs);
    expect(checked.status).toBe(200);
  }
  const longest = Math.min(...stalls);
  const got = (await w.h.request("GET", `/v1/certificates/${id}`)).body as any;
  const endpoints = got.data.endpoints ?? [];
  console.log(`${label}: ${endpoints.length} endpoints, chains of ${certs} (${bytes} bytes each), status ${got.data.status}/${got.data.statusReason}, revocation ${JSON.stringify(got.data.revocation ?? got.data.details?.revocation ?? null)}; longest stall of each re-check ${stalls.map(Math.round).join(", ")} ms`);
  expect(endpoints.length).toBe(16);
  return longest;
}

test("re-checking a server whose 16 addresses serve distinct untrusted chains does not re-parse them all in one turn", async () => {
  const honest = await recheckStall("honest", 1, 0);
  const hostile = await recheckStall("hostile", 3, 9_900);
  console.log(`stall per re-check: hostile ${Math.round(hostile)} ms vs honest ${Math.round(honest)} ms`);
  expect(hostile).toBeLessThan(Math.max(200, 10 * honest));
});
