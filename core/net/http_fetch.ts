/**
 * The port through which core reads small documents over HTTP: OCSP answers, CRLs, Certificate
 * Transparency search results. adapters/notify implements it over undici and core's guarded connect.
 */

export interface FetchRequest {
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: Uint8Array;
}

export interface FetchResult {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface FetchLimits {
  /** The whole exchange, connect to last byte: a server that trickles bytes is cut off here. */
  timeoutMs: number;
  /** Bodies longer than this fail (declared or counted), and the connection is dropped. */
  maxBytes: number;
}

/** Why a fetch produced no usable answer; the message is safe to show (no credentials). */
export class FetchFailure extends Error {
  constructor(
    readonly reason: "refused" | "timeout" | "too_large" | "network",
    message: string,
  ) {
    super(message);
    this.name = "FetchFailure";
  }
}

export interface HttpFetcher {
  /**
   * Sends one request and reads the whole answer. Never follows a redirect (a 3xx is the result).
   * Throws a {@link FetchFailure} when no complete answer arrives within the limits.
   */
  fetch(request: FetchRequest, limits: FetchLimits): Promise<FetchResult>;
}
