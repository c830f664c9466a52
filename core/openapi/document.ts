/**
 * The OpenAPI 3.1 document of the API, generated from the operation list and the same TypeBox schemas
 * that validate requests: nothing here is written twice.
 *
 * @example
 * const document = buildOpenApiDocument(OPERATIONS, { version: "1.2.0" });
 * document.paths["/v1/certificates/{id}"].get.operationId; // "getCertificate"
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import * as certificateSchemas from "../schemas/certificate.ts";
import * as channelSchemas from "../schemas/channel.ts";
import * as commonSchemas from "../schemas/common.ts";
import * as eventSchemas from "../schemas/event.ts";
import type { Operation } from "../operations/operation.ts";
import { SchemaConverter, type JsonSchema } from "./schemas.ts";
import { byStatus, errorResponse, errorsOf, headerRefs, HEADERS, RATE_LIMIT_HEADERS } from "./errors.ts";
import { METRICS_SECURITY_SCHEME, metricsPaths, serviceComponents, servicePaths, SERVICE_TAG } from "./service.ts";

/**
 * Modules whose exported schemas get their export name in `components/schemas` wherever they recur.
 * A schema elsewhere gets a component when it has a `title` (`{ title: "Email config" }` → `EmailConfig`).
 */
const NAMED_SCHEMA_MODULES: ReadonlyArray<Record<string, unknown>> = [
  certificateSchemas,
  channelSchemas,
  commonSchemas,
  eventSchemas,
];

export interface OpenApiOptions {
  /** The API's version, `info.version`; default `0.0.0`. */
  version?: string;
  /** Where the API is served; default: relative to where the document was fetched. */
  servers?: Array<{ url: string; description?: string }>;
  /** More schemas to name in `components/schemas`, by name. */
  schemas?: Record<string, TSchema>;
  /** Documents GET /metrics: the server has CERTKEEPER_METRICS_TOKEN (without it the path is no route). */
  metrics?: boolean;
}

/** An OpenAPI document, loosely typed: plain JSON. */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string; description?: string }>;
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, JsonSchema>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, JsonSchema>;
    headers: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
  [extension: `x-${string}`]: unknown;
}

const SECURITY_SCHEME = "apiKey";

const TAG_DESCRIPTIONS: Record<string, string> = {
  Certificates: "The TLS certificates you monitor: add, list, read, rename, re-check, remove.",
  Channels: "Where notifications go: email, Discord, Slack, signed webhooks.",
  Events: "What happened to your certificates, and the state of each notification.",
};

const DESCRIPTION = `
certkeeper watches TLS certificates and tells you before they expire.

## Authentication
Send an API key in every request to \`/v1\`: \`Authorization: Bearer ck_live_…\` (the scheme is
case-insensitive). A key acts with its creator's role: \`owner\` and \`admin\` keys may do everything,
\`member\` keys may only read (any write answers 403 \`permission_denied\`). A missing key answers 401
\`missing_api_key\`, an unknown one \`invalid_api_key\`, a revoked one \`expired_api_key\`.

## Live and test keys
Keys start with \`ck_live_\` or \`ck_test_\`. What a test key creates is invisible to live keys of the
same organization and the reverse; plan limits count per organization and mode.

## Envelopes
A success is \`{ "data": …, "meta": { "requestId": "req_…" } }\`; lists add \`meta.nextCursor\`, which you
pass back as \`cursor\` for the next page (null on the last page). A failure is
\`{ "error": { "code": "…", "message": "…" } }\` and nothing else. Every response carries
\`X-Request-Id\` with the same \`req_…\` value. Creating answers 201 (an import 202), everything else 200.

## Errors
Each operation below lists the codes it can answer, grouped by HTTP status, with an example of each.
Checks run in this order: authentication, rate limit, permission, body and field validation,
existence, conflict, plan limits. Another organization's resource answers exactly as a missing one
(404). A path that is no route answers 404 \`not_found\`; a route asked with a method it does not take
answers 405 \`method_not_allowed\` with an \`Allow\` header.

## Rate limits
Each key may make its plan's requests per minute (free 60, pro 600, enterprise 6000) over a
60-second window. Every response to a request with a valid key carries \`X-RateLimit-Limit\`,
\`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix seconds); over the limit the answer is 429
\`rate_limit_exceeded\` with \`Retry-After\` in seconds.
`.trim();

/** The OpenAPI 3.1 document of `operations`, plus the service routes (health, this document, /docs). */
export function buildOpenApiDocument(operations: readonly Operation[], options: OpenApiOptions = {}): OpenApiDocument {
  const converter = new SchemaConverter(namedSchemas(options.schemas));
  const paths: OpenApiDocument["paths"] = {};
  const tags: string[] = [];
  for (const operation of operations) {
    const path = openApiPath(operation.path);
    const method = operation.method.toLowerCase();
    if (paths[path]?.[method]) throw new Error(`Two operations answer ${operation.method} ${operation.path}.`);
    (paths[path] ??= {})[method] = operationObject(operation, converter);
    if (!tags.includes(operation.tag)) tags.push(operation.tag);
  }
  Object.assign(paths, servicePaths(converter));
  if (options.metrics) Object.assign(paths, metricsPaths());
  converter.convert(commonSchemas.ErrorEnvelope); // the whole envelope, for readers, beside the narrowed ones
  return {
    openapi: "3.1.0",
    info: { title: "certkeeper", version: options.version ?? "0.0.0", description: DESCRIPTION },
    servers: options.servers ?? [{ url: "/", description: "This server" }],
    tags: [...tags, SERVICE_TAG.name].map((name) => (name === SERVICE_TAG.name ? SERVICE_TAG : tagObject(name))),
    paths,
    components: {
      schemas: converter.components,
      responses: serviceComponents(),
      headers: HEADERS,
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "ck_live_… or ck_test_…",
          description: "An API key: `ck_live_` or `ck_test_` and at least 32 base62 characters. Create one with `npm run certkeeper -- key create`.",
        },
        ...(options.metrics ? METRICS_SECURITY_SCHEME : {}),
      },
    },
  };
}

/** `/v1/certificates/:id` → `/v1/certificates/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

function operationObject(operation: Operation, converter: SchemaConverter): JsonSchema {
  const responses: Record<string, JsonSchema> = {
    [String(operation.status)]: {
      description: operation.status === 201 ? "Created" : operation.status === 202 ? "Accepted" : "OK",
      headers: headerRefs("X-Request-Id", ...RATE_LIMIT_HEADERS),
      content: { "application/json": { schema: converter.convert(operation.response) } },
    },
  };
  for (const { status, codes } of byStatus(errorsOf(operation))) responses[String(status)] = errorResponse(status, codes);
  const parameters = [
    ...parametersOf(pathParameterNames(operation.path), "path", operation.params, converter),
    ...parametersOf(Object.keys(operation.query.properties ?? {}), "query", operation.query, converter),
  ];
  return {
    tags: [operation.tag],
    operationId: operation.id,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    security: [{ [SECURITY_SCHEME]: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.body
      ? {
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: converter.convert(operation.body),
                ...(operation.example?.request !== undefined ? { example: operation.example.request } : {}),
              },
            },
          },
        }
      : {}),
    responses,
  };
}

function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
}

/** One parameter object per name; the schema's description and first example move up to the parameter. */
function parametersOf(names: string[], location: "path" | "query", object: TObject | undefined, converter: SchemaConverter) {
  const required = new Set<string>(object?.required ?? []);
  return names.map((name) => {
    const source: TSchema | undefined = object?.properties?.[name];
    const { description, examples, ...schema } = source ? converter.inline(source) : { type: "string" };
    return {
      name,
      in: location,
      required: location === "path" || required.has(name),
      ...(typeof description === "string" ? { description } : {}),
      schema,
      // A list in the query is one comma-separated parameter (`status=expiring,expired`).
      ...(location === "query" && schema.type === "array" ? { style: "form", explode: false } : {}),
      ...(Array.isArray(examples) && examples.length > 0 ? { example: examples[0] } : {}),
    };
  });
}

function tagObject(name: string): { name: string; description?: string } {
  const description = TAG_DESCRIPTIONS[name];
  return description ? { name, description } : { name };
}

function namedSchemas(extra: Record<string, TSchema> = {}): Record<string, TSchema> {
  const named: Record<string, TSchema> = {};
  for (const module of NAMED_SCHEMA_MODULES) {
    for (const [name, value] of Object.entries(module)) {
      if (typeof value === "object" && value !== null && /^[A-Z]/.test(name)) named[name] = value as TSchema;
    }
  }
  return { ...named, ...extra };
}
