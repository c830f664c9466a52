/** The roots certkeeper trusts: the platform's bundled roots plus CERTKEEPER_EXTRA_CA_FILE. */
import { readFileSync } from "node:fs";
import * as tls from "node:tls";
import { createHash, X509Certificate as PlatformCertificate } from "node:crypto";
import { Certificate } from "./x509.ts";
import { dnKey, sameName } from "./name_match.ts";

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
/** Parsing every root (see #bySubjectString) goes on for at most this long before it lets the event loop run. */
const SLICE_MS = 4;

/**
 * The anchors are found by subject. Parsing all ~150 system roots with `@peculiar/x509` took about
 * 200 ms of CPU (more with its parser still cold), paid by every `certkeeper check` and every server
 * start; the platform's own X.509 parser reads their subjects in about 6 ms. So the roots are indexed
 * by the subject as the platform renders it, and a root is parsed with `@peculiar/x509` only when a
 * chain first names it (then kept). A certificate is looked up by its issuer as the same parser
 * renders it, so both sides of the comparison come from one renderer; names are compared without
 * regard to case or runs of spaces (name_match.ts), as RFC 5280 compares them. What the platform's parser
 * cannot read (a root or a certificate of a chain) is compared by `@peculiar/x509`'s subject string,
 * as before. The names only choose which roots to try: a path is trusted when the root's key verifies
 * the signature (chain_verify.ts), and a certificate is an anchor when its DER is a root's.
 */
export class TrustStore {
  #pems: readonly string[] | (() => readonly string[]);
  /** PEMs by subject (the platform's rendering), and the PEMs the platform could not read. */
  #index: { bySubject: Map<string, string[]>; unread: string[] } | undefined;
  /** Each root parsed with `@peculiar/x509`, once it was needed (null: unreadable). */
  readonly #parsed = new Map<string, Certificate | null>();
  /** A certificate's subject and issuer as the platform renders them (null: it cannot read it). */
  readonly #names = new WeakMap<Certificate, { subject: string; issuer: string } | null>();
  /** Every root parsed and indexed by @peculiar/x509's subject string, once a certificate needed it. */
  #parsedIndex: Promise<Map<string, Certificate[]>> | undefined;
  #id: string | undefined;

  /**
   * `pems`: PEM certificates, or a function giving them; listed and indexed on first use (or ready()),
   * so a process that never checks pays nothing.
   */
  constructor(pems: readonly string[] | (() => readonly string[])) {
    this.#pems = pems;
  }

  /** The system roots, plus every certificate in `extraCaFile` when given. */
  static system(extraCaFile?: string): TrustStore {
    const extra = extraCaFile ? readFileSync(extraCaFile, "utf8").match(PEM_BLOCK) ?? [] : [];
    if (extraCaFile && extra.length === 0) throw new Error(`${extraCaFile} holds no PEM certificate`);
    // Each one read now: a root cut off or garbled would otherwise trust nothing, silently, and every
    // chain it should anchor would be judged untrusted. One the platform's parser cannot read is read
    // by the X.509 library, as anchors are (below): unreadable only when neither reads it.
    for (const [index, pem] of extra.entries()) {
      try {
        new PlatformCertificate(pem);
      } catch (error) {
        try {
          new Certificate(pem);
        } catch {
          throw new Error(`${extraCaFile}'s certificate number ${index + 1} (of ${extra.length}) cannot be read (${(error as Error).message})`);
        }
      }
    }
    // The platform's roots are read when first needed: reading them costs a CLI command ~50 ms.
    return new TrustStore(() => [...tls.rootCertificates, ...extra]);
  }

  /** The PEM certificates, for TLS clients (HTTPS deliveries) that need the same trust. */
  get pems(): readonly string[] {
    if (typeof this.#pems === "function") this.#pems = this.#pems();
    return this.#pems;
  }

  /** Names these roots: the same PEMs give the same id (the first 16 hex digits of their SHA-256). */
  get id(): string {
    this.#id ??= createHash("sha256").update(this.pems.join("\n")).digest("hex").slice(0, 16);
    return this.#id;
  }

  /** Indexes the anchors now (a few milliseconds) rather than at the first check. */
  async ready(): Promise<void> {
    this.#roots();
  }

  /** Anchors whose subject is `cert`'s issuer. */
  anchorsFor(cert: Certificate): Promise<Certificate[]> {
    return this.#named(cert, "issuer");
  }

  /** True when `cert` (its DER, byte for byte) is itself an anchor. */
  async isAnchor(cert: Certificate): Promise<boolean> {
    const der = Buffer.from(cert.rawData);
    return (await this.#named(cert, "subject")).some((anchor) => der.equals(Buffer.from(anchor.rawData)));
  }

  /** Anchors whose subject is `cert`'s subject or issuer. */
  async #named(cert: Certificate, which: "subject" | "issuer"): Promise<Certificate[]> {
    const { bySubject, unread } = this.#roots();
    const wanted = which === "subject" ? cert.subject : cert.issuer;
    const names = this.#platformNames(cert);
    // Not readable by the platform (a hostile server can send such a certificate): @peculiar/x509's
    // string is compared with every root's, parsed once, a slice at a time.
    if (!names) return (await this.#bySubjectString()).get(dnKey(wanted)) ?? [];
    const found: Certificate[] = [];
    for (const pem of bySubject.get(dnKey(names[which])) ?? []) {
      const anchor = this.#parse(pem);
      if (anchor) found.push(anchor);
    }
    for (const pem of unread) {
      const anchor = this.#parse(pem);
      if (anchor && sameName(anchor.subject, wanted)) found.push(anchor);
    }
    return found;
  }

  /**
   * Every root, parsed with `@peculiar/x509` and indexed by its subject string: for certificates the
   * platform cannot read. Parsed a slice at a time: all of them take hundreds of milliseconds, which
   * must not hold the event loop at once.
   */
  #bySubjectString(): Promise<Map<string, Certificate[]>> {
    return (this.#parsedIndex ??= (async () => {
      const index = new Map<string, Certificate[]>();
      let sliceStart = performance.now();
      for (const pem of this.pems) {
        if (performance.now() - sliceStart >= SLICE_MS) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          sliceStart = performance.now();
        }
        const anchor = this.#parse(pem);
        if (!anchor) continue;
        addTo(index, dnKey(anchor.subject), anchor);
      }
      return index;
    })());
  }

  #roots(): { bySubject: Map<string, string[]>; unread: string[] } {
    if (this.#index) return this.#index;
    const bySubject = new Map<string, string[]>();
    const unread: string[] = [];
    for (const pem of this.pems) {
      let subject: string;
      try {
        subject = new PlatformCertificate(pem).subject;
      } catch {
        unread.push(pem);
        continue;
      }
      addTo(bySubject, dnKey(subject), pem);
    }
    return (this.#index = { bySubject, unread });
  }

  #parse(pem: string): Certificate | null {
    let anchor = this.#parsed.get(pem);
    if (anchor === undefined) {
      try {
        anchor = new Certificate(pem);
      } catch {
        anchor = null; // one unreadable bundled root must not disable trust for all others
      }
      this.#parsed.set(pem, anchor);
    }
    return anchor;
  }

  #platformNames(cert: Certificate): { subject: string; issuer: string } | null {
    let names = this.#names.get(cert);
    if (names === undefined) {
      try {
        const platform = new PlatformCertificate(new Uint8Array(cert.rawData));
        names = { subject: platform.subject, issuer: platform.issuer };
      } catch {
        names = null;
      }
      this.#names.set(cert, names);
    }
    return names;
  }
}

function addTo<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
