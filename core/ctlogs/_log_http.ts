/**
 * One GET to a log, bounded: at most 64 MiB, or less where the caller knows what the answer may hold
 * (after gzip, which static-ct-api logs may send unasked),
 * within CERTKEEPER_TLS_TIMEOUT × 3, never following a redirect. A 429 or 503 carries its Retry-After;
 * every failure is a LogFailure whose message is safe to show.
 */
import { gunzipSync } from "node:zlib";
import { FetchFailure, retryAfterMs, type HttpFetcher } from "../net/mod.ts";

/** The most one answer of a log may hold. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class LogFailure extends Error {
  constructor(
    message: string,
    /** When the log may be asked again (its Retry-After), ms from now; null when it did not say. */
    readonly retryAfterMs: number | null = null,
    /** It answered 404 (a partial tile that is gone, say). */
    readonly notFound = false,
  ) {
    super(message);
    this.name = "LogFailure";
  }
}

export interface LogHttp {
  fetcher: HttpFetcher;
  timeoutMs: number;
}

/**
 * What gzip may add to an answer that does not compress (a hash tile's hashes): a few bytes of header
 * and trailer, and 5 a block of 16 KiB stored as it is; a bound is kept once decompressed.
 */
export function onTheWire(maxBytes: number): number {
  return maxBytes + Math.ceil(maxBytes / 1024) + 1024;
}

/** GETs `url` and returns its body (decompressed when gzip), or throws a LogFailure. */
export async function getFromLog(http: LogHttp, url: string, options: { maxBytes?: number; accept?: string } = {}): Promise<Uint8Array> {
  const maxBytes = options.maxBytes ?? MAX_RESPONSE_BYTES;
  const { body, gzip } = await getRawFromLog(http, url, { ...options, maxBytes: onTheWire(maxBytes) });
  if (!gzip && body.byteLength > maxBytes) throw new LogFailure(`${describe(url)} sent more than ${maxBytes} bytes`);
  if (!gzip) return body;
  try {
    return gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (error) {
    const tooLarge = (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE";
    throw new LogFailure(tooLarge ? `${describe(url)} sent more than ${maxBytes} bytes once decompressed` : `${describe(url)} sent a body that is not gzip`);
  }
}

/** GETs `url` and returns its body as sent, saying whether it is gzip (for a decoder to decompress), or throws a LogFailure. */
export async function getRawFromLog(
  http: LogHttp,
  url: string,
  options: { maxBytes?: number; accept?: string } = {},
): Promise<{ body: Uint8Array; gzip: boolean }> {
  const maxBytes = options.maxBytes ?? MAX_RESPONSE_BYTES;
  let response;
  try {
    response = await http.fetcher.fetch(
      { url, method: "GET", headers: { accept: options.accept ?? "*/*", "accept-encoding": "gzip, identity" } },
      { timeoutMs: http.timeoutMs, maxBytes },
    );
  } catch (error) {
    if (error instanceof FetchFailure) throw new LogFailure(`${describe(url)} did not answer: ${error.message}`);
    throw error;
  }
  if (response.status === 429 || response.status === 503) {
    throw new LogFailure(`${describe(url)} asked to slow down (HTTP ${response.status})`, retryAfterMs(response.headers["retry-after"], Date.now()));
  }
  if (response.status === 404) throw new LogFailure(`${describe(url)} answered HTTP 404`, null, true);
  // Any other error backs off as errors do: a Retry-After means "slow down" only with 429 and 503.
  if (response.status !== 200) throw new LogFailure(`${describe(url)} answered HTTP ${response.status}`);
  const encoding = (response.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (encoding === "identity" || encoding === "") return { body: response.body, gzip: false };
  if (encoding === "gzip" || encoding === "x-gzip") return { body: response.body, gzip: true };
  throw new LogFailure(`${describe(url)} answered in the unknown encoding "${encoding.slice(0, 40)}"`);
}

/** GETs `url` and parses its JSON body, or throws a LogFailure. */
export async function getJsonFromLog(http: LogHttp, url: string, maxBytes?: number): Promise<unknown> {
  const body = await getFromLog(http, url, { maxBytes, accept: "application/json" });
  try {
    return JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch {
    throw new LogFailure(`${describe(url)} answered with something that is not JSON`);
  }
}

/** The URL without its query, for messages. */
export function describe(url: string): string {
  return url.split("?")[0]!;
}

