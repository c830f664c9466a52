/**
 * The HTTP transport of notifications, over undici. Every new connection is opened by core's
 * guarded connect, so CERTKEEPER_RESOLVE and the private-address guard apply at connect time,
 * after name resolution, exactly as they do for certificate checks.
 */
import { isIP } from "node:net";
import tls from "node:tls";
import type { Agent } from "undici/index.js";
import type buildConnector from "undici/types/connector.d.ts";
import { connectGuarded, deadline, hostPort, NetFailure, retryAfterMs } from "../../core/net/mod.ts";
import { loadUndici, type Undici } from "./undici.ts";
import type { ResolveRule } from "../../core/config/mod.ts";
import type { HttpResult, HttpTransport, OutgoingHttpRequest } from "../../core/notify/mod.ts";
import type { TrustStore } from "../../core/tls/mod.ts";
import { HostSlots } from "./_host_slots.ts";

export interface HttpTransportOptions {
  trust: TrustStore;
  resolve: ResolveRule[];
  allowPrivateTargets: boolean;
  /**
   * Time limit of resolving, connecting and the TLS handshake of one new connection; default 10 s.
   * Keep it below the attempt's timeout: an address that never completes a connection then fails fast.
   */
  connectTimeoutMs?: number;
  /** Response bytes read before the rest is dropped; default 4 KiB. */
  maxResponseBytes?: number;
  /** Sent unless the request names its own; default `certkeeper`. */
  userAgent?: string;
  /**
   * Most requests in flight to one origin; the others wait their turn before their time starts.
   * Default 16: above the deliverer's per-organization cap, so one organization's hung requests to a
   * host shared with others (a chat service, a webhook relay) leave room for the others'.
   */
  perHost?: number;
}

export interface ClosableHttpTransport extends HttpTransport {
  /** Closes idle kept-alive connections and refuses further posts. */
  close(): Promise<void>;
}

/**
 * An {@link HttpTransport} over real undici, connecting through core's guard.
 *
 * @example
 * const http = createHttpTransport({ trust: TrustStore.system(), resolve: [], allowPrivateTargets: false });
 * const { status, retryAfterMs } = await http.post({ url, headers, body }, { timeoutMs: 10_000 });
 */
export function createHttpTransport(options: HttpTransportOptions): ClosableHttpTransport {
  const maxBytes = options.maxResponseBytes ?? 4096;
  const userAgent = options.userAgent ?? "certkeeper";
  const perHost = options.perHost ?? 16;
  const slots = new HostSlots(perHost);
  // undici pools connections per origin (scheme, host name, port), and every new connection resolves
  // and vets afresh: a kept-alive socket only ever carries requests for the name it was vetted for.
  const agentFor = ({ Agent }: Undici, allowPrivateTargets: boolean) =>
    new Agent({
      connect: guardedConnector({ ...options, allowPrivateTargets }),
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
      connections: perHost,
      pipelining: 1,
    });
  let agent: Agent | undefined;
  // The operator's own endpoints (PagerDuty's and Telegram's base URLs) may be private, like the SMTP server.
  let operatorAgent: Agent | undefined;
  let closed = false;

  return {
    async post(outgoing: OutgoingHttpRequest, { timeoutMs }: { timeoutMs: number }): Promise<HttpResult> {
      const url = new URL(outgoing.url);
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new NetFailure("connection_refused", `${url.protocol} URLs cannot be posted to`);
      }
      const where = url.host;
      const release = await slots.acquire(url.origin);
      // Not a bare timer: an answer that came while the process was paused still counts (deadline.ts).
      const limit = deadline(timeoutMs);
      try {
        const headers = { ...outgoing.headers };
        const has = (name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name);
        if (!has("user-agent")) headers["user-agent"] = userAgent;
        // undici drops a URL's user info; send it the way curl does, as Basic credentials.
        if ((url.username || url.password) && !has("authorization")) {
          const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
          headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
        }
        url.username = "";
        url.password = "";
        let response: Awaited<ReturnType<Undici["request"]>>;
        try {
          const undici = await loadUndici();
          // Closed while undici loaded: no agent is made that nothing would close.
          if (closed) throw new NetFailure("connection_refused", "the HTTP transport is closed");
          const dispatcher = outgoing.operator ? (operatorAgent ??= agentFor(undici, true)) : (agent ??= agentFor(undici, options.allowPrivateTargets));
          response = await undici.request(url, { method: "POST", headers, body: outgoing.body, dispatcher, signal: limit.signal });
        } catch (error) {
          if (limit.signal.aborted) throw new NetFailure("timeout", `${where} did not answer within ${timeoutMs} ms`);
          throw asNetFailure(error, where);
        }
        await drain(response.body, maxBytes);
        // undici frees the connection just after the body ends; a back-to-back post would otherwise
        // find it still busy and open another.
        await new Promise((resolve) => setImmediate(resolve));
        return {
          status: response.statusCode,
          retryAfterMs: retryAfterMs(response.headers["retry-after"], Date.now()),
        };
      } finally {
        limit.clear();
        release();
      }
    },
    close: async () => {
      closed = true;
      await Promise.all([agent?.close(), operatorAgent?.close()]);
    },
  };
}

export function guardedConnector(options: Pick<HttpTransportOptions, "trust" | "resolve" | "allowPrivateTargets" | "connectTimeoutMs">): buildConnector.connector {
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  return (target, callback) => {
    const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
    const https = target.protocol === "https:";
    const port = Number(target.port) || (https ? 443 : 80);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), connectTimeoutMs);
    connectGuarded({
      host,
      port,
      rules: options.resolve,
      allowPrivateTargets: options.allowPrivateTargets,
      signal: controller.signal,
      tls: https
        ? {
            // No SNI for an IP address (RFC 6066), but the certificate is still checked against it.
            servername: isIP(host) ? undefined : host,
            ca: [...options.trust.pems],
            rejectUnauthorized: true,
            checkServerIdentity: (_name, cert) => tls.checkServerIdentity(host, cert),
            ALPNProtocols: ["http/1.1"],
          }
        : undefined,
    }).then(
      (socket) => {
        clearTimeout(timer);
        callback(null, socket);
      },
      (error: unknown) => {
        clearTimeout(timer);
        callback(asNetFailure(error, hostPort(host, port)), null);
      },
    );
  };
}

/** Reads at most `maxBytes` of a response body and drops the rest (closing the connection if need be). */
async function drain(body: AsyncIterable<Uint8Array> & { destroy(): unknown }, maxBytes: number): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += chunk.length;
      if (read >= maxBytes) break; // leaving the loop early destroys the stream and its connection
    }
  } catch {
    // The status is already known; a body cut short (timeout, reset) does not change the result.
  }
}

export function asNetFailure(error: unknown, where: string): NetFailure {
  if (error instanceof NetFailure) return error;
  const e = error as { code?: string; message?: string };
  const detail = e.code ?? e.message ?? String(error);
  return new NetFailure("connection_refused", `${where} failed the request (${detail})`);
}

