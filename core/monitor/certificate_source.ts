/** Where check outcomes come from: real TLS servers, or (in simulations) anything that answers alike. */
import { NetFailure } from "../net/resolver.ts";
import type { Connections } from "../net/connection_budget.ts";
import type { RetrieveOptions } from "../tls/certificate_retrieve.ts";
import { retrieveEndpoints, type EndpointConnector, type EndpointRetrieval } from "../tls/endpoint_retrieve.ts";
import { describeChain, parseCertificates } from "../tls/certificate_parse.ts";
import { judgeChain } from "../tls/chain_verify.ts";
import { systemClock, type Clock } from "../base/time.ts";
import { Turns } from "../base/turns.ts";
import type { TrustStore } from "../tls/trust_store.ts";
import type { CheckOutcome } from "./check_apply.ts";
import { isTrustedChain, type CertificateDetails, type CertificateRecord, type ChainProblem, type RenewalInfo } from "../base/records.ts";
import { ariCertId, type AriClient } from "../ari/mod.ts";
import { askAboutChain, LeafRevocation, NOT_CHECKED, type RevocationChecker } from "../revocation/mod.ts";
import type { Certificate } from "../tls/x509.ts";
import { outcomeOfEndpoints, type EndpointOutcome } from "./endpoints_outcome.ts";
import type { DnsCheck, DnsInspector } from "../dns/mod.ts";

export type KnownCertificate = Pick<CertificateRecord, "fingerprint" | "details" | "problem"> & Partial<Pick<CertificateRecord, "endpoints" | "dns">>;

/** What to check: the domain (SNI, host-name verification), its port, how to speak, where to connect. */
export type CheckTarget = Pick<CertificateRecord, "domain" | "port"> & Partial<Pick<CertificateRecord, "protocol" | "connectTo" | "mailDomain">>;

export interface InspectOptions {
  /** Connections to take before connecting: background checks share one budget (CHECK_CONCURRENCY). */
  connections?: Connections;
  /** Aborts a check still waiting for connections (it throws CheckCancelled). */
  cancel?: AbortSignal;
}

export interface CertificateSource {
  /** Retrieves and judges the certificate of every address of `target`; `known` lets unchanged chains skip parsing. */
  inspect(target: CheckTarget, known?: KnownCertificate, options?: InspectOptions): Promise<CheckOutcome>;
}

export interface TlsCertificateSourceOptions {
  trust: TrustStore;
  retrieve: RetrieveOptions;
  /** Opens the connections and reads the chains; default: on this thread. */
  connector?: EndpointConnector;
  clock?: Clock;
  /** Asks whether leaves are revoked; absent: every leaf is `not_checked` (CERTKEEPER_REVOCATION=off). */
  revocation?: RevocationChecker | null;
  /** Asks CAs for their renewal information (RFC 9773); absent: none is asked (CERTKEEPER_ARI=off). */
  ari?: AriClient | null;
  /** Reads what DNS says about the certificate (CAA, DANE, MTA-STS); absent: nothing is looked up. */
  dns?: DnsInspector | null;
}

type Verdict = { details: CertificateDetails; problem: ChainProblem | null } | string;

/** A chain as parsed, and what it says whatever the domain, the moment or the trust: the same for every name it serves. */
interface ParsedChain {
  certs: Certificate[];
  described: CertificateDetails;
}

/**
 * Chains parsed lately, kept by their fingerprint. Many names often serve one chain (a wildcard or a
 * certificate of many names): a burst of adds or an import under it parses it once, not once a name.
 */
const RECENT_CHAINS = 32;

/**
 * Which rules judged a stored chain, kept with the roots' id: a release that judges chains otherwise
 * (names compared as RFC 5280 compares them, critical extensions, constraint bounds, validity read
 * from the DER) moves it, so that every chain judged before is judged again once, at its next check,
 * rather than kept until it changes.
 */
const CHAIN_RULES = "r2";

export class TlsCertificateSource implements CertificateSource {
  readonly #revocation: LeafRevocation;
  readonly #turns = new Turns();
  /** By chain fingerprint, least recently used first (see RECENT_CHAINS). */
  readonly #parsed = new Map<string, Promise<ParsedChain>>();

  constructor(private readonly options: TlsCertificateSourceOptions) {
    this.#revocation = new LeafRevocation(Boolean(options.revocation));
  }

  async inspect(target: CheckTarget, known?: KnownCertificate, options?: InspectOptions): Promise<CheckOutcome> {
    // DNS answers are asked for at once, beside the handshakes; their verdicts need the chains served.
    const dns = this.options.dns?.begin(target, known?.dns, known?.details) ?? null;
    try {
      const { ders, ...outcome } = await this.#inspect(target, known, options);
      return dns && outcome.ok ? await withDns(outcome, ders, dns) : outcome;
    } finally {
      dns?.cancel();
    }
  }

  /** The outcome, and the DER chain each answering address sent (for DANE). */
  async #inspect(target: CheckTarget, known?: KnownCertificate, options?: InspectOptions): Promise<CheckOutcome & { ders?: Map<string, Uint8Array[]> }> {
    const { domain, port } = target;
    let retrievals: EndpointRetrieval[];
    try {
      retrievals = await retrieveEndpoints(domain, port, {
        ...this.options.retrieve,
        protocol: target.protocol,
        connectTo: target.connectTo,
        connections: options?.connections,
        cancel: options?.cancel,
        connector: this.options.connector,
      });
    } catch (error) {
      if (error instanceof NetFailure) return { ok: false, reason: error.reason, message: error.message, endpoints: [], at: (this.options.clock ?? systemClock).now() };
      throw error;
    }
    const now = (this.options.clock ?? systemClock).now();
    // Several addresses usually serve one chain: judge each distinct chain once.
    const judged = new Map<string, Promise<Verdict>>();
    const endpoints = await Promise.all(
      retrievals.map(async (retrieval): Promise<EndpointOutcome> => {
        if (!retrieval.ok) {
          return { address: retrieval.address, fingerprint: null, details: null, problem: null, failure: retrieval.reason, tls: null, message: retrieval.message };
        }
        const fingerprint = `${retrieval.chain.fingerprint}|${retrieval.tls.protocol}|${retrieval.tls.cipher}`;
        let verdict = judged.get(fingerprint);
        if (!verdict) {
          verdict = this.#judge(retrieval, fingerprint, known, domain, now);
          judged.set(fingerprint, verdict);
        }
        const result = await verdict;
        if (typeof result === "string") {
          return { address: retrieval.address, fingerprint: null, details: null, problem: null, failure: "tls_error", tls: null, message: result };
        }
        return { address: retrieval.address, fingerprint, ...result, failure: null, tls: retrieval.tls };
      }),
    );
    const ders = new Map(retrievals.flatMap((retrieval) => (retrieval.ok ? [[retrieval.address, retrieval.chain.ders] as const] : [])));
    return { ...outcomeOfEndpoints(endpoints), ders, at: now };
  }

  async #judge(retrieval: Extract<EndpointRetrieval, { ok: true }>, fingerprint: string, known: KnownCertificate | undefined, domain: string, now: number): Promise<Verdict> {
    const { chain } = retrieval;
    // Parsing and path building cost milliseconds of CPU against a sub-millisecond handshake; the
    // same chain to the same domain gets the same answer until an intermediate on its path expires.
    const prior =
      (known?.fingerprint === fingerprint ? known : undefined) ??
      known?.endpoints?.find((endpoint) => endpoint.fingerprint === fingerprint && endpoint.details);
    // Details stored before ARI lack the leaf's certID, and those judged against other roots (or
    // stored before roots were named), or by rules since changed, may be judged otherwise now: parse
    // them once more.
    const trust = `${this.options.trust.id}/${CHAIN_RULES}`;
    if (prior?.details && now <= (prior.details.pathValidUntil ?? Infinity) && prior.details.ariCertId !== undefined && prior.details.trust === trust) {
      // The stored details object itself when it is the certificate-level one: nothing to rewrite.
      const base =
        known && prior.details.serialNumber === known.details.serialNumber && prior.details.notAfter === known.details.notAfter ? known.details : prior.details;
      // A current revocation answer is reused as it is: the common re-check asks nobody. An untrusted
      // chain (this very one) has nothing to ask about; a trusted one is parsed as a new chain is, among
      // the recent ones and a few milliseconds a turn (a server that sends many chains, each unanswered,
      // made every check parse them all in one turn).
      const trusted = isTrustedChain(prior.problem);
      const [revocation, renewalInfo] = await Promise.all([
        this.#revocation.state({
          previous: base.revocation,
          ask: async () => (trusted ? this.#ask((await this.#parse(chain)).certs, true, chain.stapled, now) : NOT_CHECKED),
          now,
        }),
        this.#renewalInfo(base, base.renewalInfo, trusted, now),
      ]);
      const same = revocation === base.revocation && renewalInfo === (base.renewalInfo ?? null);
      return { details: same ? base : { ...base, revocation, renewalInfo }, problem: prior.problem };
    }
    try {
      const { certs, described } = await this.#parse(chain);
      const { problem, pathValidUntil, chainExpiry } = await judgeChain(certs, domain, this.options.trust, now);
      const sameLeaf = [known?.details, ...(known?.endpoints ?? []).map((endpoint) => endpoint.details)].find(
        (details) => details && details.serialNumber === described.serialNumber && details.issuer === described.issuer,
      );
      const [revocation, renewalInfo] = await Promise.all([
        this.#revocation.state({
          previous: sameLeaf?.revocation,
          ask: () => this.#ask(certs, isTrustedChain(problem), chain.stapled, now),
          now,
        }),
        this.#renewalInfo(described, sameLeaf?.renewalInfo, isTrustedChain(problem), now),
      ]);
      return { details: { ...described, pathValidUntil, trust, chainExpiry, revocation, renewalInfo }, problem };
    } catch (error) {
      return `${domain} (${retrieval.address}) sent a certificate that cannot be parsed (${(error as Error).message})`;
    }
  }

  /** `chain` parsed and described, once while it is among the recent ones; the CPU of a new chain, one chain a turn (see Turns). */
  #parse({ ders, fingerprint }: { ders: Uint8Array[]; fingerprint: string }): Promise<ParsedChain> {
    const kept = this.#parsed.get(fingerprint);
    // Kept: moved to the most recently used end.
    if (kept) this.#parsed.delete(fingerprint);
    else if (this.#parsed.size >= RECENT_CHAINS) this.#parsed.delete(this.#parsed.keys().next().value!);
    const parsed =
      kept ??
      this.#turns.take(() => {
        const certs = parseCertificates(ders);
        for (const cert of certs) void cert.extensions; // parsed once, on first read: the path building reads them
        return { certs, described: { ...describeChain(certs), ariCertId: ariCertId(certs[0]!) } };
      });
    // One that cannot be parsed is not kept: the next check says so again, and tries again.
    if (!kept) parsed.catch(() => this.#parsed.get(fingerprint) === parsed && this.#parsed.delete(fingerprint));
    this.#parsed.set(fingerprint, parsed);
    return parsed;
  }

  /**
   * What the leaf's CA says about its renewal (CONTRACT §19): nothing is asked about a leaf without a
   * certID, an expired one, or with ARI off (null: the deadline follows the lifetime).
   */
  /**
   * The CA's renewal information for a leaf whose chain leads to a trusted root, as revocation is
   * asked: the CA's answer is shared by every organization serving that certificate, and an untrusted
   * leaf (anyone can forge an issuer name, key identifier and serial) must not move it or read it.
   */
  async #renewalInfo(leaf: CertificateDetails, previous: RenewalInfo | null | undefined, trusted: boolean, now: number): Promise<RenewalInfo | null> {
    const ari = this.options.ari;
    if (!ari || !leaf.ariCertId || !trusted) return null;
    if (now > leaf.notAfter) return previous ?? null;
    const { ariCertId: certId, issuerNames = [], notBefore, notAfter } = leaf;
    return ari.renewalInfo({ certId, issuerNames, notBefore, notAfter }, previous, now);
  }

  #ask(certs: Certificate[], trusted: boolean, stapled: Uint8Array | undefined, now: number) {
    return askAboutChain(this.options.revocation!, { certs, trusted, stapled, trust: this.options.trust, now });
  }
}

/** The outcome with what DNS says: the findings, and each answering endpoint's DANE verdict. */
async function withDns(rest: Extract<CheckOutcome, { ok: true }>, ders: Map<string, Uint8Array[]> | undefined, dns: DnsCheck): Promise<CheckOutcome> {
  const endpoints = rest.endpoints ?? [];
  const served = endpoints.map((endpoint) => ({
    address: endpoint.address,
    details: endpoint.details,
    ders: (endpoint.details && ders?.get(endpoint.address)) || null,
    chain: endpoint.fingerprint,
  }));
  const { findings, dane, caaAnswered } = await dns.finish({ details: rest.details, endpoints: served });
  return {
    ...rest,
    dns: findings,
    caaAnswered,
    endpoints: dane.size === 0 ? endpoints : endpoints.map((endpoint) => (dane.has(endpoint.address) ? { ...endpoint, dane: dane.get(endpoint.address)! } : endpoint)),
  };
}

/** A hostname mismatch still leaves the chain trusted: only a trusted chain's leaf is asked about. */

