/** Where check outcomes come from: real TLS servers, or (in simulations) anything that answers alike. */
import { NetFailure } from "../net/resolver.ts";
import { retrieveChain, type RetrieveOptions } from "../tls/certificate_retrieve.ts";
import { describeChain, parseCertificates } from "../tls/certificate_parse.ts";
import { judgeChain } from "../tls/chain_verify.ts";
import { systemClock, type Clock } from "../base/time.ts";
import type { TrustStore } from "../tls/trust_store.ts";
import type { CheckOutcome } from "./check_apply.ts";
import type { CertificateRecord, ChainProblem } from "../base/records.ts";
import { askAboutChain, LeafRevocation, type RevocationChecker } from "../revocation/mod.ts";
import type { Certificate } from "../tls/x509.ts";

export type KnownCertificate = Pick<CertificateRecord, "fingerprint" | "details" | "problem">;

export interface CertificateSource {
  /** Retrieves and judges the certificate of `domain:port`; `known` lets an unchanged chain skip parsing. */
  inspect(domain: string, port: number, known?: KnownCertificate): Promise<CheckOutcome>;
}

export interface TlsCertificateSourceOptions {
  trust: TrustStore;
  retrieve: RetrieveOptions;
  clock?: Clock;
  /** Asks whether leaves are revoked; absent: every leaf is `not_checked` (CERTKEEPER_REVOCATION=off). */
  revocation?: RevocationChecker | null;
}

export class TlsCertificateSource implements CertificateSource {
  readonly #revocation: LeafRevocation;

  constructor(private readonly options: TlsCertificateSourceOptions) {
    this.#revocation = new LeafRevocation(Boolean(options.revocation));
  }

  async inspect(domain: string, port: number, known?: KnownCertificate): Promise<CheckOutcome> {
    let chain;
    try {
      chain = await retrieveChain(domain, port, this.options.retrieve);
    } catch (error) {
      if (error instanceof NetFailure) return { ok: false, reason: error.reason, message: error.message };
      throw error;
    }
    const now = (this.options.clock ?? systemClock).now();
    // Parsing and path building cost milliseconds of CPU against a sub-millisecond handshake; the
    // same chain to the same domain gets the same answer until an intermediate on its path expires.
    if (known && known.fingerprint === chain.fingerprint && now <= (known.details.pathValidUntil ?? Infinity)) {
      // A current revocation answer is reused as it is: the common re-check asks nobody and the
      // details object stays the stored one, so nothing is rewritten.
      const revocation = await this.#revocation.state({
        previous: known.details.revocation,
        ask: () => this.#ask(parseCertificates(chain.ders), trustedChain(known.problem), chain.stapled, now),
        now,
      });
      const details = revocation === known.details.revocation ? known.details : { ...known.details, revocation };
      return { ok: true, fingerprint: chain.fingerprint, details, problem: known.problem };
    }
    try {
      const certs = parseCertificates(chain.ders);
      const { problem, pathValidUntil } = await judgeChain(certs, domain, this.options.trust, now);
      const described = describeChain(certs);
      const sameLeaf = known && known.details.serialNumber === described.serialNumber && known.details.issuer === described.issuer;
      const revocation = await this.#revocation.state({
        previous: sameLeaf ? known.details.revocation : undefined,
        ask: () => this.#ask(certs, trustedChain(problem), chain.stapled, now),
        now,
      });
      return { ok: true, fingerprint: chain.fingerprint, details: { ...described, pathValidUntil, revocation }, problem };
    } catch (error) {
      return { ok: false, reason: "tls_error", message: `${domain}:${port} sent a certificate that cannot be parsed (${(error as Error).message})` };
    }
  }

  #ask(certs: Certificate[], trusted: boolean, stapled: Uint8Array | undefined, now: number) {
    return askAboutChain(this.options.revocation!, { certs, trusted, stapled, trust: this.options.trust, now });
  }
}

/** A hostname mismatch still leaves the chain trusted: only a trusted chain's leaf is asked about. */
function trustedChain(problem: ChainProblem | null): boolean {
  return problem === null || problem === "hostname_mismatch";
}
