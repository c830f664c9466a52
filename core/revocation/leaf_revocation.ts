/**
 * The `revocation` state of a retrieved leaf, as a check keeps it with the certificate's details:
 * reused while its answer is current (so a re-check of an unchanged certificate asks nobody and
 * writes nothing), final once revoked (a serial is announced once; a hold is asked about again, for a
 * CA may release it), and `not_checked` when revocation
 * is off. What to ask is the caller's ({@link askAboutChain} for real chains; a simulation asks its own).
 */
import type { RevocationState } from "../base/records.ts";
import type { Certificate } from "../tls/x509.ts";
import type { TrustStore } from "../tls/trust_store.ts";
import { sameName, signedBy } from "../tls/mod.ts";
import { NOT_CHECKED, type RevocationChecker } from "./revocation_check.ts";

export interface LeafRevocationQuestion {
  /** The revocation state stored with the same leaf (same serial and issuer), if any. */
  previous: RevocationState | undefined;
  /** Asks the sources (or the cache); called only when `previous` cannot be reused. */
  ask: () => Promise<RevocationState>;
  now: number;
}

export class LeafRevocation {
  /** `enabled` false: CERTKEEPER_REVOCATION=off. */
  constructor(private readonly enabled: boolean) {}

  /** The state to keep; the very `previous` object when nothing needs to change. */
  async state({ previous, ask, now }: LeafRevocationQuestion): Promise<RevocationState> {
    if (!this.enabled) return previous?.status === "not_checked" && previous.validUntil === null ? previous : NOT_CHECKED;
    if (previous && (isFinal(previous) || (previous.validUntil !== null && now < previous.validUntil))) return previous;
    try {
      const state = await ask();
      // Still nothing to ask (a chain not trusted): the very `previous`, so an unchanged certificate writes nothing.
      if (state.status === "not_checked" && previous?.status === "not_checked" && previous.validUntil === state.validUntil) return previous;
      return state;
    } catch {
      // Whatever went wrong (a cache that cannot be read, a certificate the parser chokes on), the
      // check itself goes on: soft-fail, as browsers do.
      return { status: "unavailable", source: null, checkedAt: now, revokedAt: null, reason: null, validUntil: null };
    }
  }
}

/**
 * A revocation is for good, but for a hold (RFC 5280 §5.3.1, certificateHold): a CA may release it,
 * so a held leaf is asked about again once its answer's validity ends.
 */
function isFinal(state: RevocationState): boolean {
  return state.status === "revoked" && state.reason !== "certificateHold";
}

/** Asks about the leaf of a chain sent (leaf first): its issuer is one sent with it, else a trusted root. */
export async function askAboutChain(
  checker: RevocationChecker,
  chain: { certs: Certificate[]; trusted: boolean; stapled?: Uint8Array | null; trust: TrustStore; now: number },
): Promise<RevocationState> {
  const leaf = chain.certs[0]!;
  const issuer = chain.trusted ? await findIssuer(leaf, chain.certs.slice(1), chain.trust) : null;
  const state = await checker.check({ leaf, issuer, trusted: chain.trusted, stapled: chain.stapled, now: chain.now });
  // A trusted leaf that names no source stays so: it is not parsed again at every check. A chain not
  // trusted is asked about again at the next check: the server may send its missing intermediate by
  // then, and the leaf must not keep `not_checked` until it expires. Turning revocation off and on is
  // still seen: off keeps validUntil null.
  if (state.status !== "not_checked") return state;
  return chain.trusted ? { ...NOT_CHECKED, validUntil: leaf.notAfter.getTime() } : NOT_CHECKED;
}

async function findIssuer(leaf: Certificate, sent: Certificate[], trust: TrustStore): Promise<Certificate | null> {
  for (const candidate of [...sent.filter((cert) => sameName(cert.subject, leaf.issuer)), ...(await trust.anchorsFor(leaf))]) {
    if (await signedBy(leaf, candidate)) return candidate;
  }
  return null;
}
