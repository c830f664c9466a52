/**
 * A local public-key infrastructure for tests: a root CA, an intermediate CA and leaf certificates of
 * any shape (RSA or ECDSA, any validity window, any serial, any SAN list), generated at test time.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(globalThis.crypto);

/** rsa: RSA-2048; ec: ECDSA P-256; rsa1024 (weak); p384: ECDSA P-384; ed25519. */
export type KeyType = "rsa" | "ec" | "rsa1024" | "p384" | "ed25519";

const RSA = {
  name: "RSASSA-PKCS1-v1_5",
  hash: "SHA-256",
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
};
const EC = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const RSA1024 = { ...RSA, modulusLength: 1024 };
const P384 = { name: "ECDSA", namedCurve: "P-384", hash: "SHA-384" };
const ED25519 = { name: "Ed25519" };
const ALGORITHMS: Record<KeyType, Algorithm> = { rsa: RSA, ec: EC, rsa1024: RSA1024, p384: P384, ed25519: ED25519 };

const DAY = 24 * 60 * 60 * 1000;

/** A certificate with the private key that goes with it, both as PEM. */
export interface Issued {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
  certPem: string;
  keyPem: string;
}

const keyCache = new Map<KeyType, Promise<CryptoKeyPair>>();

/** Key generation (RSA above all) is slow, so leaves of one test run share a key pair per type. */
function sharedKeys(type: KeyType): Promise<CryptoKeyPair> {
  let keys = keyCache.get(type);
  if (!keys) {
    keys = generateKeys(type);
    keyCache.set(type, keys);
  }
  return keys;
}

export function generateKeys(type: KeyType): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(ALGORITHMS[type] as RsaHashedKeyGenParams, true, ["sign", "verify"]) as Promise<CryptoKeyPair>;
}

/** The signing algorithm for a key pair; `hash` overrides the hash (SHA-1 for a weak signature). */
function algorithmOf(keys: CryptoKeyPair, hash?: string) {
  const algorithm = keys.privateKey.algorithm as EcKeyAlgorithm;
  const base = algorithm.name === "Ed25519" ? ED25519 : algorithm.name === "ECDSA" ? (algorithm.namedCurve === "P-384" ? P384 : EC) : RSA;
  return hash ? { ...base, hash } : base;
}

async function keyToPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey("pkcs8", key)).toString("base64");
  return `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
}

async function finish(cert: x509.X509Certificate, keys: CryptoKeyPair): Promise<Issued> {
  return { cert, keys, certPem: cert.toString("pem") + "\n", keyPem: await keyToPem(keys.privateKey) };
}

function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  // Positive, and never a zero first byte: 00 80… (1 in 256) is written by @peculiar/x509 as 80…, a
  // serial that OpenSSL's CA index (as the OpenSSL responder test writes it) then never matches.
  bytes[0] = bytes[0]! & 0x7f || 1;
  return Buffer.from(bytes).toString("hex");
}

export interface CaOptions {
  name?: string;
  keyType?: KeyType;
  notBefore?: Date;
  notAfter?: Date;
  /** Key usage flags of an intermediate; default keyCertSign and cRLSign. */
  keyUsages?: number;
}

/** A self-signed root CA. */
export async function createRootCa(options: CaOptions = {}): Promise<Issued> {
  const keys = await generateKeys(options.keyType ?? "ec");
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: options.name ?? "CN=certkeeper Test Root CA, O=certkeeper tests",
    notBefore: options.notBefore ?? new Date(Date.now() - 365 * DAY),
    notAfter: options.notAfter ?? new Date(Date.now() + 3650 * DAY),
    keys,
    signingAlgorithm: algorithmOf(keys),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return finish(cert, keys);
}

/** An intermediate CA signed by `parent`. */
export async function createIntermediateCa(parent: Issued, options: CaOptions = {}): Promise<Issued> {
  const keys = await generateKeys(options.keyType ?? "ec");
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: options.name ?? "CN=certkeeper Test Intermediate CA, O=certkeeper tests",
    issuer: parent.cert.subject,
    notBefore: options.notBefore ?? new Date(Date.now() - 300 * DAY),
    notAfter: options.notAfter ?? new Date(Date.now() + 1825 * DAY),
    publicKey: keys.publicKey,
    signingKey: parent.keys.privateKey,
    signingAlgorithm: algorithmOf(parent.keys),
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(options.keyUsages ?? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(parent.keys.publicKey),
    ],
  });
  return finish(cert, keys);
}

export interface LeafOptions {
  /** Subject DN; defaults to `CN=<first DNS name>`. */
  subject?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  keyType?: KeyType;
  /** Hexadecimal serial; random when omitted. */
  serial?: string;
  notBefore?: Date;
  notAfter?: Date;
  /** Days from now to notAfter; ignored when notAfter is given. */
  daysLeft?: number;
  /** The signing CA; omitted: the leaf signs itself. */
  issuer?: Issued;
  /** Use a fresh key instead of the shared one (for renewals that change the key). */
  freshKey?: boolean;
  /** OCSP responder URLs (authorityInfoAccess) and CRL distribution points the leaf names. */
  ocspUrls?: string[];
  crlUrls?: string[];
  /** Extended key usages instead of serverAuth (an OCSP signing certificate: "1.3.6.1.5.5.7.3.9"). */
  extendedKeyUsages?: string[];
  /** The hash of the issuer's signature, e.g. "SHA-1"; default SHA-256 (SHA-384 for P-384). */
  signatureHash?: string;
}

/** WebCrypto binds an RSA key to one hash: the same private key, bound to `hash`, for signing. */
async function withHash(keys: CryptoKeyPair, hash: string | undefined): Promise<CryptoKeyPair> {
  if (!hash || keys.privateKey.algorithm.name !== "RSASSA-PKCS1-v1_5") return keys;
  const algorithm = { name: "RSASSA-PKCS1-v1_5", hash };
  const privateKey = await crypto.subtle.importKey("pkcs8", await crypto.subtle.exportKey("pkcs8", keys.privateKey), algorithm, true, ["sign"]);
  const publicKey = await crypto.subtle.importKey("spki", await crypto.subtle.exportKey("spki", keys.publicKey), algorithm, true, ["verify"]);
  return { privateKey, publicKey };
}

/** A server certificate, signed by `options.issuer` or by itself. */
export async function createLeaf(options: LeafOptions = {}): Promise<Issued> {
  const keyType = options.keyType ?? "ec";
  const keys = options.freshKey ? await generateKeys(keyType) : await sharedKeys(keyType);
  const dnsNames = options.dnsNames ?? ["localhost.test"];
  const subject = options.subject ?? `CN=${dnsNames[0]}`;
  const notAfter = options.notAfter ?? new Date(Date.now() + (options.daysLeft ?? 90) * DAY);
  const notBefore = options.notBefore ?? new Date(Math.min(Date.now(), notAfter.getTime()) - 30 * DAY);
  const names: x509.JsonGeneralName[] = [
    ...dnsNames.map((value) => ({ type: "dns" as const, value })),
    ...(options.ipAddresses ?? []).map((value) => ({ type: "ip" as const, value })),
  ];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(options.extendedKeyUsages ?? [x509.ExtendedKeyUsage.serverAuth]),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  if (options.ocspUrls?.length) {
    extensions.push(new x509.AuthorityInfoAccessExtension({ ocsp: options.ocspUrls.map((value) => new x509.GeneralName("url", value)) }));
  }
  if (options.crlUrls?.length) extensions.push(new x509.CRLDistributionPointsExtension(options.crlUrls));
  const common = {
    serialNumber: options.serial ?? randomSerial(),
    notBefore,
    notAfter,
    extensions,
  };
  const issuer = options.issuer;
  const cert = issuer
    ? await x509.X509CertificateGenerator.create({
        ...common,
        subject,
        issuer: issuer.cert.subject,
        publicKey: keys.publicKey,
        signingKey: (await withHash(issuer.keys, options.signatureHash)).privateKey,
        signingAlgorithm: algorithmOf(issuer.keys, options.signatureHash),
        extensions: [...extensions, await x509.AuthorityKeyIdentifierExtension.create(issuer.keys.publicKey)],
      })
    : await x509.X509CertificateGenerator.createSelfSigned({
        ...common,
        name: subject,
        keys: await withHash(keys, options.signatureHash),
        signingAlgorithm: algorithmOf(keys, options.signatureHash),
      });
  return finish(cert, keys);
}

/** The PEM a TLS server presents: the leaf, then the intermediates it sends. */
export function chainPem(leaf: Issued, ...intermediates: Issued[]): string {
  return [leaf, ...intermediates].map((issued) => issued.certPem).join("");
}

export { DAY };
