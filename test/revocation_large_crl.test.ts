/**
 * A large CRL is read (RFC 5280 §5): a CA's CRL, or a shard of Let's Encrypt's, lists thousands of
 * serials. The ASN.1 library refuses more than 10,000 nodes a parse (some 3,300 entries), and such a
 * CRL made every leaf of its CA `unavailable` at every check, downloaded again each time. A CRL of
 * 4,000 entries answers: revoked, with its date and reason, for a serial it lists near its end; good
 * for one it does not list; and one download serves both.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";
import { meterEventLoop } from "./support/event_loop_meter.ts";
import { SHA256_RSA, seq, tlv, utcTime } from "./support/forged_certs.ts";

let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  ca = await createIntermediateCa(await createRootCa());
  responder = await startResponder();
});
afterAll(() => responder.close());

test("a CRL of 4,000 entries: the serial it lists near its end is revoked, with its date and reason; another is good", async () => {
  const listed = "5c0ffee0000000000000000000000fa0";
  const revokedAt = new Date(Math.floor((Date.now() - 2 * 3_600_000) / 1000) * 1000);
  const revoked = Array.from({ length: 3999 }, (_, i) => ({ serial: `4a${(i + 1).toString(16).padStart(30, "0")}`, reason: i % 2 === 0 ? 4 : undefined }));
  revoked.push({ serial: listed, reason: 1 });
  const body = await crl({ issuer: ca, revoked: revoked.map((entry) => (entry.serial === listed ? { ...entry, at: revokedAt } : entry)) });
  expect(body.length).toBeGreaterThan(60_000);
  let downloads = 0;
  responder.answer = (request) => {
    if (request.path !== "/large.crl") return { status: 404 };
    downloads++;
    return { body };
  };
  const { ask, close } = checkerFor();
  try {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["listed.test"], serial: listed, crlUrls: [`${responder.url}/large.crl`] });
    expect(await ask(leaf, ca)).toMatchObject({ status: "revoked", source: "crl", reason: "keyCompromise", revokedAt: revokedAt.getTime() });
    const other = await createLeaf({ issuer: ca, dnsNames: ["unlisted.test"], serial: "5c0ffee0000000000000000000000fa1", crlUrls: [`${responder.url}/large.crl`] });
    expect(await ask(other, ca)).toMatchObject({ status: "good", source: "crl" });
    expect(downloads).toBe(1);
  } finally {
    await close();
  }
});

/** A CRL of `count` entries (serials 0x10_0000 on, one reason code in ten), signed by `issuer` (RSA), written by hand: the generator takes minutes for this many. */
async function handMadeCrl(issuer: Issued, count: number): Promise<Uint8Array> {
  const yymmdd = (at: number) => new Date(at).toISOString().slice(2, 19).replace(/[-T:]/g, "") + "Z";
  const revokedAt = utcTime(yymmdd(Date.now() - 86_400_000));
  const reason = seq(seq(tlv(0x06, Buffer.from([0x55, 0x1d, 0x15])), tlv(0x04, tlv(0x0a, Buffer.from([1])))));
  const entries: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const serial = Buffer.alloc(4);
    serial.writeUInt32BE(0x100000 + i);
    entries.push(seq(tlv(0x02, serial), revokedAt, ...(i % 10 === 0 ? [reason] : [])));
  }
  const tbs = seq(
    tlv(0x02, Buffer.from([1])),
    SHA256_RSA,
    Buffer.from(issuer.cert.subjectName.toArrayBuffer()),
    utcTime(yymmdd(Date.now() - 60_000)),
    utcTime(yymmdd(Date.now() + 86_400_000)),
    seq(...entries),
  );
  const key = await crypto.subtle.importKey("pkcs8", await crypto.subtle.exportKey("pkcs8", issuer.keys.privateKey), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
  const signature = Buffer.from(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, tbs));
  return new Uint8Array(seq(tbs, SHA256_RSA, tlv(0x03, Buffer.from([0]), signature)));
}

test("a CRL of 200,000 entries is read without holding the event loop for the whole list", async () => {
  const rsaCa = await createIntermediateCa(await createRootCa(), { keyType: "rsa" });
  const stallOf = async (count: number, serial: string) => {
    const body = await handMadeCrl(rsaCa, count);
    const path = `/hand-${count}.crl`;
    responder.answer = (request) => (request.path === path ? { body } : { status: 404 });
    const leaf = await createLeaf({ issuer: rsaCa, dnsNames: [`crl-${count}.test`], serial, crlUrls: [`${responder.url}${path}`] });
    const { ask, close } = checkerFor({ timeoutMs: 20_000 });
    try {
      const meter = meterEventLoop(2);
      const started = performance.now();
      const state = await ask(leaf, rsaCa);
      return { state, stall: meter.stop().longestMs, bytes: body.length, elapsed: performance.now() - started };
    } finally {
      await close();
    }
  };
  await stallOf(10, "0a0b0c0c"); // warm-up: the first read compiles what the others reuse
  const honest = await stallOf(10, "0a0b0c0d");
  // The last entry's serial: revoked, reason keyCompromise (one in ten carries it; 199,990 does).
  const large = await stallOf(200_000, (0x100000 + 199_990).toString(16));
  expect(honest.state.status).toBe("good");
  expect(large.bytes).toBeGreaterThan(4_000_000);
  expect(large.state).toMatchObject({ status: "revoked", source: "crl", reason: "keyCompromise" });
  console.log(`longest stall: ${Math.round(large.stall)} ms for ${large.bytes} bytes of CRL, ${Math.round(honest.stall)} ms for a CRL of 10`);
  // Read in slices, the longest stall is a small part of the whole read (read at once, it would be
  // nearly all of it): a third of it, on a machine busy with other work whose preemptions stretch
  // both alike.
  expect(large.stall).toBeLessThan(Math.max(150, 10 * honest.stall, large.elapsed / 3));
}, 60_000);
