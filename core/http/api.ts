/**
 * The HTTP face of the request pipeline: a web-standard Request in, a Response out, so any HTTP
 * adapter can mount it. Each request runs through core/pipeline's runOperation with its
 * Authorization header as the caller, and is logged once here.
 */
import { asCertkeeperError, CertkeeperError, errorBody, quote } from "../base/errors.ts";
import { newId } from "../base/ids.ts";
import { readJsonBody } from "./body.ts";
import { admit, envelopeJson, principalOf, runOperation, type Caller, type Outcome } from "../pipeline/pipeline.ts";
import type { Operation } from "../operations/operation.ts";
import type { Services } from "../operations/services.ts";

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

/**
 * Longest query string (bytes after `?`) an operation reads: every list filter together fits in a
 * tenth of it. Longer: 400 `invalid_request`, in the pipeline's order (after the key is checked).
 */
export const MAX_QUERY_BYTES = 8 * 1024;

export interface Api {
  /** Answers one request for `operation`; `params` are the path parameters the router matched. */
  handle(operation: Operation, request: Request, params: Record<string, string>): Promise<Response>;
  notFound(request: Request): Promise<Response>;
  methodNotAllowed(request: Request, allowed: string[]): Promise<Response>;
  /** The envelope for a failure outside any operation (the HTTP adapter's last resort). */
  internalError(request: Request): Response;
  /**
   * For responses made outside the pipeline (health, docs, metrics, pages): gives them an
   * X-Request-Id if they have none, and writes their request line (health probes pass "debug").
   */
  finish(request: Request, response: Response, options?: { started?: number; level?: "info" | "debug" }): Response;
}

export function createApi(services: Services): Api {
  const { logger } = services;

  function respond(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): Response {
    return respondJson(status, JSON.stringify(body), requestId, headers);
  }

  function respondJson(status: number, json: string, requestId: string, headers: Record<string, string> = {}): Response {
    return new Response(json, { status, headers: { ...JSON_HEADERS, "x-request-id": requestId, ...headers } });
  }

  function logRequest(request: Request, status: number, requestId: string, started: number, level: "info" | "debug" = "info") {
    if (!logger.enabled(level)) return;
    logger[level]("request", {
      requestId,
      method: request.method,
      path: pathOf(request),
      status,
      ms: Math.round((performance.now() - started) * 100) / 100,
    });
  }

  /** The response to an outcome; an unexpected failure is logged with the request id, never shown. */
  function answer(outcome: Outcome, requestId: string, request: Request): Response {
    if (!outcome.ok && outcome.error.code === "internal_error") {
      logger.error("request failed", { requestId, method: request.method, path: pathOf(request), error: outcome.error.cause });
    } else if (!outcome.ok && outcome.error.code === "storage_unavailable") {
      // Not the caller's doing and not a bug: the operator has to free space or make the database writable.
      logger.error("the database refuses writes", { requestId, method: request.method, path: pathOf(request), message: outcome.error.message });
    }
    const { status, json } = envelopeJson(outcome, requestId);
    return respondJson(status, json, requestId, outcome.headers);
  }

  return {
    async handle(operation, request, params) {
      const started = performance.now();
      const requestId = newId("req");
      const size = querySize(request);
      const outcome = await runOperation(services, {
        operation,
        caller: { kind: "api_key", authorization: request.headers.get("authorization") },
        params,
        ...(size > MAX_QUERY_BYTES
          ? { queryError: new CertkeeperError("invalid_request", `The query string is ${size} bytes long; at most ${MAX_QUERY_BYTES} are accepted.`) }
          : { query: queryOf(request) }),
        readBody: () => readJsonBody(request, operation.maxBodyBytes),
        requestId,
      });
      const response = answer(outcome, requestId, request);
      logRequest(request, response.status, requestId, started);
      return response;
    },

    notFound: (request) =>
      refuseRoute(request, new CertkeeperError("not_found", `No route ${quote(`${request.method} ${pathOf(request)}`)}: see /docs for the API.`)),

    methodNotAllowed: (request, allowed) =>
      refuseRoute(
        request,
        new CertkeeperError("method_not_allowed", `${request.method} is not allowed on ${quote(pathOf(request))}: use ${allowed.join(", ")}.`, {
          headers: { allow: allowed.join(", ") },
        }),
      ),

    internalError(request) {
      const requestId = newId("req");
      logRequest(request, 500, requestId, performance.now());
      return respond(500, errorBody(asCertkeeperError(undefined)), requestId);
    },

    finish(request, response, options = {}) {
      let requestId = response.headers.get("x-request-id");
      if (!requestId) {
        requestId = newId("req");
        response.headers.set("x-request-id", requestId);
      }
      logRequest(request, response.status, requestId, options.started ?? performance.now(), options.level);
      return response;
    },
  };

  /**
   * A route that does not exist, or a method it does not take. A valid key is still counted and shown
   * its rate limit (every response to a valid key carries it), and over the limit the answer is 429;
   * without a valid key the route's absence is all there is to say.
   */
  async function refuseRoute(request: Request, refusal: CertkeeperError): Promise<Response> {
    const started = performance.now();
    const requestId = newId("req");
    let headers: Record<string, string> = {};
    let error = refusal;
    const authorization = request.headers.get("authorization");
    if (authorization) {
      const caller: Caller = { kind: "api_key", authorization };
      const principal = await principalOf(services, caller).catch(() => null);
      if (principal) {
        try {
          headers = await admit(services, principal);
        } catch (limited) {
          error = asCertkeeperError(limited);
        }
      }
    }
    const response = respond(error.status, errorBody(error), requestId, { ...headers, ...error.headers });
    logRequest(request, response.status, requestId, started);
    return response;
  }
}

/** The path of a request URL, without parsing the whole URL. */
function pathOf(request: Request): string {
  const url = request.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.indexOf("?", start);
  return start === -1 ? "/" : url.slice(start, end === -1 ? undefined : end);
}

/** Bytes of the query string of a request URL (0 without one). */
function querySize(request: Request): number {
  const mark = request.url.indexOf("?");
  return mark === -1 ? 0 : request.url.length - mark - 1;
}

/** The query of a request URL; a parameter given more than once, as an array of its values. */
function queryOf(request: Request): Record<string, string | string[]> {
  // No prototype: `?__proto__=1` must be a parameter like any other (and be refused as unknown).
  const query: Record<string, string | string[]> = Object.create(null);
  const url = request.url;
  const mark = url.indexOf("?");
  if (mark === -1) return query;
  for (const [key, value] of new URLSearchParams(url.slice(mark + 1))) {
    const seen = query[key];
    if (seen === undefined) query[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else query[key] = [seen, value];
  }
  return query;
}
