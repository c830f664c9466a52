/**
 * GET /metrics as a web-standard handler: the bearer token of CERTKEEPER_METRICS_TOKEN, compared in
 * constant time, then the exposition streamed from {@link scrapeMetrics}. An HTTP adapter mounts it only
 * when the token is set; without one, /metrics is no route at all. A refusal is thrown as the API's
 * error, for the adapter's core.api.keyless to answer; it logs no request line: keyless does, once.
 *
 * @example
 * if (core.services.config.metricsToken) app.get("/metrics", ({ request }) => core.api.keyless(request, (id) => metricsResponse(core.services, request, id)));
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { asCertkeeperError, CertkeeperError } from "../base/errors.ts";
import { METRICS_CONTENT_TYPE } from "./exposition.ts";
import { scrapeMetrics } from "./scrape.ts";
import type { ServiceMetrics } from "./scrape.ts";
import type { Config } from "../config/config.ts";
import type { Logger } from "../base/log.ts";
import { StorageUnavailableError, type Store } from "../store/ports.ts";
import type { Clock } from "../base/time.ts";

/** What GET /metrics reads of the services (core.services has it all). */
export interface MetricsServices {
  config: Pick<Config, "metricsToken" | "ctSource">;
  logger: Logger;
  store: Store;
  metrics: ServiceMetrics;
  clock: Clock;
}

/** The scrape of `request`, whose id (`requestId`) its answer and what it logs carry. */
export async function metricsResponse(services: MetricsServices, request: Request, requestId: string): Promise<Response> {
  const { config, logger, store, metrics, clock } = services;

  // Answered as the API's error envelope, its code in the request line, by the HTTP face (core.api.keyless).
  const refusal = refuse(request.headers.get("authorization"), config.metricsToken);
  if (refusal) throw refusal;

  const chunks = scrapeMetrics({ store, metrics, now: clock.now(), followsLogs: config.ctSource === "logs" });
  const failed = (error: unknown) => {
    // One line, without the stack of a database that is down: the operator's action is the database's.
    logger.error("metrics scrape failed", { requestId, error: error instanceof StorageUnavailableError ? error.message : error });
  };
  // The first page read before answering: a database that is down is a 503 with its code, not a 200 cut short.
  let first: IteratorResult<string>;
  try {
    first = await chunks.next();
  } catch (error) {
    failed(error);
    throw asCertkeeperError(error);
  }
  const encoder = new TextEncoder();
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) controller.close();
      else controller.enqueue(encoder.encode(first.value));
    },
    // Pulled as the client reads: a slow scraper holds one page in memory, not the whole exposition.
    async pull(controller) {
      let next: IteratorResult<string>;
      try {
        next = await chunks.next();
      } catch (error) {
        if (cancelled) return;
        failed(error);
        // Cut the response rather than end it cleanly: a truncated exposition must not pass as a scrape.
        controller.error(new Error("metrics scrape failed"));
        return;
      }
      // The scraper hung up while the page was read: nothing to send it, nothing failed.
      if (cancelled) return;
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      cancelled = true;
      await chunks.return(undefined);
    },
  });
  return new Response(body, {
    headers: { "content-type": METRICS_CONTENT_TYPE, "x-request-id": requestId, "cache-control": "no-store" },
  });
}

/** Why the request may not read the metrics, or null when its bearer token is the configured one. */
function refuse(authorization: string | null, token: string | undefined): CertkeeperError | null {
  const presented = /^bearer[ \t]+(\S.*)$/i.exec(authorization?.trim() ?? "")?.[1]?.trim();
  if (!presented) {
    return new CertkeeperError(
      "missing_api_key",
      'No metrics token provided: send the header "Authorization: Bearer <token>" with the value of CERTKEEPER_METRICS_TOKEN.',
    );
  }
  // Equal-length digests, so neither the comparison time nor a length check tells anything about the token.
  const digest = (text: string) => createHash("sha256").update(text).digest();
  if (token === undefined || !timingSafeEqual(digest(presented), digest(token))) {
    return new CertkeeperError("invalid_api_key", "The metrics token is wrong: send the value of CERTKEEPER_METRICS_TOKEN.");
  }
  return null;
}
