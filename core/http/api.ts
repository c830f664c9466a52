/**
 * The request pipeline every operation goes through, in CONTRACT §4's order: authentication, rate
 * limit, permission, body and field validation, then the operation (existence, conflict, limits).
 * Works on web-standard Request and Response, so any HTTP adapter can mount it.
 */
import { Value } from "@sinclair/typebox/value";
import { asCertkeeperError, CertkeeperError, errorBody, quote } from "../base/errors.ts";
import { newId } from "../base/ids.ts";
import { readJsonBody } from "./body.ts";
import { validate } from "../schemas/validate.ts";
import { rateLimitHeaders } from "../auth/rate_limit.ts";
import type { Principal } from "../auth/authenticate.ts";
import type { Operation, OperationInput, OperationResult } from "../operations/_operation.ts";
import type { Services } from "../app/services.ts";

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

export interface Api {
  /** Answers one request for `operation`; `params` are the path parameters the router matched. */
  handle(operation: Operation, request: Request, params: Record<string, string>): Promise<Response>;
  /** Runs `operation` in-process as `principal`: validation and errors exactly as over HTTP. */
  invoke(operation: Operation, principal: Principal, input: Partial<OperationInput>): Promise<OperationResult>;
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
  const { clock, logger, authenticator, rateLimiter } = services;

  function respond(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): Response {
    return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, "x-request-id": requestId, ...headers } });
  }

  function failure(error: unknown, requestId: string, headers: Record<string, string>, request: Request): Response {
    const failed = asCertkeeperError(error);
    if (failed.code === "internal_error") {
      logger.error("request failed", { requestId, method: request.method, path: new URL(request.url).pathname, error: failed.cause });
    }
    return respond(failed.status, errorBody(failed), requestId, { ...headers, ...failed.headers });
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

  async function invoke(operation: Operation, principal: Principal, input: Partial<OperationInput>) {
    const params = input.params ?? {};
    const query = validate(operation.query, input.query ?? {}) as Record<string, string>;
    let body: unknown;
    if (operation.body) {
      body = operation.parseBody ? operation.parseBody(input.body, services) : validate(operation.body, input.body);
    }
    return operation.handle({ principal, services, requestId: "" }, { params, query, body });
  }

  return {
    invoke,

    async handle(operation, request, params) {
      const started = performance.now();
      const requestId = newId("req");
      let headers: Record<string, string> = {};
      let response: Response;
      try {
        const now = clock.now();
        const principal = await authenticator.authenticate(request.headers.get("authorization"), now);
        const limit = await rateLimiter.hit(principal.keyId, principal.limits.requestsPerMinute, now);
        headers = rateLimitHeaders(limit, now);
        if (!limit.allowed) {
          throw new CertkeeperError(
            "rate_limit_exceeded",
            `Rate limit of ${limit.limit} requests per minute exceeded: retry after ${headers["retry-after"]} seconds.`,
          );
        }
        if (operation.access === "write" && principal.role === "member") {
          throw new CertkeeperError("permission_denied", "Keys of members may only read: ask an owner or admin for a key that can write.");
        }
        const input: OperationInput = { params, query: queryOf(request), body: undefined };
        if (operation.body) input.body = await readJsonBody(request);
        const query = validateQuery(operation, input.query);
        let body: unknown;
        if (operation.body) body = operation.parseBody ? operation.parseBody(input.body, services) : validate(operation.body, input.body);
        const result = await operation.handle({ principal, services, requestId }, { params, query, body });
        const meta = result.nextCursor === undefined ? { requestId } : { requestId, nextCursor: result.nextCursor };
        response = respond(operation.status, { data: result.data, meta }, requestId, headers);
      } catch (error) {
        response = failure(error, requestId, headers, request);
      }
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
    if (request.headers.get("authorization")) {
      const now = clock.now();
      const principal = await authenticator.authenticate(request.headers.get("authorization"), now).catch(() => null);
      if (principal) {
        const limit = await rateLimiter.hit(principal.keyId, principal.limits.requestsPerMinute, now);
        headers = rateLimitHeaders(limit, now);
        if (!limit.allowed) {
          error = new CertkeeperError("rate_limit_exceeded", `Rate limit of ${limit.limit} requests per minute exceeded: retry after ${headers["retry-after"]} seconds.`);
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

function queryOf(request: Request): Record<string, string> {
  // No prototype: `?__proto__=1` must be a parameter like any other (and be refused as unknown).
  const query: Record<string, string> = Object.create(null);
  const url = request.url;
  const mark = url.indexOf("?");
  if (mark === -1) return query;
  for (const [key, value] of new URLSearchParams(url.slice(mark + 1))) query[key] = value;
  return query;
}

function validateQuery(operation: Operation, query: Record<string, string>): Record<string, string> {
  if (Value.Check(operation.query, query)) return query;
  for (const key of Object.keys(query)) {
    if (!(key in (operation.query.properties ?? {}))) {
      const allowed = Object.keys(operation.query.properties ?? {});
      throw new CertkeeperError(
        "invalid_request",
        allowed.length === 0
          ? `Unknown query parameter ${quote(key)}: this operation takes none.`
          : `Unknown query parameter ${quote(key)}: the allowed ones are ${allowed.join(", ")}.`,
      );
    }
  }
  return validate(operation.query, query) as Record<string, string>;
}
