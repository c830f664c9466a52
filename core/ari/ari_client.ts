/**
 * Asks CAs for their renewal information about the leaves certkeeper sees (RFC 9773, CONTRACT §19):
 * the issuer's ACME directory (CERTKEEPER_ACME_DIRECTORIES and the built-ins) names the `renewalInfo`
 * URL; `GET {renewalInfo}/{certID}` gives the suggested window. Answers are shared by every certificate
 * and organization that serves the leaf, and across processes (a store port), and a leaf is asked again
 * only after the answer's Retry-After (1 minute–24 hours; 6 hours when absent or after an error).
 */
import { FetchFailure, type HttpFetcher } from "../net/http_fetch.ts";
import type { RenewalInfo } from "../base/records.ts";
import { CLOCK_STEP_SLACK_MS, DAY, latestLiveLease, SECOND } from "../base/time.ts";
import { randomBase62 } from "../base/ids.ts";
import type { RenewalInfoCache } from "../store/ports.ts";
import { AriFailure, DEFAULT_RETRY, readDirectory, readRenewalInfo, RETRY_AFTER_MAX, retryDelay, type SuggestedWindow } from "./renewal_answer.ts";

/** At most this much of a directory or an answer is read (CONTRACT §19). */
export const ARI_MAX_BYTES = 64 * 1024;
/** How long a directory's renewalInfo URL is kept in this process. */
const DIRECTORY_TTL = DAY;
/** A claim to ask about a leaf outlasts the requests' time limits by this much. */
const CLAIM_MARGIN = SECOND;
/** How often a process waiting for another's answer looks at the cache. */
const CLAIM_POLL = 100;
/**
 * After a request to a CA runs out of time, how long its other leaves are not asked: each would wait
 * out the time limit inside its check. They are asked at their next check after that.
 */
const SILENT_CA_MS = 60 * SECOND;

export interface AriClientOptions {
  fetcher: HttpFetcher;
  cache: RenewalInfoCache;
  /** Issuer names (matched case-insensitively with the issuer's O and CN) and their ACME directory URLs. */
  directories: ReadonlyArray<{ issuer: string; url: string }>;
  /** Each request's whole time limit (CERTKEEPER_TLS_TIMEOUT). */
  timeoutMs: number;
  /** This process, for the cache's claims: processes sharing the cache ask the CA once about a leaf (default: an id of this client's own). */
  owner?: string;
  /** Told about each renewal-information request: answered, or failed (for metrics). */
  onRequest?: (result: "ok" | "error") => void;
  /** Told why a request failed (for debug logs). */
  onFailure?: (failure: { url: string; message: string }) => void;
}

/** What is asked about a leaf. */
export interface AriLeaf {
  certId: string;
  /** The issuer's O and CN. */
  issuerNames: readonly string[];
  notBefore: number;
  notAfter: number;
}

const NOTHING_YET: Omit<RenewalInfo, "nextAt" | "lastError"> = { window: null, explanationUrl: null, checkedAt: null, requestedEnd: null };

/**
 * Whether `info` holds at `now`: its next question has not come, and it was not written on a wall clock
 * since set back (a day back would otherwise hold the next question back a day beyond what the CA
 * asked): an answer received in the future, or a next question further ahead than any is ever set (a
 * Retry-After is kept to 24 hours, a failure waits 6 hours).
 */
function holds(info: RenewalInfo, now: number): boolean {
  if (!(now < info.nextAt)) return false;
  const answered = info.lastError === null;
  if (info.nextAt - now > (answered ? RETRY_AFTER_MAX : DEFAULT_RETRY) + CLOCK_STEP_SLACK_MS) return false;
  return !answered || info.checkedAt === null || info.checkedAt <= now + CLOCK_STEP_SLACK_MS;
}

/**
 * Whether `until`, set `span` ahead of a moment of this process's clock, is still ahead at `now`, and
 * was not set on a wall clock since set back (then further ahead than `span` and the slack between
 * moments read by checks running side by side).
 */
const ahead = (until: number, now: number, span: number) => now < until && until - now <= span + CLOCK_STEP_SLACK_MS;

export class AriClient {
  readonly #inFlight = new Map<string, Promise<RenewalInfo>>();
  readonly #owner: string;
  readonly #directories = new Map<string, { renewalInfo: Promise<string | null>; until: number }>();
  /** CAs (by directory URL) whose last request ran out of time: until when, and what it said. */
  readonly #silent = new Map<string, { until: number; message: string }>();

  /** Each directory by lower-cased issuer name, with its place in the list (the first listed wins). */
  readonly #byIssuer = new Map<string, { url: string; order: number }>();

  constructor(private readonly options: AriClientOptions) {
    this.#owner = options.owner ?? `ari_${randomBase62(12)}`;
    options.directories.forEach((entry, order) => {
      const issuer = entry.issuer.toLowerCase();
      if (!this.#byIssuer.has(issuer)) this.#byIssuer.set(issuer, { url: entry.url, order });
    });
  }

  /** The directory URL for an issuer, or null when its CA publishes no renewal information here. */
  directoryFor(issuerNames: readonly string[]): string | null {
    let found: { url: string; order: number } | undefined;
    for (const name of issuerNames) {
      const entry = this.#byIssuer.get(name.toLowerCase());
      if (entry && (!found || entry.order < found.order)) found = entry;
    }
    return found?.url ?? null;
  }

  /**
   * What the CA says about `leaf` now: `previous` (the leaf's last known information) while it is not
   * time to ask again, else the shared cache's, else a new answer. Null when the issuer has no
   * directory (the deadline then follows the lifetime). Never throws for a CA's failure: the last good
   * window stays, and the leaf is asked again 6 hours later.
   */
  async renewalInfo(leaf: AriLeaf, previous: RenewalInfo | null | undefined, now: number): Promise<RenewalInfo | null> {
    const directory = this.directoryFor(leaf.issuerNames);
    if (!directory) return null;
    if (previous && holds(previous, now)) return previous;
    const key = ariCacheKey(leaf);
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#refresh(directory, leaf, key, previous ?? null, now).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  async #refresh(directory: string, leaf: AriLeaf, key: string, previous: RenewalInfo | null, now: number): Promise<RenewalInfo> {
    const { cache, timeoutMs } = this.options;
    const owner = this.#owner;
    // (An answer kept by the previous release, under the certID alone, serves until it is asked again.)
    const cached = (await cache.get(key).catch(() => null)) ?? (await cache.get(leaf.certId).catch(() => null));
    if (cached && holds(cached, now)) return cached;
    // Another process sharing the cache is asking about this leaf: its answer is waited for. A claim
    // lasts as long as a directory and an answer may take; past it (that process died) this one asks.
    const asking = 2 * timeoutMs + CLAIM_MARGIN;
    // A claim ending later than any live process's (taken on a wall clock since set back) is not waited out.
    if (!(await cache.claim(key, owner, now, now + asking, latestLiveLease(now, asking)).catch(() => true))) {
      const answered = await this.#answerOfOther(key, now, asking);
      if (answered) return answered;
    }
    const known = newest(cached, previous);
    const silent = this.#silent.get(directory);
    if (silent && ahead(silent.until, now, SILENT_CA_MS)) {
      // Not asked: the leaf is asked at its first check after the CA's quiet minute.
      const info = { ...(known ?? NOTHING_YET), nextAt: silent.until, lastError: `${silent.message} (the CA is not asked again for a minute)` };
      await this.options.cache.put(key, info, leaf.notAfter, now).catch((error: Error) => this.options.onFailure?.({ url: "cache", message: error.message }));
      return info;
    }
    let info: RenewalInfo;
    let url = directory;
    try {
      const base = await this.#renewalInfoUrl(directory, now);
      // A CA that no longer publishes renewal information gives no window: the lifetime rule (CONTRACT §19).
      // Written to the cache like any answer: another process waiting for this one reads it at once.
      // A request the CA made stands until a new leaf is served (CONTRACT §19), and its last window is
      // what its next answer is compared with.
      if (!base) {
        info = {
          ...NOTHING_YET,
          requestedEnd: known?.requestedEnd ?? null,
          requested: known?.requested ?? null,
          previousWindow: known?.window ?? known?.previousWindow ?? null,
          nextAt: now + DEFAULT_RETRY,
          lastError: "the ACME directory publishes no renewalInfo",
        };
      } else if (new URL(directory).protocol === "https:" && new URL(base).protocol !== "https:") {
        // Renewal information moves deadlines and raises requests: a directory read over HTTPS does
        // not send it to be asked for in the clear (RFC 8555 §6.1: ACME is HTTPS).
        throw new AriFailure("the ACME directory's renewalInfo URL is not HTTPS (the directory is)");
      } else {
        url = renewalInfoRequestUrl(base, leaf.certId);
        const { status, headers, body } = await this.options.fetcher.fetch(
          { url, method: "GET", headers: { accept: "application/json" } },
          { timeoutMs: this.options.timeoutMs, maxBytes: ARI_MAX_BYTES },
        );
        if (status !== 200) throw new AriFailure(`the CA answered HTTP ${status}`);
        const answer = readRenewalInfo(body);
        // A window that ends when the certificate has expired names no renewal deadline: the CA's error.
        if (answer.window.end >= leaf.notAfter) throw new AriFailure("the suggested window ends when the certificate has already expired");
        info = {
          window: answer.window,
          explanationUrl: answer.explanationUrl,
          checkedAt: now,
          ...requestOf(leaf, known, answer),
          nextAt: now + retryDelay(headers["retry-after"], now),
          lastError: null,
        };
        this.#silent.delete(directory);
        this.options.onRequest?.("ok");
      }
    } catch (error) {
      if (!(error instanceof AriFailure || error instanceof FetchFailure)) throw error;
      if (error instanceof FetchFailure && error.reason === "timeout") this.#silent.set(directory, { until: now + SILENT_CA_MS, message: error.message });
      this.options.onRequest?.("error");
      this.options.onFailure?.({ url, message: error.message });
      info = { ...(known ?? NOTHING_YET), nextAt: now + DEFAULT_RETRY, lastError: error.message };
    }
    await this.options.cache.put(key, info, leaf.notAfter, now).catch((error: Error) => this.options.onFailure?.({ url: "cache", message: error.message }));
    return info;
  }

  /** The answer another process writes to the cache (due later than `now`), looked for until `waitMs` passes; null if none came. */
  async #answerOfOther(key: string, now: number, waitMs: number): Promise<RenewalInfo | null> {
    for (let waited = 0; waited < waitMs; waited += CLAIM_POLL) {
      await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL));
      const info = await this.options.cache.get(key).catch(() => null);
      if (info && holds(info, now)) return info;
    }
    return null;
  }

  /** The directory's renewalInfo URL, kept up to 24 hours (a failure is not kept: the leaf waits 6 hours). */
  #renewalInfoUrl(directory: string, now: number): Promise<string | null> {
    const kept = this.#directories.get(directory);
    if (kept && ahead(kept.until, now, DIRECTORY_TTL)) return kept.renewalInfo;
    const renewalInfo = (async () => {
      const { status, body } = await this.options.fetcher.fetch(
        { url: directory, method: "GET", headers: { accept: "application/json" } },
        { timeoutMs: this.options.timeoutMs, maxBytes: ARI_MAX_BYTES },
      );
      if (status !== 200) throw new AriFailure(`the ACME directory answered HTTP ${status}`);
      return readDirectory(body);
    })();
    const entry = { renewalInfo, until: now + DIRECTORY_TTL };
    this.#directories.set(directory, entry);
    renewalInfo.catch(() => {
      if (this.#directories.get(directory) === entry) this.#directories.delete(directory);
    });
    return renewalInfo;
  }
}

/**
 * Where a leaf's answer is kept, shared by every certificate and organization serving that leaf: its
 * certID with its validity. What is kept is judged on the leaf's own dates (a request is a window ending
 * before its midpoint, an error one ending after its expiry): a leaf made with another's certID (its
 * CA's key identifier and serial, both public) and other dates, by a CA the installation trusts, gets
 * an answer of its own, never the one another organization's certificate reads.
 */
export function ariCacheKey(leaf: AriLeaf): string {
  return `${leaf.certId}@${leaf.notBefore}-${leaf.notAfter}`;
}

/** The later of two things known about one leaf. */
function newest(a: RenewalInfo | null, b: RenewalInfo | null): RenewalInfo | null {
  if (!a || !b) return a ?? b;
  return (a.checkedAt ?? -Infinity) >= (b.checkedAt ?? -Infinity) ? a : b;
}

/**
 * Whether the CA now asks for early replacement (CONTRACT §19): a first window ending before the
 * lifetime's midpoint, or a window ending earlier than the previous one. Once asked, the request
 * stands for the leaf (at the window end it was made with) until a window ends earlier still.
 */
function requestOf(leaf: AriLeaf, known: RenewalInfo | null, answer: SuggestedWindow): Pick<RenewalInfo, "requestedEnd" | "requested"> {
  const before = known?.window ?? known?.previousWindow ?? null;
  const midpoint = leaf.notBefore + (leaf.notAfter - leaf.notBefore) / 2;
  const { window, explanationUrl } = answer;
  if (before === null ? window.end < midpoint : window.end < before.end) return { requestedEnd: window.end, requested: { window, explanationUrl } };
  return { requestedEnd: known?.requestedEnd ?? null, requested: known?.requested ?? null };
}

/**
 * `{renewalInfo}/{certID}` (RFC 9773 §4.1): the certID is a path segment of its own, after any slash
 * the CA ends its URL with and before any query string it carries.
 */
export function renewalInfoRequestUrl(base: string, certId: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${certId}`;
  return url.toString();
}
