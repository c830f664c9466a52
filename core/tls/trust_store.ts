/** The roots certkeeper trusts: the platform's bundled roots plus CERTKEEPER_EXTRA_CA_FILE. */
import { readFileSync } from "node:fs";
import * as tls from "node:tls";
import { Certificate } from "./x509.ts";

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
/** Parsing goes on for at most this long before it lets the event loop run. */
const SLICE_MS = 4;

export class TrustStore {
  #pems: readonly string[] | (() => readonly string[]);
  #index: Promise<Map<string, Certificate[]>> | undefined;
  #fingerprints: Promise<Set<string>> | undefined;

  /**
   * `pems`: PEM certificates, or a function giving them; listed and parsed on first use (or ready()),
   * so a process that never checks pays nothing.
   */
  constructor(pems: readonly string[] | (() => readonly string[])) {
    this.#pems = pems;
  }

  /** The system roots, plus every certificate in `extraCaFile` when given. */
  static system(extraCaFile?: string): TrustStore {
    const extra = extraCaFile ? readFileSync(extraCaFile, "utf8").match(PEM_BLOCK) ?? [] : [];
    if (extraCaFile && extra.length === 0) throw new Error(`${extraCaFile} holds no PEM certificate`);
    // The platform's roots are read when first needed: reading them costs a CLI command ~50 ms.
    return new TrustStore(() => [...tls.rootCertificates, ...extra]);
  }

  /** The PEM certificates, for TLS clients (HTTPS deliveries) that need the same trust. */
  get pems(): readonly string[] {
    if (typeof this.#pems === "function") this.#pems = this.#pems();
    return this.#pems;
  }

  /**
   * Parses the anchors now, a slice at a time: the first check needs them all, and the ~150 system
   * roots took 0.4–1.7 s of the event loop's time at once (the parser still cold), holding every
   * request and delivery that long. The server starts this as it starts.
   */
  ready(): Promise<void> {
    return this.#anchors().then(() => {});
  }

  /** Anchors whose subject is `issuerName` (a DN string as `@peculiar/x509` formats it). */
  async anchorsNamed(issuerName: string): Promise<Certificate[]> {
    return (await this.#anchors()).get(issuerName) ?? [];
  }

  /** True when a certificate with this DER is itself an anchor. */
  async isAnchor(cert: Certificate): Promise<boolean> {
    if ((await this.anchorsNamed(cert.subject)).length === 0) return false;
    this.#fingerprints ??= this.#anchors().then(
      async (index) => new Set(await Promise.all([...index.values()].flat().map(async (anchor) => hex(await anchor.getThumbprint())))),
    );
    return (await this.#fingerprints).has(hex(await cert.getThumbprint()));
  }

  #anchors(): Promise<Map<string, Certificate[]>> {
    return (this.#index ??= (async () => {
      const bySubject = new Map<string, Certificate[]>();
      let sliceStart = performance.now();
      for (const pem of this.pems) {
        if (performance.now() - sliceStart >= SLICE_MS) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          sliceStart = performance.now();
        }
        let cert: Certificate;
        try {
          cert = new Certificate(pem);
        } catch {
          continue; // one unreadable bundled root must not disable trust for all others
        }
        const list = bySubject.get(cert.subject) ?? [];
        list.push(cert);
        bySubject.set(cert.subject, list);
      }
      return bySubject;
    })());
  }
}

function hex(buffer: ArrayBuffer): string {
  return Buffer.from(buffer).toString("hex");
}
