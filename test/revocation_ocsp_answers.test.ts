/**
 * OCSP answers (CONTRACT §14; RFC 6960 §4.2.1, §4.2.2.1, §4.2.2.2, §4.2.2.3; RFC 5280 §5.3.1) that a
 * one-line change of core/revocation let through unnoticed: an answer whose nextUpdate has just
 * passed, one without nextUpdate made 8 days ago, a forged signature over an Ed25519 issuer, a
 * delegated responder identified by name, a delegated answer carrying 8 certificates (the most
 * allowed), answers signed with SHA-1/SHA-384 RSA, P-384 ECDSA and Ed25519, an answer about several
 * certificates, a CertID hashed with SHA-256 or with an algorithm certkeeper does not know, a
 * response type other than basic, and the reason of a revocation that names none or an unused code.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import { createHash, createPrivateKey, sign } from "node:crypto";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier, Certificate as AsnCertificate, CRLReason, Name } from "@peculiar/asn1-x509";
import {
  BasicOCSPResponse,
  CertID,
  CertStatus,
  id_pkix_ocsp_basic,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  RevokedInfo,
  SingleResponse,
} from "@peculiar/asn1-ocsp";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { ocspAnswer, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";

const DAY = 86_400_000;
const OCSP_SIGNING = "1.3.6.1.5.5.7.3.9";
const SHA1 = "1.3.14.3.2.26";
const SHA256 = "2.16.840.1.101.3.4.2.1";
const MD5 = "1.2.840.113549.2.5";
const SHA256_WITH_RSA = "1.2.840.113549.1.1.11";
const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";

let root: Issued;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=OCSP Root, O=certkeeper tests" });
  ca = await createIntermediateCa(root, { name: "CN=OCSP CA, O=certkeeper tests" });
  responder = await startResponder();
});
afterAll(() => responder.close());

function tbsParts(issued: Issued) {
  const asn = AsnConvert.parse(issued.cert.rawData, AsnCertificate);
  return {
    subject: asn.tbsCertificate.subject,
    subjectDer: Buffer.from(AsnConvert.serialize(asn.tbsCertificate.subject)),
    keyBits: Buffer.from(asn.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey),
    serial: Buffer.from(asn.tbsCertificate.serialNumber),
  };
}

interface Built {
  leaf: Issued;
  issuer: Issued;
  /** Who signs; default the issuer. */
  signer?: Issued;
  status: { good: true } | { revoked: { at: Date; reason?: number } };
  /** The CertID's hash algorithm OID (default SHA-1); its digests use `hashName`. */
  hashOid?: string;
  hashName?: string;
  /** The serial of another certificate. */
  serial?: Buffer;
  /** ResponderID by the signer's name instead of its key hash. */
  byName?: boolean;
  /** The signature algorithm named, and a signature of garbage instead of a real one. */
  forgedSignature?: { algorithm: string };
  responseType?: string;
  /** Signed with this hash (null: the algorithm hashes itself, Ed25519) under this algorithm OID. */
  signedWith?: { hash: string | null; oid: string };
  /** Answers about these other serials, good, before the one about the leaf. */
  othersFirst?: Buffer[];
}

/** A DER OCSP response built field by field, as a responder (honest or not) may send it. */
function built(options: Built): Uint8Array {
  const signer = options.signer ?? options.issuer;
  const issuer = tbsParts(options.issuer);
  const hashName = options.hashName ?? "sha1";
  const certID = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: options.hashOid ?? SHA1, parameters: null }),
    issuerNameHash: new OctetString(createHash(hashName).update(issuer.subjectDer).digest()),
    issuerKeyHash: new OctetString(createHash(hashName).update(issuer.keyBits).digest()),
    serialNumber: new Uint8Array(options.serial ?? tbsParts(options.leaf).serial).buffer,
  });
  const status = options.status;
  const certStatus =
    "good" in status
      ? new CertStatus({ good: null })
      : new CertStatus({
          revoked: new RevokedInfo({
            revocationTime: status.revoked.at,
            revocationReason: status.revoked.reason === undefined ? undefined : new CRLReason(status.revoked.reason),
          }),
        });
  const thisUpdate = new Date(Date.now() - 60_000);
  const signerParts = tbsParts(signer);
  const data = new ResponseData({
    responderID: options.byName
      ? new ResponderID({ byName: AsnConvert.parse(signerParts.subjectDer, Name) })
      : new ResponderID({ byKey: new OctetString(createHash("sha1").update(signerParts.keyBits).digest()) }),
    producedAt: new Date(),
    responses: [
      ...(options.othersFirst ?? []).map(
        (serial) =>
          new SingleResponse({
            certID: new CertID({ ...certID, serialNumber: new Uint8Array(serial).buffer }),
            certStatus: new CertStatus({ good: null }),
            thisUpdate,
            nextUpdate: new Date(thisUpdate.getTime() + DAY),
          }),
      ),
      new SingleResponse({ certID, certStatus, thisUpdate, nextUpdate: new Date(thisUpdate.getTime() + DAY) }),
    ],
  });
  const tbs = Buffer.from(AsnConvert.serialize(data));
  let algorithm: AlgorithmIdentifier;
  let signature: ArrayBuffer;
  if (options.forgedSignature) {
    algorithm = new AlgorithmIdentifier({ algorithm: options.forgedSignature.algorithm, parameters: null });
    signature = new Uint8Array(256).fill(0x5a).buffer;
  } else if (options.signedWith) {
    const ed = options.signedWith.hash === null;
    algorithm = new AlgorithmIdentifier({ algorithm: options.signedWith.oid, ...(ed || options.signedWith.oid.startsWith("1.2.840.10045") ? {} : { parameters: null }) });
    signature = new Uint8Array(sign(options.signedWith.hash, tbs, createPrivateKey(signer.keyPem))).buffer;
  } else {
    const ec = signer.keys.privateKey.algorithm.name === "ECDSA";
    algorithm = ec ? new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }) : new AlgorithmIdentifier({ algorithm: SHA256_WITH_RSA, parameters: null });
    signature = new Uint8Array(sign("sha256", tbs, createPrivateKey(signer.keyPem))).buffer;
  }
  const basic = new BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: algorithm,
    signature,
    certs: signer === options.issuer ? undefined : [AsnConvert.parse(signer.cert.rawData, AsnCertificate)],
  });
  const response = new OCSPResponse({
    responseStatus: OCSPResponseStatus.successful,
    responseBytes: new ResponseBytes({ responseType: options.responseType ?? id_pkix_ocsp_basic, response: new OctetString(AsnConvert.serialize(basic)) }),
  });
  return new Uint8Array(AsnConvert.serialize(response));
}

async function askOnce(leaf: Issued, issuer: Issued, body: Uint8Array, now?: number) {
  responder.answer = () => ({ body });
  const tools = checkerFor();
  try {
    return { state: await tools.ask(leaf, issuer, now === undefined ? {} : { now }), failures: tools.failures.join("\n") };
  } finally {
    await tools.close();
  }
}

const leafFor = (name: string, issuer = ca) => createLeaf({ issuer, dnsNames: [`${name}.test`], ocspUrls: [`${responder.url}/${name}`] });

describe("an answer is current only within its own times", () => {
  test("an answer whose nextUpdate passed two minutes ago is out of date: no answer, however fresh its thisUpdate", async () => {
    const leaf = await leafFor("next-update-just-passed");
    const now = Date.now();
    const body = ocspAnswer({
      leaf,
      issuer: ca,
      status: { revoked: { at: new Date(now - DAY), reason: 1 } },
      thisUpdate: new Date(now - 3_600_000),
      nextUpdate: new Date(now - 120_000),
    });
    const { state, failures } = await askOnce(leaf, ca, body, now);
    expect(state.status).toBe("unavailable");
    expect(failures).toMatch(/nextUpdate has passed/);
  });

  test("an answer without nextUpdate made 8 days ago is refused (more than 7 days), one made 6 days ago is used", async () => {
    const leaf = await leafFor("no-next-update-8-days");
    const now = Date.now();
    const old = ocspAnswer({ leaf, issuer: ca, status: { good: true }, thisUpdate: new Date(now - 8 * DAY), nextUpdate: null });
    const stale = await askOnce(leaf, ca, old, now);
    expect(stale.state.status).toBe("unavailable");
    expect(stale.failures).toMatch(/no nextUpdate and was made more than 7 days ago/);
    const recent = ocspAnswer({ leaf, issuer: ca, status: { good: true }, thisUpdate: new Date(now - 6 * DAY), nextUpdate: null });
    expect((await askOnce(leaf, ca, recent, now)).state).toMatchObject({ status: "good", source: "ocsp" });
  });
});

describe("the answer's signature", () => {
  test("an Ed25519 CA: a forged answer naming an RSA signature algorithm with a signature of garbage is not believed", async () => {
    const edCa = await createIntermediateCa(root, { name: "CN=Ed25519 CA, O=certkeeper tests", keyType: "ed25519" });
    const leaf = await leafFor("ed25519-forged", edCa);
    const forged = built({ leaf, issuer: edCa, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } }, forgedSignature: { algorithm: SHA256_WITH_RSA } });
    const { state, failures } = await askOnce(leaf, edCa, forged);
    expect(state.status).toBe("unavailable");
    expect(failures).toMatch(/signature does not verify/);
  });

  test("a delegated responder identified by name (ResponderID byName, as OpenSSL's responder writes it) is believed", async () => {
    const leaf = await leafFor("by-name-delegate");
    const delegate = await createLeaf({ issuer: ca, subject: "CN=OCSP Responder By Name", dnsNames: [], extendedKeyUsages: [OCSP_SIGNING], freshKey: true });
    const body = built({ leaf, issuer: ca, signer: delegate, byName: true, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } });
    const { state } = await askOnce(leaf, ca, body);
    expect(state).toMatchObject({ status: "revoked", source: "ocsp", reason: "keyCompromise" });
  });
});

describe("certificates carried", () => {
  test("a delegated responder's answer carrying its own certificate and seven more (8 in all) is believed", async () => {
    const leaf = await leafFor("eight-certificates");
    const delegate = await createLeaf({ issuer: ca, subject: "CN=OCSP Responder With Chain", dnsNames: [], extendedKeyUsages: [OCSP_SIGNING], freshKey: true });
    const body = ocspAnswer({
      leaf,
      issuer: ca,
      signer: delegate,
      status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } },
      extraCertificates: [ca, root, ca, root, ca, root, ca],
    });
    expect((await askOnce(leaf, ca, body)).state).toMatchObject({ status: "revoked", source: "ocsp", reason: "keyCompromise" });
  });
});

describe("signature algorithms a CA signs answers with", () => {
  const cases: Array<[string, "rsa" | "p384" | "ed25519", string | null, string]> = [
    ["sha1WithRSAEncryption", "rsa", "sha1", "1.2.840.113549.1.1.5"],
    ["sha384WithRSAEncryption", "rsa", "sha384", "1.2.840.113549.1.1.12"],
    ["ecdsa-with-SHA384 (a P-384 CA)", "p384", "sha384", "1.2.840.10045.4.3.3"],
    ["Ed25519", "ed25519", null, "1.3.101.112"],
  ];
  test.each(cases)("an answer signed with %s by the issuer is believed", async (name, keyType, hash, oid) => {
    const issuer = await createIntermediateCa(root, { name: `CN=${keyType} OCSP CA, O=certkeeper tests`, keyType });
    const leaf = await leafFor(`algorithm-${oid}`, issuer);
    const body = built({ leaf, issuer, signedWith: { hash, oid }, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } });
    const { state, failures } = await askOnce(leaf, issuer, body);
    expect({ name, failures, state: state.status }).toEqual({ name, failures: "", state: "revoked" });
  });
});

describe("answers about several certificates", () => {
  test("the answer about the leaf is found among several (RFC 6960 §4.2.1: responses is a SEQUENCE), not only as the first", async () => {
    const leaf = await leafFor("several-responses");
    const others = [Buffer.from("7c0102030405060708", "hex"), Buffer.from("7c0102030405060709", "hex")];
    const body = built({ leaf, issuer: ca, othersFirst: others, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } });
    expect((await askOnce(leaf, ca, body)).state).toMatchObject({ status: "revoked", source: "ocsp", reason: "keyCompromise" });
  });
});

describe("which certificate the answer is about", () => {
  test("a CertID hashed with SHA-256 (RFC 6960 allows any hash) identifies the certificate as well as SHA-1", async () => {
    const leaf = await leafFor("sha256-certid");
    const body = built({ leaf, issuer: ca, hashOid: SHA256, hashName: "sha256", status: { revoked: { at: new Date(Date.now() - DAY), reason: 4 } } });
    const { state } = await askOnce(leaf, ca, body);
    expect(state).toMatchObject({ status: "revoked", source: "ocsp", reason: "superseded" });
  });

  test("a CertID hashed with an algorithm certkeeper does not read (MD5), about another serial, is no answer about this leaf", async () => {
    const leaf = await leafFor("md5-certid");
    const other = await createLeaf({ issuer: ca, dnsNames: ["md5-other.test"] });
    const body = built({ leaf, issuer: ca, hashOid: MD5, hashName: "md5", serial: tbsParts(other).serial, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } });
    const { state, failures } = await askOnce(leaf, ca, body);
    expect(state.status).toBe("unavailable");
    expect(failures).toMatch(/about another certificate/);
  });

  test("a response whose type is not id-pkix-ocsp-basic is not read as a basic response, even when its bytes are one", async () => {
    const leaf = await leafFor("not-basic");
    const body = built({ leaf, issuer: ca, responseType: "1.3.6.1.5.5.7.48.1.99", status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } });
    const { state, failures } = await askOnce(leaf, ca, body);
    expect(state.status).toBe("unavailable");
    expect(failures).toMatch(/not a basic OCSP response/);
  });
});

describe("the reason of a revocation", () => {
  test("a revocation without a reason code has reason null (the CA gave none)", async () => {
    const leaf = await leafFor("no-reason");
    const body = ocspAnswer({ leaf, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY) } } });
    expect((await askOnce(leaf, ca, body)).state).toMatchObject({ status: "revoked", reason: null });
  });

  test("the unused reason code 7 is reported as unspecified, never as no reason", async () => {
    const leaf = await leafFor("reason-7");
    const body = built({ leaf, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY), reason: 7 } } });
    expect((await askOnce(leaf, ca, body)).state).toMatchObject({ status: "revoked", reason: "unspecified" });
  });
});
