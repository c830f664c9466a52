/**
 * How notifications leave the process. Core renders what to send (payloads.ts) and decides when
 * (the deliverer); transports, supplied by adapters/notify, only carry it.
 */
import type { HttpFetcher } from "../net/http_fetch.ts";

/** One HTTP POST to a webhook endpoint. */
export interface OutgoingHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /**
   * The operator's own endpoint (CERTKEEPER_PAGERDUTY_URL, CERTKEEPER_TELEGRAM_URL), like the SMTP
   * server: the private-address rule does not apply to it.
   */
  operator?: boolean;
}

export interface HttpResult {
  status: number;
  /** From a Retry-After header (seconds or HTTP date), in ms; null when absent or unreadable. */
  retryAfterMs: number | null;
}

export interface HttpTransport {
  /**
   * POSTs once. Redirects are not followed (a 3xx is the result), at most a few KB of the response
   * are read and then dropped, and the whole exchange is cut off after `timeoutMs`. Connections go
   * through core's guarded connect, so private addresses are refused unless allowed.
   * Throws a NetFailure (core/net/resolver.ts) when no response arrives.
   */
  post(request: OutgoingHttpRequest, options: { timeoutMs: number }): Promise<HttpResult>;
}

export interface EmailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Stable per event and channel, so a receiver can recognise a repeated delivery. */
  messageId: string;
}

export interface EmailTransport {
  /** Sends, or throws an Error whose message is safe to show (no credentials). */
  send(message: EmailMessage): Promise<void>;
}

export interface Transports {
  http: HttpTransport;
  email: EmailTransport;
  /** Reads OCSP answers and CRLs, under the private-address rule; without it nothing is asked. */
  fetch?: HttpFetcher;
  /**
   * Reads services the operator chose, not under the private-address rule: the Certificate
   * Transparency service, and the CAs' ACME directories and renewal information.
   */
  ctFetch?: HttpFetcher;
}
