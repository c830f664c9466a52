/**
 * The HTTP face of the request pipeline: a web-standard Request in, a Response out, so any HTTP
 * adapter can mount it. Each request runs through core/pipeline's runOperation with its
 * Authorization header as the caller, and is logged once here.
 */
import { asCertkeeperError, CertkeeperError, errorBody, quote } from "../base/errors.ts";
import { newId } from "../base/ids.ts";
import { MAX_BODY_DEPTH, readJsonBody, readNoBody } from "./body.ts";
import { urlEncodedPairs } from "./url_encoded.ts";
import { admit, callerFields, envelopeJson, principalOf, runOperation, type Caller, type Outcome } from "../pipeline/pipeline.ts";
import type { Principal } from "../auth/authenticate.ts";
import type { LogFields } from "../base/log.ts";
import type { Operation } from "../operations/operation.ts";
import type { Services } from "../operations/services.ts";

const JSON_TYPE = "application/json; charset=utf-8";

/**
 * Longest query string (bytes after `?`) an operation reads: every list filter together fits in a
 * tenth of it. Longer: 400 `invalid_request`, in the pipeline's order (after the key is checked).
 */
export const MAX_QUERY_BYTES = 8 * 1024;

export interface Api {
  /** Answers one request for `operation`; `params` are the path parameters the router matched. */
  handle(operation: Operation, request: Request, params?: Record<string, string>): Promise<Response>;
  notFound(request: Request): Promise<Response>;
  /** The refusal of a path no route serves (thrown inside {@link Api.keyless}, answered as notFound's). */
  noRoute(request: Request): CertkeeperError;
  methodNotAllowed(request: Request, allowed: string[]): Promise<Response>;
  /** The envelope for a failure outside any operation (the HTTP adapter's last resort). */
  internalError(request: Request): Response;
  /**
   * For responses made outside the pipeline (health, docs, metrics, pages): gives them an
   * X-Request-Id if they have none, and writes their request line (health probes pass "debug"), with
   * `fields` (a page's user id and error code).
   */
  finish(request: Request, response: Response, options?: { started?: number; level?: "info" | "debug"; fields?: LogFields }): Response;
  /**
   * A route that needs no key (documentation, metrics), answered by `produce`: a valid API key sent to
   * it is still counted and shown its rate limit (CONTRACT §8), and over the limit refused with 429;
   * then {@link Api.finish}. `produce` is given the request's id, for its answer and what it logs. A
   * `CertkeeperError` it throws (a wrong metrics token, an unknown file) is answered as the API's error
   * envelope with that id, its code in the request line. (Health probes do not read keys: they answer
   * whatever the database does.)
   */
  keyless(request: Request, produce: (requestId: string) => Response | Promise<Response>): Promise<Response>;
}

export function createApi(services: Services): Api {
  const { logger } = services;

  function respond(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): Response {
    return respondJson(status, JSON.stringify(body), requestId, headers);
  }

  function respondJson(status: number, json: string, requestId: string, headers?: Record<string, string>): Response {
    // Built in place, not spread: a response per request.
    const all: Record<string, string> = { "content-type": JSON_TYPE, "x-request-id": requestId };
    for (const name in headers) all[name] = headers[name]!;
    return new Response(json, { status, headers: all });
  }

  /** The request line (CONTRACT §10, §23): with the error code of a failed request, and who made it (key id or user id). */
  function logRequest(request: Request, status: number, requestId: string, started: number, level: "info" | "debug" = "info", fields?: LogFields, url = request.url) {
    if (!logger.enabled(level)) return;
    const line = requestLine(request, status, requestId, started, url);
    for (const key in fields) line[key] = fields[key];
    logger[level]("request", line);
  }

  /** The error code (when it failed) and the caller of an outcome, for its request line. */
  function outcomeFields(outcome: Outcome): LogFields {
    const fields: LogFields = outcome.ok ? {} : { code: outcome.error.code === "certificate_unreachable" ? "certificate_not_found" : outcome.error.code };
    // A revoked key is refused, but named: who still sends it is what the operator needs to find.
    if (!outcome.ok && outcome.revokedKeyId) fields.keyId = outcome.revokedKeyId;
    return callerFields(outcome.principal, fields);
  }

  /** The response to an outcome; an unexpected failure is logged with the request id, never shown. */
  function answer(outcome: Outcome, requestId: string, request: Request): Response {
    if (!outcome.ok && outcome.error.code === "internal_error") {
      logger.error("request failed", { requestId, method: request.method, path: loggedPath(pathOf(request.url)), error: outcome.error.cause });
    } else if (!outcome.ok && outcome.error.code === "storage_unavailable") {
      // Not the caller's doing and not a bug: the operator has to free space or make the database writable.
      logger.error("the database refuses writes", { requestId, method: request.method, path: loggedPath(pathOf(request.url)), message: outcome.error.message });
    }
    const { status, json } = envelopeJson(outcome, requestId);
    return respondJson(status, json, requestId, outcome.headers);
  }

  const noRoute = (request: Request) => new CertkeeperError("not_found", `No route ${quote(`${request.method} ${pathOf(request.url)}`)}: see /docs for the API.`);

  return {
    async handle(operation, request, params) {
      const started = performance.now();
      const requestId = newId("req");
      // Read once: each read of a request's url makes the string anew.
      const url = request.url;
      const size = querySize(url);
      const outcome = await runOperation(services, {
        operation,
        caller: { kind: "api_key", authorization: request.headers.get("authorization") },
        params: params === undefined ? params : routeParams(operation.path, url, params),
        ...queryOrError(url, size),
        readBody: operation.body
          ? () => readJsonBody(request, operation.maxBodyBytes, MAX_BODY_DEPTH + (operation.bodyWrapLevels ?? 0))
          : operation.method === "GET"
            ? undefined
            : () => readNoBody(request),
        requestId,
      });
      const response = answer(outcome, requestId, request);
      logRequest(request, response.status, requestId, started, "info", outcomeFields(outcome), url);
      return response;
    },

    notFound: (request) => refuseRoute(request, noRoute(request)),

    noRoute,

    methodNotAllowed: (request, allowed) =>
      refuseRoute(
        request,
        new CertkeeperError("method_not_allowed", `${request.method} is not allowed on ${quote(pathOf(request.url))}: use ${allowed.join(", ")}.`, {
          headers: { allow: allowed.join(", ") },
        }),
      ),

    internalError(request) {
      const requestId = newId("req");
      logRequest(request, 500, requestId, performance.now(), "info", { code: "internal_error" });
      return respond(500, errorBody(asCertkeeperError(undefined)), requestId);
    },

    async keyless(request, produce) {
      const started = performance.now();
      const requestId = newId("req");
      const key = await presentedKey(request);
      if (key.limited) {
        const response = respond(key.limited.status, errorBody(key.limited), requestId, key.headers);
        logRequest(request, response.status, requestId, started, "info", { code: key.limited.code, ...callerFields(key.principal) });
        return response;
      }
      let response: Response;
      try {
        response = await produce(requestId);
      } catch (error) {
        if (!(error instanceof CertkeeperError)) throw error;
        const refused = respond(error.status, errorBody(error), requestId, { ...key.headers, ...error.headers });
        logRequest(request, refused.status, requestId, started, "info", { code: error.code, ...callerFields(key.principal) });
        return refused;
      }
      for (const name in key.headers) response.headers.set(name, key.headers[name]!);
      response.headers.set("x-request-id", requestId);
      return this.finish(request, response, { started, fields: callerFields(key.principal) });
    },

    finish(request, response, options = {}) {
      let requestId = response.headers.get("x-request-id");
      if (!requestId) {
        requestId = newId("req");
        response.headers.set("x-request-id", requestId);
      }
      logRequest(request, response.status, requestId, options.started ?? performance.now(), options.level, options.fields);
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
    const key = await presentedKey(request);
    const error = key.limited ?? refusal;
    const response = respond(error.status, errorBody(error), requestId, { ...key.headers, ...error.headers });
    logRequest(request, response.status, requestId, started, "info", { code: error.code, ...callerFields(key.principal) });
    return response;
  }

  /**
   * The API key a request outside any operation carries, if it is a valid one: counted against its
   * rate limit, with the headers to show it (`limited`: the 429 when over the limit). Anything else in
   * Authorization (no key, a revoked or unknown one, the metrics token) counts nothing.
   */
  async function presentedKey(request: Request): Promise<{ principal?: Principal; headers: Record<string, string>; limited?: CertkeeperError }> {
    const authorization = request.headers.get("authorization");
    if (!authorization) return { headers: {} };
    const caller: Caller = { kind: "api_key", authorization };
    const principal = await principalOf(services, caller).catch(() => undefined);
    if (!principal) return { headers: {} };
    try {
      return { principal, headers: await admit(services, principal) };
    } catch (refused) {
      const error = asCertkeeperError(refused);
      // Over the limit: refused. A database that cannot count (down, full) costs the route nothing.
      if (error.code !== "rate_limit_exceeded") return { headers: {} };
      return { principal, headers: error.headers ?? {}, limited: error };
    }
  }
}

/**
 * A route's parameters as the router decoded them, except each one it could not decode (a broken
 * %-escape: Elysia's router gives null, Bun's a U+FFFD in its place): that one as the URL spells it. An id of that spelling exists
 * nowhere, so the operation (or page) answers its own not-found, as for any unknown id (one decoding
 * to U+0000 is written so by the pipeline, for every face). `template` is the route's path
 * (`/v1/certificates/:id`).
 */
export function routeParams(template: string, url: string, params: Record<string, string>): Record<string, string> {
  let decoded = true;
  // Bun's own router decodes a broken escape to U+FFFD rather than giving null: told apart below.
  for (const key in params) if (typeof params[key] !== "string" || params[key].includes("\uFFFD")) decoded = false;
  if (decoded) return params;
  const segments = pathOf(url).split("/");
  const result: Record<string, string> = { ...params };
  template.split("/").forEach((part, i) => {
    const name = part.startsWith(":") ? part.slice(1) : null;
    if (name === null) return;
    const spelled = segments[i] ?? "";
    if (typeof result[name] !== "string" || (result[name].includes("\uFFFD") && !decodes(spelled))) result[name] = spelled;
  });
  return result;
}

/** The path of a request URL, without parsing the whole URL. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.indexOf("?", start);
  return start === -1 ? "/" : url.slice(start, end === -1 ? undefined : end);
}

/**
 * A request line's own fields (CONTRACT §10, §23), for the line every face writes for a request (the
 * callers add the error code and who made it): its id, method, path (a key in it masked), status and
 * time taken since `started` (a performance.now()).
 */
export function requestLine(request: Request, status: number, requestId: string, started: number, url = request.url): LogFields {
  return { requestId, method: request.method, path: loggedPath(pathOf(url)), status, ms: Math.round((performance.now() - started) * 100) / 100 };
}

/**
 * A path as the request line shows it: an API key a client put in it (a URL built wrongly) masked, as
 * the log never holds a key; its prefix kept, so the mistake can be found. Only a path that may hold
 * one is searched.
 */
export function loggedPath(path: string): string {
  return path.includes("ck_") ? path.replace(/ck_(live|test)_[0-9A-Za-z]{6,}/g, "ck_$1_********") : path;
}

/** Bytes of the query string of a request URL (0 without one). */
function querySize(url: string): number {
  const mark = url.indexOf("?");
  return mark === -1 ? 0 : url.length - mark - 1;
}

/** The query of a request URL, or why it is refused (too long, %-escapes that are not UTF-8). */
function queryOrError(url: string, size: number): { query: Record<string, string | string[]> } | { queryError: CertkeeperError } {
  if (size > MAX_QUERY_BYTES) return { queryError: new CertkeeperError("invalid_request", `The query string is ${size} bytes long; at most ${MAX_QUERY_BYTES} are accepted.`) };
  const query = queryOf(url);
  return query ? { query } : { queryError: new CertkeeperError("invalid_request", "The query string has %-escapes that do not decode to UTF-8.") };
}

/** The query of a request URL (a parameter given more than once, as an array of its values), or null when its %-escapes are not UTF-8. */
function queryOf(url: string): Record<string, string | string[]> | null {
  // No prototype: `?__proto__=1` must be a parameter like any other (and be refused as unknown).
  const query: Record<string, string | string[]> = Object.create(null);
  const mark = url.indexOf("?");
  if (mark === -1) return query;
  const pairs = urlEncodedPairs(url.slice(mark + 1));
  if (pairs === null) return null;
  for (const [key, value] of pairs) {
    const seen = query[key];
    if (seen === undefined) query[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else query[key] = [seen, value];
  }
  return query;
}

/** Whether a path segment's %-escapes all decode (to UTF-8). */
function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}
