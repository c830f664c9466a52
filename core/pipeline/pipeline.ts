/**
 * The one request pipeline. Whatever the face (HTTP, the embedding API, the settings area), a call of
 * an operation goes through {@link runOperation}, in CONTRACT §4's order: the principal, the rate
 * limit, the permission, the validation of path, query and body, then the operation itself (existence,
 * conflict, limits). Its outcome is rendered by {@link envelope}. No face repeats a step.
 */
import { CertkeeperError, asCertkeeperError, errorBody } from "../base/errors.ts";
import type { Mode, OrganizationRecord, UserRecord } from "../base/records.ts";
import { RevokedKeyError, type Principal } from "../auth/authenticate.ts";
import { rateLimitHeaders } from "../auth/rate_limit.ts";
import { authorize } from "../auth/permission.ts";
import { validate, validateQuery } from "../schemas/validate.ts";
import type { Operation, OperationResult } from "../operations/operation.ts";
import type { Services } from "../operations/services.ts";

/** A signed-in user of the settings area and their organization. */
export interface Actor {
  user: UserRecord;
  organization: OrganizationRecord;
}

/** Who calls, as each face knows it. */
export type Caller =
  /** An HTTP request: its Authorization header. */
  | { kind: "api_key"; authorization: string | null }
  /** A signed-in user of the settings area, acting in one mode as a key of theirs would. */
  | { kind: "session"; actor: Actor; mode: Mode }
  /** The app embedding certkeeper: trusted, an owner of its organization, not rate limited. */
  | { kind: "host"; principal: Principal };

export interface Call {
  operation: Operation;
  caller: Caller;
  /** Path parameters, as the router matched them (or the embed API's arguments). */
  params?: Record<string, unknown>;
  /** Query parameters: strings as in a URL (repeated ones as arrays), or values of their schema's type. */
  query?: Record<string, unknown>;
  /** Why the query could not be read at all (HTTP: one over MAX_QUERY_BYTES): refused at validation, after the caller is known. */
  queryError?: CertkeeperError;
  /** The request body (in-process faces). */
  body?: unknown;
  /** How to read the body instead (HTTP): only once the caller is known and may send it. */
  readBody?: () => Promise<unknown>;
  requestId?: string;
  /**
   * True when this call was already counted against the rate limit as part of one action (a
   * dashboard page that lists certificates and channels is one action).
   */
  admitted?: boolean;
}

/**
 * What a call came to: the operation's result, or the error to answer; with the rate-limit headers
 * either way, and who made it once known (for the request line: the key id or user id, never the key).
 */
export type Outcome =
  | { ok: true; status: number; result: OperationResult; headers: Record<string, string>; principal?: Principal }
  | { ok: false; error: CertkeeperError; headers: Record<string, string>; principal?: Principal; revokedKeyId?: string };

/** Runs one call through every step; never throws (an unexpected failure is an `internal_error` outcome). */
export async function runOperation(services: Services, call: Call): Promise<Outcome> {
  const { operation } = call;
  let headers: Record<string, string> = {};
  let principal: Principal | undefined;
  try {
    principal = await principalOf(services, call.caller);
    // The embedding host is the process itself: it is not rate limited.
    if (!call.admitted && call.caller.kind !== "host") headers = await admit(services, principal);
    authorize(principal.role, operation.access);
    // Over HTTP, read for every operation but a GET: one that takes no body refuses one it would ignore.
    const raw = call.readBody ? await call.readBody() : call.body;
    const params = operation.params ? (validate(operation.params, spelledParams(call.params ?? {})) as Record<string, string>) : {};
    if (call.queryError) throw call.queryError;
    const query = validateQuery(operation.query, call.query ?? {}) as Record<string, unknown>;
    let body: unknown;
    if (operation.body) body = operation.parseBody ? operation.parseBody(raw, services) : validate(operation.body, raw);
    const result = await operation.handle({ principal, services, requestId: call.requestId ?? "", host: call.caller.kind === "host" }, { params, query, body });
    return { ok: true, status: operation.status, result, headers, principal };
  } catch (error) {
    const failed = asCertkeeperError(error);
    const revokedKeyId = failed instanceof RevokedKeyError ? failed.keyId : undefined;
    return { ok: false, error: failed, headers: { ...headers, ...failed.headers }, principal, ...(revokedKeyId ? { revokedKeyId } : {}) };
  }
}

/**
 * Path parameters as given, one holding U+0000 written as a URL spells it (`%00`): an id like that
 * names nothing, so the operation answers its own not-found, from every face.
 */
function spelledParams(params: Record<string, unknown>): Record<string, unknown> {
  for (const key in params) {
    const value = params[key];
    if (typeof value === "string" && value.includes("\u0000")) {
      return Object.fromEntries(Object.entries(params).map(([name, v]) => [name, typeof v === "string" ? v.replaceAll("\u0000", "%00") : v]));
    }
  }
  return params;
}

/** {@link runOperation} for the in-process faces: the operation's result, or throws its error. */
export async function callOperation(services: Services, call: Call): Promise<OperationResult> {
  const outcome = await runOperation(services, call);
  if (!outcome.ok) throw outcome.error;
  return outcome.result;
}

/** The body and status an outcome is answered with: CONTRACT §4's envelopes. */
export function envelope(outcome: Outcome, requestId: string): { status: number; body: unknown } {
  if (!outcome.ok) return { status: outcome.error.status, body: errorBody(outcome.error) };
  const { data, nextCursor } = outcome.result;
  return { status: outcome.status, body: { data, meta: metaOf(requestId, nextCursor) } };
}

/**
 * {@link envelope} as the JSON text a response carries. Data the operation rendered already
 * (`dataJson`) is set into the envelope as it is, not built and serialised again.
 */
export function envelopeJson(outcome: Outcome, requestId: string): { status: number; json: string } {
  if (outcome.ok && outcome.result.dataJson !== undefined) {
    const meta = JSON.stringify(metaOf(requestId, outcome.result.nextCursor));
    return { status: outcome.status, json: `{"data":${outcome.result.dataJson},"meta":${meta}}` };
  }
  const { status, body } = envelope(outcome, requestId);
  return { status, json: JSON.stringify(body) };
}

/** Who made a call, for its request line: the key id (API keys) and the user id; never the key. */
export function callerFields<T extends Record<string, unknown> = Record<string, string>>(principal: Principal | undefined, into: T = {} as T): T {
  const fields = into as Record<string, unknown>;
  if (!principal) return into;
  if (principal.keyId.startsWith("key_")) {
    fields.keyId = principal.keyId;
    fields.userId = principal.userId;
  } else if (principal.userId) fields.userId = principal.userId;
  else fields.keyId = principal.keyId;
  return into;
}

const metaOf = (requestId: string, nextCursor: string | null | undefined) => (nextCursor === undefined ? { requestId } : { requestId, nextCursor });

/** The principal a caller acts as; an API key is authenticated (401 when missing, invalid or revoked). */
export async function principalOf(services: Services, caller: Caller): Promise<Principal> {
  switch (caller.kind) {
    case "api_key":
      return services.authenticator.authenticate(caller.authorization, services.clock.now());
    case "session":
      return {
        keyId: `session:${caller.actor.user.id}`,
        userId: caller.actor.user.id,
        role: caller.actor.user.role,
        scope: { organizationId: caller.actor.organization.id, mode: caller.mode },
        limits: caller.actor.organization.limits,
      };
    case "host":
      return caller.principal;
  }
}

/**
 * Counts one request of `principal` against its organization's requests per minute (CONTRACT §8) and
 * returns the X-RateLimit-* headers; past the limit, throws 429 `rate_limit_exceeded` carrying them.
 */
export async function admit(services: Services, principal: Principal): Promise<Record<string, string>> {
  const now = services.clock.now();
  const limit = await services.rateLimiter.hit(principal.keyId, principal.limits.requestsPerMinute, now);
  const headers = rateLimitHeaders(limit, now);
  if (!limit.allowed) {
    throw new CertkeeperError(
      "rate_limit_exceeded",
      `Too many requests: your organization allows ${limit.limit} per minute for each API key and signed-in user; ` +
        `retry after ${headers["retry-after"]} seconds.`,
      { headers },
    );
  }
  return headers;
}
