/** Reads pages of a Cert Spotter-compatible issuances API (`GET {base}/v1/issuances`). */
import type { HttpFetcher } from "../net/http_fetch.ts";
import { FetchFailure } from "../net/http_fetch.ts";
import { retryAfterMs } from "../net/retry_after.ts";
import { DAY, SECOND } from "../base/time.ts";
import { readIssuance, type Issuance } from "./issuance.ts";

/**
 * A service's Retry-After (429 or 503), honoured from 1 s up to a day: beyond that, a value that cannot
 * be meant would stop the watch for years (as the logs' and the CAs' are bounded).
 */
function slowDown(header: string | undefined): number | null {
  const delay = retryAfterMs(header, Date.now());
  return delay === null ? null : Math.min(Math.max(delay, SECOND), DAY);
}

/** A page of issuances is a few hundred KB at most; anything far larger is not an answer. */
const MAX_PAGE_BYTES = 8 * 1024 * 1024;

export class CtFailure extends Error {
  constructor(
    message: string,
    /** From a 429's or 503's Retry-After: when this watch may ask again, ms from now (1 s to a day). */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = "CtFailure";
  }
}

export interface CtClientOptions {
  fetcher: HttpFetcher;
  /** CERTKEEPER_CT_URL, without a trailing slash. */
  baseUrl: string;
  /** CERTKEEPER_CT_TOKEN; sent as a bearer token, never shown in an error. */
  token?: string;
  timeoutMs: number;
}

export class CtClient {
  constructor(private readonly options: CtClientOptions) {}

  /** One page after `after` (null: from the start), in the order the service discovered them. */
  async page(query: { domain: string; includeSubdomains: boolean; after: string | null }): Promise<Issuance[]> {
    const params = new URLSearchParams({ domain: query.domain, include_subdomains: String(query.includeSubdomains) });
    params.append("expand", "dns_names");
    params.append("expand", "issuer");
    if (query.after) params.set("after", query.after);
    const url = `${this.options.baseUrl}/v1/issuances?${params}`;
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    let response;
    try {
      response = await this.options.fetcher.fetch({ url, method: "GET", headers }, { timeoutMs: this.options.timeoutMs, maxBytes: MAX_PAGE_BYTES });
    } catch (error) {
      if (error instanceof FetchFailure) throw new CtFailure(`The CT service did not answer: ${error.message}`);
      throw error;
    }
    if (response.status === 429) throw new CtFailure("The CT service asked to slow down (HTTP 429)", slowDown(response.headers["retry-after"]));
    if (response.status === 503) throw new CtFailure("The CT service answered HTTP 503", slowDown(response.headers["retry-after"]));
    if (response.status !== 200) throw new CtFailure(`The CT service answered HTTP ${response.status}`);
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(response.body).toString("utf8"));
    } catch {
      throw new CtFailure("The CT service answered with something that is not JSON");
    }
    if (!Array.isArray(json)) throw new CtFailure("The CT service answered with JSON that is not a list of issuances");
    const issuances: Issuance[] = [];
    for (const raw of json) {
      const issuance = readIssuance(raw);
      if (!issuance) throw new CtFailure("The CT service answered with an issuance that lacks an id or validity dates");
      issuances.push(issuance);
    }
    return issuances;
  }
}

