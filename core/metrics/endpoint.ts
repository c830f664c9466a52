/**
 * GET /metrics as a web-standard handler: the bearer token of CERTKEEPER_METRICS_TOKEN, compared in
 * constant time, then the exposition streamed from {@link scrapeMetrics}. An HTTP adapter mounts it only
 * when the token is set; without one, /metrics is no route at all. It logs no request line: the
 * adapter passes its response through core.api.finish, which does, once.
 *
 * @example
 * if (core.services.config.metricsToken) app.get("/metrics", ({ request }) => metricsResponse(core.services, request));
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { CertkeeperError, errorBody } from "../base/errors.ts";
import { newId } from "../base/ids.ts";
import { METRICS_CONTENT_TYPE } from "./exposition.ts";
import { scrapeMetrics } from "./scrape.ts";
import type { ServiceMetrics } from "./scrape.ts";
import type { Config } from "../config/config.ts";
import type { Logger } from "../base/log.ts";
import type { Store } from "../store/ports.ts";
import type { Clock } from "../base/time.ts";

/** What GET /metrics reads of the services (core.services has it all). */
export interface MetricsServices {
  config: Pick<Config, "metricsToken" | "ctSource">;
  logger: Logger;
  store: Store;
  metrics: ServiceMetrics;
  clock: Clock;
}

export async function metricsResponse(services: MetricsServices, request: Request): Promise<Response> {
  const { config, logger, store, metrics, clock } = services;
  // The request line is written once, by the HTTP face that answers (core.api.finish), with this id.
  const requestId = newId("req");

  const refusal = refuse(request.headers.get("authorization"), config.metricsToken);
  if (refusal) {
    return new Response(JSON.stringify(errorBody(refusal)), {
      status: refusal.status,
      headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId },
    });
  }

  const chunks = scrapeMetrics({ store, metrics, now: clock.now(), followsLogs: config.ctSource === "logs" });
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    // Pulled as the client reads: a slow scraper holds one page in memory, not the whole exposition.
    async pull(controller) {
      try {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(encoder.encode(value));
      } catch (error) {
        // Cut the response rather than end it cleanly: a truncated exposition must not pass as a scrape.
        logger.error("metrics scrape failed", { requestId, error });
        controller.error(error);
      }
    },
    async cancel() {
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
