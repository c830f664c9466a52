/** Where check outcomes come from: real TLS servers, or (in simulations) anything that answers alike. */
import { NetFailure } from "../net/resolver.ts";
import { retrieveChain, type RetrieveOptions } from "../tls/certificate_retrieve.ts";
import { describeChain, parseCertificates } from "../tls/certificate_parse.ts";
import { judgeChain } from "../tls/chain_verify.ts";
import { systemClock, type Clock } from "../base/time.ts";
import type { TrustStore } from "../tls/trust_store.ts";
import type { CheckOutcome } from "./check_apply.ts";
import type { CertificateRecord } from "../base/records.ts";

export type KnownCertificate = Pick<CertificateRecord, "fingerprint" | "details" | "problem">;

export interface CertificateSource {
  /** Retrieves and judges the certificate of `domain:port`; `known` lets an unchanged chain skip parsing. */
  inspect(domain: string, port: number, known?: KnownCertificate): Promise<CheckOutcome>;
}

export class TlsCertificateSource implements CertificateSource {
  constructor(private readonly options: { trust: TrustStore; retrieve: RetrieveOptions; clock?: Clock }) {}

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
      return { ok: true, fingerprint: chain.fingerprint, details: known.details, problem: known.problem };
    }
    try {
      const certs = parseCertificates(chain.ders);
      const { problem, pathValidUntil } = await judgeChain(certs, domain, this.options.trust, now);
      return { ok: true, fingerprint: chain.fingerprint, details: { ...describeChain(certs), pathValidUntil }, problem };
    } catch (error) {
      return { ok: false, reason: "tls_error", message: `${domain}:${port} sent a certificate that cannot be parsed (${(error as Error).message})` };
    }
  }
}
