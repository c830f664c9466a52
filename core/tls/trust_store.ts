/** The roots certkeeper trusts: the platform's bundled roots plus CERTKEEPER_EXTRA_CA_FILE. */
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { Certificate } from "./x509.ts";

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

export class TrustStore {
  #pems: string[];
  #bySubject: Map<string, Certificate[]> | undefined;
  #fingerprints: Set<string> | undefined;

  /** `pems`: PEM certificates; parsed on first use, so a process that never checks pays nothing. */
  constructor(pems: string[]) {
    this.#pems = pems;
  }

  /** The system roots, plus every certificate in `extraCaFile` when given. */
  static system(extraCaFile?: string): TrustStore {
    const extra = extraCaFile ? readFileSync(extraCaFile, "utf8").match(PEM_BLOCK) ?? [] : [];
    if (extraCaFile && extra.length === 0) throw new Error(`${extraCaFile} holds no PEM certificate`);
    return new TrustStore([...rootCertificates, ...extra]);
  }

  /** The PEM certificates, for TLS clients (HTTPS deliveries) that need the same trust. */
  get pems(): readonly string[] {
    return this.#pems;
  }

  /** Anchors whose subject is `issuerName` (a DN string as `@peculiar/x509` formats it). */
  anchorsNamed(issuerName: string): Certificate[] {
    return this.#index().get(issuerName) ?? [];
  }

  /** True when a certificate with this DER is itself an anchor. */
  async isAnchor(cert: Certificate): Promise<boolean> {
    if (this.anchorsNamed(cert.subject).length === 0) return false;
    this.#fingerprints ??= new Set(
      await Promise.all([...this.#index().values()].flat().map(async (anchor) => hex(await anchor.getThumbprint()))),
    );
    return this.#fingerprints.has(hex(await cert.getThumbprint()));
  }

  #index(): Map<string, Certificate[]> {
    if (!this.#bySubject) {
      this.#bySubject = new Map();
      for (const pem of this.#pems) {
        let cert: Certificate;
        try {
          cert = new Certificate(pem);
        } catch {
          continue; // one unreadable bundled root must not disable trust for all others
        }
        const list = this.#bySubject.get(cert.subject) ?? [];
        list.push(cert);
        this.#bySubject.set(cert.subject, list);
      }
    }
    return this.#bySubject;
  }
}

function hex(buffer: ArrayBuffer): string {
  return Buffer.from(buffer).toString("hex");
}
