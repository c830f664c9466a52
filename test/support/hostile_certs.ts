/**
 * Certificates a hostile server sends to make certkeeper work: written DER by hand, each signed with
 * random bytes under a key that is only a big odd number with the largest exponent BoringSSL accepts,
 * so that verifying a signature under it costs a full 16384-bit exponentiation before it is refused.
 */
import { randomBytes } from "node:crypto";
import { oid, seq, SHA256_RSA, tlv } from "./forged_certs.ts";

const int = (b: Buffer) => tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
const RSA = seq(oid("2a864886f70d010101"), Buffer.from([5, 0]));
const name = (cn: string) => seq(tlv(0x31, seq(oid("550403"), tlv(0x0c, Buffer.from(cn)))));
const time = (s: string) => tlv(0x18, Buffer.from(s));
const BITS = 16384;

/** An RSA key that is only a big odd number and the largest exponent BoringSSL accepts: costly to verify with. */
export function costlyRsaSpki(): Buffer {
  const n = randomBytes(BITS / 8);
  n[0] = 0xff;
  n[n.length - 1]! |= 1;
  return seq(RSA, tlv(0x03, Buffer.from([0]), seq(int(n), int(Buffer.from("01ffffffff", "hex")))));
}
/** A certificate of `subject` naming `issuer`, with `spki`; with `sans` its DNS names, with `ca` basic constraints CA:true. */
export function hostileCertificate(serial: number, issuer: string, subject: string, spki: Buffer, sans?: string[], ca = false): Buffer {
  const list = [
    ...(sans ? [seq(oid("551d11"), tlv(0x04, seq(...sans.map((s) => tlv(0x82, Buffer.from(s))))))] : []),
    ...(ca ? [seq(oid("551d13"), tlv(0x01, Buffer.from([0xff])), tlv(0x04, seq(tlv(0x01, Buffer.from([0xff])))))] : []),
  ];
  const extensions = list.length > 0 ? tlv(0xa3, seq(...list)) : Buffer.alloc(0);
  const tbs = seq(tlv(0xa0, int(Buffer.from([2]))), int(Buffer.from([serial, 1, 2, 3])), SHA256_RSA, name(issuer), seq(time("20200101000000Z"), time("20991231000000Z")), name(subject), spki, extensions);
  const signature = randomBytes(BITS / 8);
  signature[0] = 0x01; // below any modulus above: verified in full, then refused
  return seq(tbs, SHA256_RSA, tlv(0x03, Buffer.from([0]), signature));
}
export const pem = (der: Buffer) => `-----BEGIN CERTIFICATE-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`;

