/**
 * Asks whether a leaf is revoked (CONTRACT §14): a stapled OCSP answer first, else the OCSP
 * responders the certificate names, else its CRL distribution points, reusing a verified answer
 * until its nextUpdate (at most 7 days) from a cache the processes of one database share.
 */
import { FetchFailure, type HttpFetcher } from "../net/http_fetch.ts";
import { x509, type Certificate } from "../tls/x509.ts";
import { digest, issuerIdentity, serialOf } from "./_issuer_id.ts";
import { crlAnswer, readCrl, type VerifiedCrl } from "./crl.ts";
import { ocspRequest, verifyOcspResponse } from "./ocsp.ts";
import { RevocationFailure, validUntil, type RevocationAnswer, type RevocationState } from "./revocation_answer.ts";


/** Verified answers by issuer and serial, shared by every process of one database (a store port). */
export type { RevocationCache } from "../store/ports.ts";
import type { RevocationCache } from "../store/ports.ts";

export const OCSP_MAX_BYTES = 64 * 1024;
export const CRL_MAX_BYTES = 20 * 1024 * 1024;
/** A certificate naming many URLs is asked at most at this many of each kind. */
const MAX_URLS = 2;
/** Verified CRLs kept in memory per process. */
const MAX_KEPT_CRLS = 16;

export const NOT_CHECKED: RevocationState = {
  status: "not_checked",
  source: null,
  checkedAt: null,
  revokedAt: null,
  reason: null,
  validUntil: null,
};

export interface RevocationCheckerOptions {
  fetcher: HttpFetcher;
  cache: RevocationCache;
  /** Each request's whole time limit (CERTKEEPER_TLS_TIMEOUT). */
  timeoutMs: number;
  /** Told about each source that failed (for debug logs). */
  onFailure?: (failure: { url: string; message: string }) => void;
  /** Told about each request sent (for metrics and tests). */
  onRequest?: (request: { url: string; kind: "ocsp" | "crl" }) => void;
}

export interface RevocationQuestion {
  leaf: Certificate;
  /** The certificate that signed the leaf; null when unknown (the leaf is then not_checked). */
  issuer: Certificate | null;
  /** False when the chain is not trusted: nothing is asked. */
  trusted: boolean;
  /** The OCSP answer the server stapled, when the TLS client handed one over. */
  stapled?: Uint8Array | null;
  now: number;
}

export class RevocationChecker {
  readonly #inFlight = new Map<string, Promise<RevocationState>>();
  readonly #crls = new Map<string, { crl: Promise<VerifiedCrl>; validUntil: number }>();

  constructor(private readonly options: RevocationCheckerOptions) {}

  async check(question: RevocationQuestion): Promise<RevocationState> {
    const { leaf, issuer, trusted, now } = question;
    if (!trusted || !issuer) return NOT_CHECKED;
    const ocspUrls = httpUrls(leaf.getExtension(x509.AuthorityInfoAccessExtension)?.ocsp ?? []);
    const crlUrls = httpUrls(
      (leaf.getExtension(x509.CRLDistributionPointsExtension)?.distributionPoints ?? []).flatMap(
        (point) => point.distributionPoint?.fullName?.map((name) => new x509.GeneralName(name)) ?? [],
      ),
    );
    // A stapled `unknown` settles nothing: the responder and the CRL are asked, as after the
    // responder's own `unknown`; it stands only when they have no answer.
    let stapledUnknown: RevocationState | undefined;
    if (question.stapled) {
      try {
        const stapled = fromAnswer(verifyOcspResponse(question.stapled, { leaf, issuer, now, source: "ocsp_stapled" }));
        if (stapled.status !== "unknown") return stapled;
        stapledUnknown = stapled;
      } catch (error) {
        this.options.onFailure?.({ url: "stapled", message: (error as Error).message });
      }
    }
    if (ocspUrls.length === 0 && crlUrls.length === 0) return stapledUnknown ?? NOT_CHECKED;
    const state = await this.answer(cacheKey(leaf, issuer), now, () => this.#ask({ leaf, issuer, now }, ocspUrls, crlUrls));
    return stapledUnknown && state.status === "unavailable" ? stapledUnknown : state;
  }

  /**
   * The answer about the certificate `key` names: the cached one while current, else `fresh()`'s,
   * which is cached until its validUntil; `unavailable` when `fresh()` has none. Checks of one leaf at
   * once (the same certificate on many endpoints or in many organizations) share one question.
   */
  async answer(key: string, now: number, fresh: () => Promise<RevocationAnswer | null>): Promise<RevocationState> {
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = (async () => {
        const cached = await this.options.cache.get(key, now);
        if (cached) return fromAnswer(cached);
        const answer = await fresh();
        if (!answer) return { status: "unavailable" as const, source: null, checkedAt: now, revokedAt: null, reason: null, validUntil: null };
        return this.#keep(key, answer);
      })().finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  /** Asks the sources in order: the first verified good or revoked answer, else unknown, else null. */
  async #ask(subject: { leaf: Certificate; issuer: Certificate; now: number }, ocspUrls: string[], crlUrls: string[]): Promise<RevocationAnswer | null> {
    const { fetcher, timeoutMs } = this.options;
    let unknown: RevocationAnswer | null = null;
    for (const url of ocspUrls) {
      const answer = await this.#source(url, "ocsp", async () => {
        const { status, body } = await fetcher.fetch(
          { url, method: "POST", headers: { "content-type": "application/ocsp-request", accept: "application/ocsp-response" }, body: ocspRequest(subject.leaf, subject.issuer) },
          { timeoutMs, maxBytes: OCSP_MAX_BYTES },
        );
        if (status !== 200) throw new RevocationFailure(`the responder answered HTTP ${status}`);
        return verifyOcspResponse(body, { ...subject, source: "ocsp" });
      });
      if (answer?.status === "unknown") unknown ??= answer;
      else if (answer) return answer;
    }
    for (const url of crlUrls) {
      const answer = await this.#source(url, "crl", async () => crlAnswer(await this.#crl(url, subject.issuer, subject.now), subject), {
        counted: false,
      });
      if (answer) return answer;
    }
    return unknown;
  }

  /**
   * The verified CRL at `url` for `issuer`: kept in this process until its nextUpdate (at most 7 days),
   * so the certificates of one CA share one download; one download at a time per URL.
   */
  #crl(url: string, issuer: Certificate, now: number): Promise<VerifiedCrl> {
    const key = `${url} ${issuerKeyId(issuer)}`;
    const kept = this.#crls.get(key);
    if (kept && now < kept.validUntil) return kept.crl;
    const { fetcher, timeoutMs } = this.options;
    const crl = (async () => {
      this.options.onRequest?.({ url, kind: "crl" });
      const { status, body } = await fetcher.fetch({ url, method: "GET" }, { timeoutMs, maxBytes: CRL_MAX_BYTES });
      if (status !== 200) throw new RevocationFailure(`the CRL server answered HTTP ${status}`);
      return readCrl(body, { issuer, now, url });
    })();
    const entry = { crl, validUntil: Infinity };
    this.#crls.set(key, entry);
    crl.then(
      (verified) => {
        entry.validUntil = validUntil(now, verified.nextUpdate, verified.thisUpdate);
        // Keep the most recent few: a CRL of many entries is large.
        while (this.#crls.size > MAX_KEPT_CRLS) this.#crls.delete(this.#crls.keys().next().value!);
      },
      () => this.#crls.delete(key), // a failure is not kept: the next check asks again
    );
    return crl;
  }

  async #source(url: string, kind: "ocsp" | "crl", ask: () => Promise<RevocationAnswer>, options: { counted?: boolean } = {}): Promise<RevocationAnswer | null> {
    if (options.counted !== false) this.options.onRequest?.({ url, kind });
    try {
      return await ask();
    } catch (error) {
      if (!(error instanceof RevocationFailure || error instanceof FetchFailure)) throw error;
      this.options.onFailure?.({ url, message: error.message });
      return null;
    }
  }

  async #keep(key: string, answer: RevocationAnswer): Promise<RevocationState> {
    try {
      await this.options.cache.put(key, answer);
    } catch (error) {
      this.options.onFailure?.({ url: "cache", message: (error as Error).message });
    }
    return fromAnswer(answer);
  }
}

export function fromAnswer(answer: RevocationAnswer): RevocationState {
  const { status, source, checkedAt, revokedAt, reason, validUntil } = answer;
  return { status, source, checkedAt, revokedAt, reason, validUntil };
}

/** Issuer (a hash of its key) and serial: one answer per certificate, whoever monitors it. */
export function cacheKey(leaf: Certificate, issuer: Certificate): string {
  return `${issuerKeyId(issuer)}:${serialOf(leaf)}`;
}

function issuerKeyId(issuer: Certificate): string {
  return digest("sha256", issuerIdentity(issuer).keyBits).toString("hex").slice(0, 32);
}

function httpUrls(names: readonly x509.GeneralName[]): string[] {
  return names
    .filter((name) => name.type === "url" && /^https?:\/\//i.test(name.value))
    .map((name) => name.value)
    .slice(0, MAX_URLS);
}
