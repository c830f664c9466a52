/**
 * The routes beside the operations, for the OpenAPI document: health, readiness, the document itself and
 * the interactive reference. None takes an API key.
 */
import { Type } from "@sinclair/typebox";
import { errorEnvelope, errorResponse, headerRefs } from "./errors.ts";
import type { JsonSchema, SchemaConverter } from "./schemas.ts";

export const SERVICE_TAG = {
  name: "Service",
  description: "Health, readiness and this documentation; no API key needed.",
};

const Health = Type.Object({ status: Type.Literal("ok") }, { additionalProperties: false });
const Ready = Type.Object({ status: Type.Literal("ready") }, { additionalProperties: false });
const Unavailable = Type.Object(
  { status: Type.Literal("unavailable"), reason: Type.String({ examples: ["The database does not answer."] }) },
  { additionalProperties: false },
);

/**
 * Shared responses: what any path answers that is no route, a route asked with another method, and
 * either of those asked with a valid key that is over its rate limit (such requests count too).
 */
export function serviceComponents(): Record<string, JsonSchema> {
  return {
    RouteNotFound: errorResponse(404, ["not_found"]),
    MethodNotAllowed: errorResponse(405, ["method_not_allowed"]),
    RouteRateLimited: errorResponse(429, ["rate_limit_exceeded"]),
  };
}

export function servicePaths(converter: SchemaConverter): Record<string, Record<string, JsonSchema>> {
  const json = (schema: JsonSchema) => ({ "application/json": { schema } });
  const requestId = headerRefs("X-Request-Id");
  const get = (operation: JsonSchema) => ({ get: { tags: [SERVICE_TAG.name], security: [], ...operation } });
  return {
    "/healthz": get({
      operationId: "getHealth",
      summary: "Liveness",
      description: "200 while the process is up.",
      responses: { "200": { description: "The process is up", content: json(converter.inline(Health)) } },
    }),
    "/readyz": get({
      operationId: "getReadiness",
      summary: "Readiness",
      description: "200 when the database answers and accepts a small write (within 2 s); 503 when it does not answer, or refuses writes (its disk is full, or it is read-only), until it accepts them again.",
      responses: {
        "200": { description: "The database answers and accepts writes", content: json(converter.inline(Ready)) },
        "503": { description: "The database does not answer, or refuses writes", content: json(converter.inline(Unavailable)) },
      },
    }),
    "/v1/openapi.json": get({
      operationId: "getOpenApiDocument",
      summary: "This OpenAPI document",
      responses: {
        "200": {
          description: "The OpenAPI 3.1 document of every route",
          headers: requestId,
          content: json({
            type: "object",
            required: ["openapi", "info", "paths"],
            properties: { openapi: { type: "string", pattern: "^3\\.1\\.\\d+$" }, info: { type: "object" }, paths: { type: "object" } },
          }),
        },
      },
    }),
    "/docs": get({
      operationId: "getApiReference",
      summary: "Interactive API reference",
      description: "An HTML page that renders this document; everything it loads comes from this server.",
      responses: {
        "200": { description: "The reference page", headers: requestId, content: { "text/html": { schema: { type: "string" } } } },
      },
    }),
    "/docs/{asset}": get({
      operationId: "getApiReferenceAsset",
      summary: "A script or style sheet of the API reference",
      parameters: [{ name: "asset", in: "path", required: true, schema: { type: "string" }, example: "docs.js" }],
      responses: {
        "200": {
          description: "The file",
          headers: requestId,
          content: { "text/javascript": { schema: { type: "string" } }, "text/css": { schema: { type: "string" } } },
        },
        "404": { $ref: "#/components/responses/RouteNotFound" },
      },
    }),
  };
}

/** The security scheme of GET /metrics: the operator's token, not an API key. */
export const METRICS_SECURITY_SCHEME = {
  metricsToken: {
    type: "http",
    scheme: "bearer",
    description: "The value of CERTKEEPER_METRICS_TOKEN, set by whoever runs the server; API keys are not accepted.",
  },
};

/** GET /metrics, documented only where the server has CERTKEEPER_METRICS_TOKEN (elsewhere the path is no route). */
export function metricsPaths(): Record<string, Record<string, JsonSchema>> {
  const example = (code: string, message: string) => ({ summary: code, value: { error: { code, message } } });
  return {
    "/metrics": {
      get: {
        tags: [SERVICE_TAG.name],
        operationId: "getMetrics",
        summary: "Prometheus metrics",
        description:
          "The Prometheus text exposition format (0.0.4): per certificate of every organization " +
          "`certkeeper_certificate_expiry_timestamp_seconds` and `certkeeper_certificate_days_until_expiry` " +
          "(labels organization, mode, domain, port, status), `certkeeper_certificates{status}`, " +
          "`certkeeper_deliveries_pending`, and this process's `certkeeper_checks_total{result}`, " +
          "`certkeeper_check_duration_seconds` and `certkeeper_deliveries_total{type,result}` (attempts). " +
          "Only with `Authorization: Bearer <CERTKEEPER_METRICS_TOKEN>`; without that variable the path is 404.",
        security: [{ metricsToken: [] }],
        responses: {
          "200": {
            description: "The metrics",
            headers: headerRefs("X-Request-Id"),
            content: { "text/plain": { schema: { type: "string" } } },
          },
          "401": {
            description: "The metrics token is missing or wrong: `missing_api_key`, `invalid_api_key`.",
            headers: headerRefs("X-Request-Id"),
            content: {
              "application/json": {
                schema: errorEnvelope(["missing_api_key", "invalid_api_key"]),
                examples: {
                  missing_api_key: example(
                    "missing_api_key",
                    'No metrics token provided: send the header "Authorization: Bearer <token>" with the value of CERTKEEPER_METRICS_TOKEN.',
                  ),
                  invalid_api_key: example("invalid_api_key", "The metrics token is wrong: send the value of CERTKEEPER_METRICS_TOKEN."),
                },
              },
            },
          },
        },
      },
    },
  };
}
