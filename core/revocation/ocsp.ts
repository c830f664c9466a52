/**
 * OCSP (RFC 6960, with RFC 5019's lightweight profile): the request for one certificate, and the
 * verification of an answer: signed by the issuer or by a responder the issuer delegated
 * (id-kp-OCSPSigning), about this serial of this issuer, and current.
 */
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier, Certificate as AsnCertificate } from "@peculiar/asn1-x509";
import {
  BasicOCSPResponse,
  CertID,
  id_kp_OCSPSigning,
  id_pkix_ocsp_basic,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request,
  TBSRequest,
} from "@peculiar/asn1-ocsp";
import { Certificate, x509 } from "../tls/x509.ts";
import { sameName } from "../tls/mod.ts";
import { DerError, readTlv } from "../base/der.ts";
import { digest, HASH_OIDS, issuerIdentity, serialBytes, serialOf } from "./_issuer_id.ts";
import { signatureVerifies } from "./_signature.ts";
import {
  assertCurrent,
  CLOCK_SKEW_MS,
  reasonName,
  RevocationFailure,
  validUntil,
  type RevocationAnswer,
  type RevocationSource,
} from "./revocation_answer.ts";

const SHA1 = "1.3.14.3.2.26";

/** The DER OCSP request for `leaf` (SHA-1 CertID, as RFC 5019 asks; no nonce, so answers can be cached). */
export function ocspRequest(leaf: Certificate, issuer: Certificate): Uint8Array {
  const id = issuerIdentity(issuer);
  const certId = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: SHA1, parameters: null }),
    issuerNameHash: new OctetString(digest("sha1", id.nameDer)),
    issuerKeyHash: new OctetString(digest("sha1", id.keyBits)),
    serialNumber: new Uint8Array(Buffer.from(serialOf(leaf), "hex")).buffer,
  });
  const request = new OCSPRequest({ tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert: certId })] }) });
  return new Uint8Array(AsnConvert.serialize(request));
}

/**
 * Reads and verifies a DER OCSP response about `leaf`. Throws {@link RevocationFailure} for anything
 * that is not a current, correctly signed answer about exactly this certificate.
 */
/** Certificates an answer may carry: the responder's own and the CAs above it. */
const MAX_CERTIFICATES = 8;

/** How many certificates a BasicOCSPResponse's `certs` holds (RFC 6960 §4.2.1), read from its DER. */
function certificatesCarried(der: Uint8Array): number {
  try {
    const basic = readTlv(der, 0, der.length);
    let at = basic.valueStart;
    for (let index = 0; at < basic.end; index++) {
      const element = readTlv(der, at, basic.end);
      at = element.end;
      if (index < 3 || element.tag !== 0xa0) continue; // tbsResponseData, signatureAlgorithm, signature
      const list = readTlv(der, element.valueStart, element.end);
      let count = 0;
      for (let inner = list.valueStart; inner < list.end; count++) inner = readTlv(der, inner, list.end).end;
      return count;
    }
    return 0;
  } catch (error) {
    if (error instanceof DerError) return 0; // left to the parser, which refuses what is no answer
    throw error;
  }
}

export function verifyOcspResponse(
  der: Uint8Array,
  options: { leaf: Certificate; issuer: Certificate; now: number; source: RevocationSource },
): RevocationAnswer {
  const { leaf, issuer, now } = options;
  let response: OCSPResponse;
  let basic: BasicOCSPResponse;
  try {
    response = AsnConvert.parse(new Uint8Array(der), OCSPResponse);
    if (response.responseStatus !== OCSPResponseStatus.successful) {
      throw new RevocationFailure(`the responder answered "${OCSPResponseStatus[response.responseStatus] ?? response.responseStatus}"`);
    }
    if (!response.responseBytes || response.responseBytes.responseType !== id_pkix_ocsp_basic) {
      throw new RevocationFailure("the answer is not a basic OCSP response");
    }
    const bytes = new Uint8Array(response.responseBytes.response.buffer);
    // Counted before the answer is parsed whole: parsing costs about a millisecond a certificate, and
    // a responder (which the monitored party may name) can send hundreds in 64 KB at every ask.
    const carried = certificatesCarried(bytes);
    if (carried > MAX_CERTIFICATES) throw new RevocationFailure(`the answer carries ${carried} certificates (a responder sends its own and few more)`);
    basic = AsnConvert.parse(bytes, BasicOCSPResponse);
  } catch (error) {
    if (error instanceof RevocationFailure) throw error;
    throw new RevocationFailure("the answer is not a DER OCSP response");
  }

  const signer = findSigner(basic, issuer, now);
  if (!signer) throw new RevocationFailure("the answer is not signed by the issuer or a responder it delegated");
  if (!basic.tbsResponseDataRaw || !signatureVerifies(basic.tbsResponseDataRaw, basic.signature, basic.signatureAlgorithm.algorithm, signer)) {
    throw new RevocationFailure("the answer's signature does not verify");
  }

  const id = issuerIdentity(issuer);
  const serial = serialOf(leaf);
  const single = basic.tbsResponseData.responses.find((candidate) => {
    const hash = HASH_OIDS[candidate.certID.hashAlgorithm.algorithm];
    if (!hash) return false;
    return (
      serialBytes(candidate.certID.serialNumber) === serial &&
      digest(hash, id.nameDer).equals(Buffer.from(candidate.certID.issuerNameHash.buffer)) &&
      digest(hash, id.keyBits).equals(Buffer.from(candidate.certID.issuerKeyHash.buffer))
    );
  });
  if (!single) throw new RevocationFailure("the answer is about another certificate");

  const thisUpdate = single.thisUpdate.getTime();
  const nextUpdate = single.nextUpdate?.getTime();
  assertCurrent("answer", thisUpdate, nextUpdate, now);

  const status = single.certStatus;
  const base = { source: options.source, checkedAt: now, validUntil: validUntil(now, nextUpdate, thisUpdate) };
  if (status.revoked) {
    return {
      ...base,
      status: "revoked",
      revokedAt: status.revoked.revocationTime.getTime(),
      reason: reasonName(status.revoked.revocationReason?.reason),
    };
  }
  if (status.good !== undefined) return { ...base, status: "good", revokedAt: null, reason: null };
  return { ...base, status: "unknown", revokedAt: null, reason: null };
}

/** The issuer itself, or a current certificate of the answer issued by the issuer for OCSP signing. */
function findSigner(basic: BasicOCSPResponse, issuer: Certificate, now: number): Certificate | null {
  const responder = basic.tbsResponseData.responderID;
  const matches = (cert: Certificate) => {
    if (responder.byKey) {
      const keyBits = issuerIdentity(cert).keyBits;
      return digest("sha1", keyBits).equals(Buffer.from(responder.byKey.buffer));
    }
    if (responder.byName) return sameName(new x509.Name(AsnConvert.serialize(responder.byName)).toString(), cert.subject);
    return false;
  };
  if (matches(issuer)) return issuer;
  for (const asn of basic.certs ?? []) {
    let cert: Certificate;
    try {
      cert = new Certificate(AsnConvert.serialize(asn as AsnCertificate));
    } catch {
      continue;
    }
    if (!matches(cert)) continue;
    const parsed = AsnConvert.parse(cert.rawData, AsnCertificate);
    if (!sameName(cert.issuer, issuer.subject) || !parsed.tbsCertificateRaw) continue;
    if (!signatureVerifies(parsed.tbsCertificateRaw, parsed.signatureValue, cert.signatureOid, issuer)) continue;
    if (now < cert.notBefore.getTime() || now > cert.notAfter.getTime()) continue;
    const usage = cert.getExtension(x509.ExtendedKeyUsageExtension);
    if (!usage?.usages.includes(id_kp_OCSPSigning as x509.ExtendedKeyUsageType)) continue;
    return cert;
  }
  return null;
}
