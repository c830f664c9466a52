/**
 * Certificates written byte by byte (any version, serial, time encoding, name and
 * extension), signed for real by an issuer of the test PKI (RSA, sha256WithRSAEncryption), so that a
 * hostile-but-well-signed chain can be served by a real TLS server.
 */
import type { Issued } from "./pki.ts";

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const b: number[] = [];
  for (let r = n; r > 0; r = Math.floor(r / 256)) b.unshift(r % 256);
  return Buffer.from([0x80 | b.length, ...b]);
}
export const tlv = (tag: number, ...parts: Buffer[]) => {
  const v = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), len(v.length), v]);
};
export const seq = (...p: Buffer[]) => tlv(0x30, ...p);
export const oid = (hex: string) => tlv(0x06, Buffer.from(hex, "hex"));
/** An INTEGER with exactly these content octets. */
export const intRaw = (b: Buffer) => tlv(0x02, b);
export const utcTime = (s: string) => tlv(0x17, Buffer.from(s));
export const generalizedTime = (s: string) => tlv(0x18, Buffer.from(s));
export const SHA256_RSA = seq(oid("2a864886f70d01010b"), Buffer.from([5, 0]));
/** A Name of one RDN per [oid-hex, value] pair (UTF8String). */
export const dn = (...attrs: Array<[string, string]>) => seq(...attrs.map(([o, v]) => tlv(0x31, seq(oid(o), tlv(0x0c, Buffer.from(v))))));
export const CN = "550403";
export const O = "55040a";
export const ext = (oidHex: string, value: Buffer, critical = false) =>
  seq(oid(oidHex), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
export const sanExt = (...names: Buffer[]) => ext("551d11", seq(...names));
export const dnsName = (s: string) => tlv(0x82, Buffer.from(s));
export const ipName = (b: Buffer) => tlv(0x87, b);
export const basicConstraints = (ca: boolean) => ext("551d13", seq(...(ca ? [tlv(0x01, Buffer.from([0xff]))] : [])), true);
export const serverAuthEku = () => ext("551d25", seq(oid("2b06010505070301")));

export interface ForgeOptions {
  issuer: Issued;
  /** Content octets of the serial INTEGER. */
  serial?: Buffer;
  /** 0 = v1 (version field omitted), 2 = v3. */
  version?: 0 | 2;
  notBefore: Buffer;
  notAfter: Buffer;
  subject: Buffer;
  extensions?: Buffer[];
  /** The AlgorithmIdentifier written as the signature algorithm (TBS and outer); default sha256WithRSAEncryption. The signature is always RSA SHA-256. */
  signatureAlgorithm?: Buffer;
  /** The issuer Name written in the certificate; default the issuer certificate's subject, byte for byte. */
  issuerName?: Buffer;
}

export interface Forged {
  der: Buffer;
  certPem: string;
  keyPem: string;
}

let leafKeys: Promise<CryptoKeyPair> | undefined;

export async function forge(o: ForgeOptions): Promise<Forged> {
  leafKeys ??= crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]) as Promise<CryptoKeyPair>;
  const keys = await leafKeys;
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", keys.publicKey));
  const issuerName = o.issuerName ?? Buffer.from(o.issuer.cert.subjectName.toArrayBuffer());
  const version = o.version ?? 2;
  const exts = o.extensions ?? [];
  const tbs = seq(
    ...(version === 0 ? [] : [tlv(0xa0, intRaw(Buffer.from([version])))]),
    intRaw(o.serial ?? Buffer.from([0x11, 0x22, 0x33])),
    o.signatureAlgorithm ?? SHA256_RSA,
    issuerName,
    seq(o.notBefore, o.notAfter),
    o.subject,
    spki,
    ...(exts.length > 0 && version !== 0 ? [tlv(0xa3, seq(...exts))] : []),
  );
  const signingKey = await crypto.subtle.importKey(
    "pkcs8",
    await crypto.subtle.exportKey("pkcs8", o.issuer.keys.privateKey),
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signature = Buffer.from(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", signingKey, tbs));
  const der = seq(tbs, o.signatureAlgorithm ?? SHA256_RSA, tlv(0x03, Buffer.from([0]), signature));
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  return {
    der,
    certPem: `-----BEGIN CERTIFICATE-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`,
    keyPem: `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`,
  };
}
