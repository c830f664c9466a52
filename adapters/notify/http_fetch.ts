/**
 * core's {@link HttpFetcher} over undici: every connection opened by core's guarded connect (with
 * the private-address rule, or without it for services the operator chose), no redirect followed,
 * the whole exchange under one deadline and the body under a byte limit.
 */
import type { Agent } from "undici/index.js";
import { FetchFailure, NetFailure, type FetchLimits, type FetchRequest, type FetchResult, type HttpFetcher } from "../../core/net/mod.ts";
import type { ResolveRule } from "../../core/config/mod.ts";
import type { TrustStore } from "../../core/tls/mod.ts";
import { asNetFailure, guardedConnector } from "./http.ts";
import { loadUndici, type Undici } from "./undici.ts";

export interface HttpFetcherOptions {
  trust: TrustStore;
  resolve: ResolveRule[];
  /** False: loopback, private and other non-public addresses are refused after resolution. */
  allowPrivateTargets: boolean;
  userAgent?: string;
}

export interface ClosableHttpFetcher extends HttpFetcher {
  /** Closes its connections, ending any request still under way. */
  close(): Promise<void>;
}

/**
 * @example
 * const fetcher = createHttpFetcher({ trust, resolve: [], allowPrivateTargets: false });
 * const { status, body } = await fetcher.fetch({ url, method: "GET" }, { timeoutMs: 10_000, maxBytes: 65_536 });
 */
export function createHttpFetcher(options: HttpFetcherOptions): ClosableHttpFetcher {
  const userAgent = options.userAgent ?? "certkeeper";
  const agents = new Map<number, Agent>();
  // The connect deadline is the request's; one agent per timeout keeps kept-alive sockets apart.
  const agentFor = ({ Agent }: Undici, timeoutMs: number) => {
    let agent = agents.get(timeoutMs);
    if (!agent) {
      agent = new Agent({ connect: guardedConnector({ ...options, connectTimeoutMs: timeoutMs }), keepAliveTimeout: 4_000, connections: 4 });
      agents.set(timeoutMs, agent);
    }
    return agent;
  };
  return {
    async fetch(outgoing: FetchRequest, limits: FetchLimits): Promise<FetchResult> {
      let url: URL;
      try {
        url = new URL(outgoing.url);
      } catch {
        throw new FetchFailure("refused", `"${outgoing.url}" is not a URL`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new FetchFailure("refused", `${url.protocol} URLs are not fetched`);
      if (url.username || url.password) throw new FetchFailure("refused", "URLs with user info are not fetched");
      const where = url.host;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
      try {
        const headers = { "user-agent": userAgent, ...outgoing.headers };
        const undici = await loadUndici();
        const response = await undici.request(url, {
          method: outgoing.method,
          headers,
          body: outgoing.body,
          dispatcher: agentFor(undici, limits.timeoutMs),
          signal: controller.signal,
          maxRedirections: 0,
        } as Parameters<Undici["request"]>[1]).catch((error: unknown) => {
          if (controller.signal.aborted) throw new FetchFailure("timeout", `${where} did not answer within ${limits.timeoutMs} ms`);
          throw toFailure(error, where);
        });
        const responseHeaders: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) responseHeaders[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
        }
        const declared = Number(responseHeaders["content-length"]);
        if (Number.isFinite(declared) && declared > limits.maxBytes) {
          discard(response.body);
          throw new FetchFailure("too_large", `${where} declared ${declared} bytes, more than the ${limits.maxBytes} bytes allowed`);
        }
        const chunks: Uint8Array[] = [];
        let read = 0;
        try {
          for await (const chunk of response.body) {
            read += chunk.length;
            if (read > limits.maxBytes) {
              discard(response.body);
              throw new FetchFailure("too_large", `${where} sent more than the ${limits.maxBytes} bytes allowed`);
            }
            chunks.push(chunk);
          }
        } catch (error) {
          if (error instanceof FetchFailure) throw error;
          if (controller.signal.aborted) throw new FetchFailure("timeout", `${where} did not finish its answer within ${limits.timeoutMs} ms`);
          throw toFailure(error, where);
        }
        return { status: response.statusCode, headers: responseHeaders, body: Buffer.concat(chunks) };
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      // Whatever is still under way was left by a stopped core (a CT log that hangs, say): not waited for.
      await Promise.all([...agents.values()].map((agent) => agent.destroy()));
    },
  };
}

function toFailure(error: unknown, where: string): FetchFailure {
  const failure = error instanceof NetFailure ? error : asNetFailure(error, where);
  if (failure.reason === "timeout") return new FetchFailure("timeout", failure.message);
  return new FetchFailure(/certkeeper does not connect/.test(failure.message) ? "refused" : "network", failure.message);
}

/**
 * Drops a body unread, closing its connection. Destroying it makes it emit an "error" (undici's
 * AbortError) once what the server already sent arrives: with no listener that error would be
 * uncaught and end the process, so an answer declared too large would be a way to stop certkeeper.
 */
function discard(body: { on(event: "error", listener: () => void): unknown; destroy(): unknown }): void {
  body.on("error", () => {});
  body.destroy();
}
