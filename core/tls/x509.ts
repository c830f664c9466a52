/**
 * `@peculiar/x509`, loaded the way it must be: after `reflect-metadata`, with the platform's WebCrypto.
 * Everything in core that touches X.509 imports it from here.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(globalThis.crypto);

/** An X.509 certificate that also tells its signature algorithm's OID. */
export class Certificate extends x509.X509Certificate {
  get signatureOid(): string {
    return this.asn.signatureAlgorithm.algorithm;
  }

  /** The serial number's DER content octets, exactly as encoded (a leading 0x00 kept). */
  get serialNumberOctets(): Uint8Array {
    return new Uint8Array(this.asn.tbsCertificate.serialNumber);
  }

  /** The SubjectPublicKeyInfo as parsed ASN.1: algorithm OID, parameters and key bits. */
  get subjectPublicKeyInfo() {
    return this.asn.tbsCertificate.subjectPublicKeyInfo;
  }
}

export { x509 };
