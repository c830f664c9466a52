/**
 * The error side of the OpenAPI document: which codes an operation can answer, grouped by HTTP status,
 * each status with the error envelope narrowed to its codes and a named example per code.
 */
import { ERROR_STATUS, INTERNAL_ERROR_MESSAGE, type ErrorCode, type PublicErrorCode } from "../base/errors.ts";
import { limitMessage } from "../certificates/add_rules.ts";
import { COMMON_ERRORS, type Operation } from "../operations/operation.ts";
import type { JsonSchema } from "./schemas.ts";

/**
 * The codes of reading a request body: an operation with one, and one that takes none but a GET (it
 * refuses a body it would otherwise ignore).
 */
const BODY_ERRORS: ErrorCode[] = ["payload_too_large", "unsupported_media_type"];

/**
 * Every error `operation` can answer: the ones the pipeline gives every authenticated operation, the
 * permission check of writes, the body reading of every operation but a GET, and its own.
 */
export function errorsOf(operation: Operation): ErrorCode[] {
  const codes = new Set<ErrorCode>(COMMON_ERRORS);
  if (operation.access === "write") codes.add("permission_denied");
  for (const code of operation.errors) codes.add(code);
  for (const code of BODY_ERRORS) {
    if (operation.body || operation.method !== "GET") codes.add(code);
    else codes.delete(code);
  }
  return [...codes];
}

/** The code as the wire shows it. */
export function publicCode(code: ErrorCode): PublicErrorCode {
  return code === "certificate_unreachable" ? "certificate_not_found" : code;
}

/** `codes` grouped by HTTP status, ascending, each group's public codes in table order. */
export function byStatus(codes: ErrorCode[]): Array<{ status: number; codes: ErrorCode[] }> {
  const groups = new Map<number, ErrorCode[]>();
  const ordered = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => codes.includes(code));
  for (const code of ordered) groups.set(ERROR_STATUS[code], [...(groups.get(ERROR_STATUS[code]) ?? []), code]);
  return [...groups].sort(([a], [b]) => a - b).map(([status, group]) => ({ status, codes: group }));
}

const STATUS_TITLES: Record<number, string> = {
  400: "The request is malformed or a field is invalid",
  401: "The API key is missing, invalid or revoked",
  402: "A plan limit is reached",
  403: "The key may not do this",
  404: "Not found",
  405: "The route does not take this method",
  409: "Conflict with an existing resource",
  413: "The request body is too large",
  415: "The request body is not JSON",
  422: "No TLS certificate could be retrieved from the domain (DNS failure, refused, timeout, no TLS, refused address); nothing was stored",
  429: "Rate limit exceeded",
  500: "Internal error",
  503: "The database refuses writes (its disk is full, or it is read-only); nothing was changed",
};

const EXAMPLE_ORGANIZATION = "org_8mR2xK5vTq1LwZ9cY4hJ";

/** An example message per code, in the house style (CONTRACT §4, STYLE §4). */
const EXAMPLE_MESSAGES: Record<ErrorCode, string> = {
  invalid_request: 'Field "port" must be a whole number from 1 to 65535; got "70000".',
  invalid_domain: 'Domain "https://example.com/" is not a valid domain: give the host name only, such as "example.com".',
  invalid_channel_type: 'Channel type "sms" is not supported: use email, discord, slack or webhook.',
  invalid_config: 'Field "config.email" must be an email address; got "ops-at-example.com".',
  invalid_webhook_url: 'Webhook URL "ftp://hooks.example.com/x" must be an https URL.',
  missing_api_key: 'No API key provided: include the header "Authorization: Bearer <API_KEY>".',
  invalid_api_key: "The API key is invalid: check that it was copied whole.",
  expired_api_key: "This API key has been revoked: create a new key in the settings area.",
  // The real messages, which name `org update`, the self-hoster's way to raise a limit.
  certificate_limit_reached: limitMessage({ limit: 25, what: "certificates", flag: "certificate-limit", organizationId: EXAMPLE_ORGANIZATION }),
  channel_limit_reached: limitMessage({ limit: 5, what: "channels", flag: "channel-limit", organizationId: EXAMPLE_ORGANIZATION }),
  watch_limit_reached: limitMessage({ limit: 1, what: "watch", flag: "watch-limit", organizationId: EXAMPLE_ORGANIZATION }),
  permission_denied: "Members may only read: ask an owner or admin to make this change, or for a key that can.",
  certificate_not_found: 'No certificate with id "cert_3kT9vQm2Xy7LpA0bN5cZ": list your certificates with GET /v1/certificates.',
  channel_not_found: 'No channel with id "ch_7hQ2mZk1Lr0pXw3TbN6a": list your channels with GET /v1/channels.',
  watch_not_found: 'No watch with id "wch_2bV8nQ4kLm9XpT1cR7dZ": list your watches with GET /v1/watches.',
  import_not_found: 'No import with id "imp_4gT7vQm2Xy7LpA0bN5cZ": the id is the one POST /v1/imports answered.',
  not_found: 'No route "GET /v1/certificate": see /docs for the API.',
  method_not_allowed: 'PUT is not allowed on "/v1/certificates": use GET, POST.',
  duplicate_domain: '"example.com:443" is already monitored: get it with GET /v1/certificates?domain=example.com.',
  duplicate_watch: '"example.com" is already watched: list your watches with GET /v1/watches.',
  payload_too_large: "The request body is larger than 64 KiB.",
  unsupported_media_type: 'The request body must be JSON: send it with "Content-Type: application/json" (got "text/plain").',
  certificate_unreachable:
    'No TLS certificate could be retrieved from "example.com:443": the name does not resolve. Nothing was stored.',
  rate_limit_exceeded: "Too many requests: your organization allows 60 per minute for each API key and signed-in user; retry after 42 seconds.",
  internal_error: INTERNAL_ERROR_MESSAGE,
  storage_unavailable:
    "The database's disk is full, so nothing can be saved: nothing was changed. Try again once an operator has freed space.",
};

const counter = { type: "string", pattern: "^[0-9]+$" };

/** The response headers, as `components/headers`. */
export const HEADERS = {
  "X-Request-Id": {
    description: "The request's id, `req_…`, the same as `meta.requestId`; quote it when reporting a problem.",
    required: true,
    schema: { type: "string", pattern: "^req_[0-9A-Za-z]+$" },
  },
  "X-RateLimit-Limit": { description: "Requests allowed per minute for this key.", required: true, schema: counter },
  "X-RateLimit-Remaining": { description: "Requests left in the current window.", required: true, schema: counter },
  "X-RateLimit-Reset": { description: "Unix time (seconds) at which the window resets.", required: true, schema: counter },
  "Retry-After": { description: "Whole seconds (at least 1) to wait before retrying.", required: true, schema: counter },
  Allow: { description: "The methods the route takes.", required: true, schema: { type: "string" } },
} satisfies Record<string, JsonSchema>;

export type HeaderName = keyof typeof HEADERS;

/** References to `components/headers`, by name. */
export function headerRefs(...names: HeaderName[]): Record<string, JsonSchema> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** Every response to a request with a valid key carries these (CONTRACT §8). */
export const RATE_LIMIT_HEADERS: HeaderName[] = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

/** The error envelope, its `code` narrowed to `codes`. */
export function errorEnvelope(codes: PublicErrorCode[]): JsonSchema {
  return {
    type: "object",
    additionalProperties: false,
    required: ["error"],
    properties: {
      error: {
        type: "object",
        additionalProperties: false,
        required: ["code", "message"],
        properties: {
          code: { type: "string", enum: codes },
          message: { type: "string", description: "Sentence case; names the field or value and what to do next." },
        },
      },
    },
  };
}

/** The response object for one error status of an operation. */
export function errorResponse(status: number, codes: ErrorCode[]): JsonSchema {
  const publicCodes = [...new Set(codes.map(publicCode))];
  // Rate-limit headers come with every error after authentication too; declared where they matter.
  const names: HeaderName[] = ["X-Request-Id"];
  if (status === 429) names.push(...RATE_LIMIT_HEADERS, "Retry-After");
  if (status === 405) names.push("Allow");
  const examples = Object.fromEntries(
    codes.map((code) => [
      publicCode(code),
      { summary: publicCode(code), value: { error: { code: publicCode(code), message: EXAMPLE_MESSAGES[code] } } },
    ]),
  );
  return {
    description: `${STATUS_TITLES[status] ?? "Error"}: ${publicCodes.map((code) => `\`${code}\``).join(", ")}.`,
    headers: headerRefs(...names),
    content: { "application/json": { schema: errorEnvelope(publicCodes), examples } },
  };
}
