/**
 * The `revocation` state of a retrieved leaf, as a check keeps it with the certificate's details:
 * reused while its answer is current (so a re-check of an unchanged certificate asks nobody and
 * writes nothing), sticky once revoked (revocation is final: a serial is announced once), and
 * `not_checked` when revocation is off, the chain is not trusted or the leaf names no source.
 */
import type { RevocationState } from "../base/records.ts";
import type { Certificate } from "../tls/x509.ts";
import type { TrustStore } from "../tls/trust_store.ts";
import { NOT_CHECKED, type RevocationChecker } from "./revocation_check.ts";

export interface LeafRevocationQuestion {
  /** The revocation state stored with the same leaf (same serial and issuer), if any. */
  previous: RevocationState | undefined;
  /** Parses the chain sent, leaf first; called only when the sources must be asked. */
  certificates: () => Certificate[];
  /** Whether the chain leads to a trusted root (hostname aside). */
  trusted: boolean;
  stapled?: Uint8Array | null;
  now: number;
}

export class LeafRevocation {
  /** `checker` null: CERTKEEPER_REVOCATION=off. */
  constructor(
    private readonly checker: RevocationChecker | null,
    private readonly trust: TrustStore,
  ) {}

  /** The state to keep; the very `previous` object when nothing needs to change. */
  async state(question: LeafRevocationQuestion): Promise<RevocationState> {
    const { previous, now } = question;
    if (!this.checker) return previous?.status === "not_checked" && previous.validUntil === null ? previous : NOT_CHECKED;
    if (previous && (previous.status === "revoked" || (previous.validUntil !== null && now < previous.validUntil))) return previous;
    const certs = question.certificates();
    const leaf = certs[0]!;
    let state: RevocationState;
    try {
      const issuer = question.trusted ? await findIssuer(leaf, certs.slice(1), this.trust) : null;
      state = await this.checker.check({ leaf, issuer, trusted: question.trusted, stapled: question.stapled, now });
    } catch {
      // Whatever went wrong (a cache that cannot be read, a certificate the parser chokes on), the
      // check itself goes on: soft-fail, as browsers do.
      return { status: "unavailable", source: null, checkedAt: now, revokedAt: null, reason: null, validUntil: null };
    }
    // Nothing to ask (no source named, chain not trusted) stays so for this chain: do not re-parse it
    // at every check. Revocation being turned on or off changes validUntil's null-ness, and is seen.
    return state.status === "not_checked" ? { ...NOT_CHECKED, validUntil: leaf.notAfter.getTime() } : state;
  }
}

/** The certificate that signed `leaf`: one it was sent with, else a trusted root. */
async function findIssuer(leaf: Certificate, sent: Certificate[], trust: TrustStore): Promise<Certificate | null> {
  for (const candidate of [...sent.filter((cert) => cert.subject === leaf.issuer), ...trust.anchorsNamed(leaf.issuer)]) {
    try {
      if (await leaf.verify({ publicKey: candidate.publicKey, signatureOnly: true })) return candidate;
    } catch {
      // an algorithm WebCrypto cannot verify: try the next candidate
    }
  }
  return null;
}
