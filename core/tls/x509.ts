/**
 * `@peculiar/x509`, loaded the way it must be: after `reflect-metadata`, with the platform's WebCrypto.
 * Everything in core that touches X.509 imports it from here.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { AsnConvert } from "@peculiar/asn1-schema";
import { id_ce_subjectAltName } from "@peculiar/asn1-x509";
import { DerError, readTime, readTlv } from "../base/der.ts";

x509.cryptoProvider.set(globalThis.crypto);

/**
 * An X.509 certificate that also tells its signature algorithm's OID, and reads its validity as
 * OpenSSL does (see {@link validityOf}).
 */
export class Certificate extends x509.X509Certificate {
  #validity: { notBefore: Date; notAfter: Date } | undefined;
  #extensions: x509.Extension[] | undefined;

  /**
   * The extensions, each typed as the library types it but the subject alternative names, left a plain
   * Extension: the library's typed reading of them costs about 20 µs a name (a second for a hostile
   * leaf's thousands), and certificate_parse.ts reads the names from the DER instead.
   */
  override get extensions(): x509.Extension[] {
    this.#extensions ??= (this.asn.tbsCertificate.extensions ?? []).map((extension) => {
      const raw = AsnConvert.serialize(extension);
      return extension.extnID === id_ce_subjectAltName ? new x509.Extension(raw) : x509.ExtensionFactory.create(raw, this.parseOptions);
    });
    return this.#extensions;
  }

  override get notBefore(): Date {
    return this.#read().notBefore;
  }

  override get notAfter(): Date {
    return this.#read().notAfter;
  }

  #read(): { notBefore: Date; notAfter: Date } {
    return (this.#validity ??= validityOf(new Uint8Array(this.rawData)) ?? { notBefore: super.notBefore, notAfter: super.notAfter });
  }

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


/**
 * A certificate's notBefore and notAfter read from its DER: the ASN.1 library reads a UTCTime with an
 * offset from UTC (`300101000000+0100`) as 1899-11-30 and the years 0–99 as the 1900s, which would
 * show such a certificate expired a century ago and alert on it. Null when the bytes are not a
 * certificate's (the library's reading is used then).
 */
function validityOf(der: Uint8Array): { notBefore: Date; notAfter: Date } | null {
  try {
    const certificate = readTlv(der, 0, der.length);
    const tbs = readTlv(der, certificate.valueStart, certificate.end);
    let at = tbs.valueStart;
    const next = () => {
      const element = readTlv(der, at, tbs.end);
      at = element.end;
      return element;
    };
    let element = next();
    if (element.tag === 0xa0) element = next(); // [0] version
    next(); // signature algorithm
    next(); // issuer
    const validity = next();
    if (validity.tag !== 0x30) return null;
    const notBefore = readTlv(der, validity.valueStart, validity.end);
    const notAfter = readTlv(der, notBefore.end, validity.end);
    return { notBefore: new Date(readTime(der, notBefore)), notAfter: new Date(readTime(der, notAfter)) };
  } catch (error) {
    if (error instanceof DerError) return null;
    throw error;
  }
}

export { x509 };
