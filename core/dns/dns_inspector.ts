/**
 * What DNS says about a certificate at each check (CONTRACT §22): CAA for every certificate, DANE
 * and MTA-STS for `smtp` ones. The lookups start with the check and run beside its handshakes; their
 * verdicts are drawn once the served chains are known. A lookup that fails leaves its part as the last
 * conclusive answer left it: DNS failures never change a status, raise an event or flap a warning.
 *
 * @example
 * const dns = new DnsInspector({ client, systemResolvers: false, timeoutMs: 10_000, identities });
 * const check = dns.begin({ domain: "mx1.example.com", port: 25, protocol: "smtp" }, record.dns);
 * // … retrieve the chains …
 * const { findings, dane } = await check!.finish({ details, endpoints });
 */
import type { CaaIdentity } from "../config/dns_settings.ts";
import type { CertificateDetails, DaneVerdict, DnsFindings, MtaStsPolicy, Protocol } from "../base/records.ts";
import { systemClock, type Clock } from "../base/time.ts";
import { nextTurn } from "../base/turns.ts";
import type { Logger } from "../base/log.ts";
import type { Deadline } from "../net/deadline.ts";
import type { HttpFetcher } from "../net/http_fetch.ts";
import { matchesHostname } from "../tls/chain_verify.ts";
import { defaultMailDomain } from "../certificates/domain_name.ts";
import { caaIssuerNames } from "../renewal/mod.ts";
import { DnsFailure, type DnsClient } from "./dns_client.ts";
import { caaClimbStarts, issuerCaaDomain, judgeCaa, relevantCaaSet, type CaaMemo, type CaaSet } from "./caa.ts";
import { daneVerdict, lookupTlsa, SignatureBudget, type TlsaFinding } from "./dane.ts";
import { fetchStsPolicy, lookupStsRecord, mxMatches, type StsRecord } from "./mta_sts.ts";

/**
 * Top-level domains reserved by RFC 6761 and RFC 2606: never delegated in the public DNS, so the
 * system's resolvers are not asked about names under them (the answer would be NXDOMAIN at best, and
 * the question a leak). A resolver named in CERTKEEPER_DNS_SERVERS is asked about them like any name.
 */
const SPECIAL_USE = new Set(["test", "example", "invalid", "localhost"]);

export interface DnsInspectorOptions {
  /** Who asks the resolvers; null: no lookups (CERTKEEPER_DNS_SERVERS=off, or no resolver known). */
  client: DnsClient | null;
  /** The resolvers are the system's (names under the special-use domains are then not asked about). */
  systemResolvers: boolean;
  /** Reads MTA-STS policies (private-address rule, CERTKEEPER_EXTRA_CA_FILE trusted); absent: MTA-STS is not judged. */
  fetcher?: HttpFetcher;
  /** All lookups of one check share this limit; a policy fetch has its own. */
  timeoutMs: number;
  /** Configured pairs first, then the built-in ones. */
  identities: readonly CaaIdentity[];
  clock?: Clock;
  logger?: Logger;
}

export interface DnsTarget {
  domain: string;
  port: number;
  protocol?: Protocol;
  mailDomain?: string | null;
}

/** What one address served, as the verdicts need it. */
export interface ServedEndpoint {
  address: string;
  /** The chain's DER certificates, leaf first; null when the address gave none. */
  ders: readonly Uint8Array[] | null;
  /** What tells its chain from another address's (the retrieval's fingerprint): one verdict a chain. */
  chain: string | null;
  details: CertificateDetails | null;
}

export interface DnsConclusion {
  /** The previous findings object itself when nothing changed (so the store can skip rewriting it). */
  findings: DnsFindings;
  /** Each answering address's DANE verdict (`smtp`), null when unknown; empty for other protocols. */
  dane: Map<string, DaneVerdict | null>;
  /** The CAA verdict was drawn from answers of this check (not kept from before a failure): only such a verdict is announced. */
  caaAnswered: boolean;
}


/** The lookups of one check, started; {@link finish} draws the verdicts, {@link cancel} drops them. */
export interface DnsCheck {
  finish(served: { details: CertificateDetails; endpoints: readonly ServedEndpoint[] }): Promise<DnsConclusion>;
  cancel(): void;
}

type MtaStsHeld = Omit<NonNullable<DnsFindings["mtaSts"]>, "mismatch">;

export class DnsInspector {
  readonly #clock: Clock;

  constructor(private readonly options: DnsInspectorOptions) {
    this.#clock = options.clock ?? systemClock;
  }

  /** Whether any lookup is made at all. */
  get enabled(): boolean {
    return this.options.client !== null;
  }

  /**
   * Starts the lookups for `target`; null when none are made (lookups off, or a special-use name and
   * the system's resolvers). `hint`: the details last retrieved, to start a wildcard's climb early.
   */
  begin(target: DnsTarget, previous?: DnsFindings | null, hint?: CertificateDetails): DnsCheck | null {
    const { client } = this.options;
    if (!client || this.#skipped(target.domain)) return null;
    const limit = timeLimit(this.options.timeoutMs);
    const memo: CaaMemo = new Map();
    const climbs = new Map<string, Promise<CaaSet>>();
    const climb = (from: string) => {
      let pending = climbs.get(from);
      if (!pending) {
        pending = relevantCaaSet(client, from, limit, memo);
        pending.catch(() => {});
        climbs.set(from, pending);
      }
      return pending;
    };
    for (const from of caaClimbStarts(target.domain, hint?.subjectAlternativeNames ?? [target.domain])) climb(from);
    const smtp = target.protocol === "smtp";
    const tlsa = smtp ? settled(lookupTlsa(client, target.domain, target.port, limit)) : null;
    const mailDomain = target.mailDomain ?? defaultMailDomain(target.domain);
    const mtaSts = smtp && this.options.fetcher && !this.#skipped(mailDomain) ? settled(this.#mtaSts(client, mailDomain, previous?.mtaSts, limit)) : null;
    return {
      finish: async (served) => {
        try {
          const findings: DnsFindings = {};
          const caaAnswered = await this.#caa(findings, target.domain, served.details, climb, previous);
          const dane = new Map<string, DaneVerdict | null>();
          if (tlsa) {
            const tlsaFinding = this.#kept("TLSA", target.domain, await tlsa, previous?.tlsa);
            if (tlsaFinding) findings.tlsa = tlsaFinding;
            // One verdict per distinct chain, each with its own signature budget (an honest pool of
            // sixteen nodes, each with its own leaf, needs a few checks each) and in a turn of its own,
            // so that a host of many addresses does not hold the event loop for all.
            const byChain = new Map<string, DaneVerdict>();
            for (const endpoint of served.endpoints) {
              if (!endpoint.ders || !endpoint.details) continue;
              if (!tlsaFinding) {
                dane.set(endpoint.address, null);
                continue;
              }
              const chain = endpoint.chain ?? endpoint.address;
              let verdict = byChain.get(chain);
              if (!verdict) {
                if (byChain.size > 0) await nextTurn();
                verdict = judgeDane(tlsaFinding, target.domain, endpoint, new SignatureBudget());
                byChain.set(chain, verdict);
              }
              dane.set(endpoint.address, verdict);
            }
          }
          if (mtaSts) {
            // A failed lookup keeps the policy held for this mail domain only (not one the certificate named before).
            const before = previous?.mtaSts?.mailDomain === mailDomain ? { ...previous.mtaSts } : undefined;
            const held = this.#kept("MTA-STS", mailDomain, await mtaSts, before);
            if (held) findings.mtaSts = { ...held, mismatch: mtaStsMismatch(held.policy, target.domain, served.endpoints) };
          }
          return { findings: previous && sameFindings(previous, findings) ? previous : findings, dane, caaAnswered };
        } finally {
          // A climb begun for a leaf no longer served is not waited for.
          limit.clear();
          limit.abort();
        }
      },
      cancel: () => {
        limit.clear();
        limit.abort();
      },
    };
  }

  #skipped(name: string): boolean {
    return this.options.systemResolvers && SPECIAL_USE.has(name.slice(name.lastIndexOf(".") + 1));
  }

  /**
   * The CAA sets and verdict. What needs no DNS is judged first, for the leaf served now: an issuer with
   * no known CAA domain is not judged, whatever DNS does. A failed climb keeps the sets last found and,
   * when they are the sets this leaf's names need (the same climb starts), judges this leaf's issuer
   * by them; otherwise no verdict stands: the last one was drawn for another leaf's names.
   */
  async #caa(findings: DnsFindings, domain: string, details: CertificateDetails, climb: (from: string) => Promise<CaaSet>, previous?: DnsFindings | null): Promise<boolean> {
    const starts = caaClimbStarts(domain, details.subjectAlternativeNames);
    const issuerNames = caaIssuerNames(details);
    const issuerDomain = issuerCaaDomain(issuerNames, this.options.identities);
    let sets: CaaSet[];
    let answered = true;
    try {
      sets = await Promise.all(starts.map(climb));
    } catch (error) {
      this.#failed("CAA", domain, error);
      answered = false;
      const known = previous?.caaSets ?? [];
      if (!starts.every((from) => known.some((set) => set.from === from))) {
        // The sets known were climbed for another leaf's names, and the last verdict is about that leaf:
        // neither says whether this leaf's CA may issue. Only what needs no DNS is said.
        if (previous?.caaSets) findings.caaSets = previous.caaSets;
        if (issuerDomain === null) findings.caa = { status: "not_judged", issuerDomain: null, blocking: null };
        return false;
      }
      sets = known.filter((set) => starts.includes(set.from));
    }
    findings.caaSets = sets;
    findings.caa = judgeCaa({
      domain,
      subjectAlternativeNames: details.subjectAlternativeNames,
      issuerNames,
      identities: this.options.identities,
      sets: new Map(sets.map((set) => [set.from, set])),
    });
    return answered;
  }

  /**
   * The MTA-STS policy senders would hold now (RFC 8461 §5): the one fetched for the TXT record's id,
   * the cached one while its max_age lasts (no record, the same id, or a failed fetch), else none. A
   * failed TXT lookup keeps the policy held.
   */
  async #mtaSts(client: DnsClient, mailDomain: string, previous: DnsFindings["mtaSts"] | undefined, limit: Deadline): Promise<MtaStsHeld> {
    const now = this.#clock.now();
    const held: MtaStsHeld | null = previous?.mailDomain === mailDomain ? { mailDomain, id: previous.id, policy: previous.policy, fetchedAt: previous.fetchedAt } : null;
    let record: StsRecord;
    try {
      record = await lookupStsRecord(client, mailDomain, limit);
    } catch (error) {
      if (held && error instanceof DnsFailure) throw new KeepPrevious(held, error);
      throw error;
    }
    const cached = held?.policy && held.fetchedAt !== null && now < held.fetchedAt + held.policy.maxAge * 1000 ? held : null;
    const none: MtaStsHeld = { mailDomain, id: null, policy: null, fetchedAt: null };
    if (record === null) return cached ?? none;
    if (cached && cached.id === record.id) return cached;
    try {
      const policy: MtaStsPolicy = await fetchStsPolicy(this.options.fetcher!, mailDomain, this.options.timeoutMs);
      return { mailDomain, id: record.id, policy, fetchedAt: now };
    } catch (error) {
      this.#failed("MTA-STS policy", mailDomain, error);
      return cached ?? none;
    }
  }

  /** A part's answer, or (after a failure) what stood before, which may be nothing. */
  #kept<T>(what: string, name: string, result: Settled<T>, previous: T | undefined): T | undefined {
    if (result.ok) return result.value;
    if (result.error instanceof KeepPrevious) {
      this.#failed(what, name, result.error.cause);
      return result.error.held as T;
    }
    this.#failed(what, name, result.error);
    return previous;
  }

  #failed(what: string, name: string, error: unknown) {
    if (error instanceof DnsFailure || (error instanceof Error && error.name === "FetchFailure")) {
      this.options.logger?.debug("DNS lookup failed; the last answer stands", { lookup: what, name, error: error.message });
    } else {
      this.options.logger?.warn("DNS judgement failed; the last answer stands", { lookup: what, name, error });
    }
  }
}

/** A failure after which the value carried stands (a held MTA-STS policy when its TXT lookup failed). */
class KeepPrevious extends Error {
  constructor(
    readonly held: unknown,
    override readonly cause: unknown,
  ) {
    super("kept the previous answer");
  }
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A promise that never rejects (started early, awaited late: no unhandled rejection meanwhile). */
function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function judgeDane(finding: TlsaFinding, domain: string, endpoint: ServedEndpoint, signatures: SignatureBudget): DaneVerdict {
  const base = finding.name?.replace(/^_\d+\._tcp\./, "");
  const leafNames = endpoint.details!.subjectAlternativeNames;
  return daneVerdict(finding, { ders: endpoint.ders!, leafNames, referenceNames: base && base !== domain ? [domain, base] : [domain] }, signatures);
}

/** An `enforce` policy that names no pattern matching the host, or a served leaf that does not name the host. */
function mtaStsMismatch(policy: MtaStsPolicy | null, domain: string, endpoints: readonly ServedEndpoint[]): boolean {
  if (policy?.mode !== "enforce") return false;
  if (!policy.mx.some((pattern) => mxMatches(pattern, domain))) return true;
  return endpoints.some((endpoint) => endpoint.details && !matchesHostname(endpoint.details.subjectAlternativeNames, domain));
}

function sameFindings(a: DnsFindings, b: DnsFindings): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A Deadline that can also be ended early (a check whose retrieval failed drops its lookups). */
function timeLimit(ms: number): Deadline & { abort(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  return {
    signal: controller.signal,
    dueAt: performance.now() + ms,
    clear: () => clearTimeout(timer),
    abort: () => controller.abort(),
  };
}
