/**
 * Checks an HTTP response against the OpenAPI document: the route and status must be declared, the
 * content type must be one the document names, the required headers must be there, and a JSON body
 * must match the schema (Ajv, JSON Schema 2020-12, formats checked). A path that is no route must
 * answer the document's RouteNotFound; a route asked with another method, its MethodNotAllowed.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { OpenApiDocument } from "../../core/openapi/document.ts";

type Json = { [key: string]: unknown };

export interface ResponseToCheck {
  method: string;
  /** The path actually requested, with any query. */
  path: string;
  status: number;
  headers?: Headers;
  /** The body, parsed when it was JSON, else its text. */
  body: unknown;
}

const COMPONENTS_ID = "urn:certkeeper:openapi-components";

interface Route {
  template: string;
  pattern: RegExp;
  literalSegments: number;
}

export class OpenApiChecker {
  readonly #document: OpenApiDocument;
  readonly #routes: Route[];
  readonly #ajv: Ajv2020;
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    this.#document = document;
    this.#routes = Object.keys(document.paths).map((template) => {
      const segments = template.split("/");
      const source = segments.map((s) => (/^\{[^}]+\}$/.test(s) ? "[^/]+" : escapeRegExp(s))).join("/");
      return { template, pattern: new RegExp(`^${source}$`), literalSegments: segments.filter((s) => !s.startsWith("{")).length };
    });
    this.#ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats(this.#ajv);
    this.#ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(document.components.schemas) });
  }

  /** The ways `response` departs from the document; empty when it conforms, or when it is no API path (a web page). */
  problems(response: ResponseToCheck): string[] {
    if (!isApiPath(response.path)) return [];
    const method = response.method.toUpperCase() === "HEAD" ? "get" : response.method.toLowerCase();
    const route = this.#route(response.path);
    // A valid key over its limit is refused before the route's absence is told (CONTRACT §4's order).
    if ((!route || !this.#document.paths[route.template]![method]) && response.status === 429) {
      return this.#checkResponse(response, "#/components/responses/RouteRateLimited", "no route, rate limited");
    }
    if (!route) {
      if (response.status !== 404) return [`no route of the document matches ${response.path}, yet the answer is ${response.status}, not 404`];
      return this.#checkResponse(response, "#/components/responses/RouteNotFound", "no route");
    }
    const item = this.#document.paths[route.template]!;
    if (!item[method]) {
      if (response.status !== 405) {
        return [`${route.template} declares no ${method.toUpperCase()}, yet the answer is ${response.status}, not 405`];
      }
      const problems = this.#checkResponse(response, "#/components/responses/MethodNotAllowed", `${route.template}, another method`);
      const allowed = Object.keys(item).map((m) => m.toUpperCase()).sort().join(", ");
      const allow = response.headers?.get("allow");
      if (allow !== null && allow !== undefined && normalizeList(allow) !== allowed) {
        problems.push(`Allow is "${allow}", but the document's methods for ${route.template} are ${allowed}`);
      }
      return problems;
    }
    const responses = (item[method] as Json).responses as Json;
    const key = [String(response.status), `${String(response.status)[0]}XX`, "default"].find((k) => k in responses);
    if (!key) {
      return [`status ${response.status} is not declared for ${method.toUpperCase()} ${route.template} (declared: ${Object.keys(responses).join(", ")})`];
    }
    return this.#checkResponse(response, `#/paths/${pointerEscape(route.template)}/${method}/responses/${key}`, `${method.toUpperCase()} ${route.template}`);
  }

  /** Compiles every JSON response schema of the document, so a schema Ajv rejects fails at once. */
  compileAll(): number {
    let compiled = 0;
    for (const [template, item] of Object.entries(this.#document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const key of Object.keys((operation as Json).responses as Json)) {
          const pointer = `#/paths/${pointerEscape(template)}/${method}/responses/${key}`;
          const content = this.#resolve(pointer).content as Json | undefined;
          if (content?.["application/json"]) {
            this.#validator(`${this.#responsePointer(pointer)}/content/application~1json/schema`);
            compiled++;
          }
        }
      }
    }
    return compiled;
  }

  /** Throws, naming every problem, unless `response` conforms to the document. */
  assert(response: ResponseToCheck): void {
    const problems = this.problems(response);
    if (problems.length === 0) return;
    const body = typeof response.body === "string" ? response.body : JSON.stringify(response.body);
    throw new Error(
      `${response.method} ${response.path} answered ${response.status}, which the OpenAPI document does not allow:\n` +
        problems.map((problem) => `  - ${problem}`).join("\n") +
        `\n  body: ${(body ?? "").slice(0, 500)}`,
    );
  }

  #route(path: string): Route | undefined {
    let pathname = path.replace(/[?#].*$/, "");
    // The router treats one trailing slash as absent (Elysia's default, strictPath: false).
    if (pathname.length > 1 && pathname.endsWith("/")) pathname = pathname.slice(0, -1);
    const matches = this.#routes.filter((route) => route.pattern.test(pathname));
    return matches.sort((a, b) => b.literalSegments - a.literalSegments)[0];
  }

  #checkResponse(response: ResponseToCheck, pointer: string, where: string): string[] {
    const declared = this.#resolve(pointer);
    const problems: string[] = [];
    for (const [name, header] of Object.entries((declared.headers ?? {}) as Json)) {
      if (!response.headers) break;
      const { required, schema } = this.#deref(header as Json) as { required?: boolean; schema?: Json };
      const value = response.headers.get(name);
      if (value === null) {
        if (required) problems.push(`${where} ${response.status}: header ${name} is required but missing`);
      } else if (typeof schema?.pattern === "string" && !new RegExp(schema.pattern).test(value)) {
        problems.push(`${where} ${response.status}: header ${name} "${value}" does not match ${schema.pattern}`);
      }
    }
    const content = declared.content as Record<string, Json> | undefined;
    if (!content) return problems;
    const contentType = response.headers?.get("content-type")?.split(";")[0]!.trim().toLowerCase();
    const mediaType = contentType ?? (typeof response.body === "string" ? undefined : "application/json");
    if (mediaType === undefined || !(mediaType in content)) {
      problems.push(`${where} ${response.status}: content type ${contentType ?? "(none)"} is not one of ${Object.keys(content).join(", ")}`);
      return problems;
    }
    if (mediaType === "application/json" && response.method.toUpperCase() !== "HEAD") {
      const validate = this.#validator(`${this.#responsePointer(pointer)}/content/application~1json/schema`);
      if (!validate(response.body)) {
        for (const error of validate.errors ?? []) {
          problems.push(`${where} ${response.status}: body${error.instancePath || ""} ${error.message}${describeParams(error.params)}`);
        }
      }
    }
    return problems;
  }

  #validator(pointer: string): ValidateFunction {
    let validate = this.#validators.get(pointer);
    if (!validate) {
      validate = this.#ajv.compile(rewriteRefs(this.#resolve(pointer)) as Json);
      this.#validators.set(pointer, validate);
    }
    return validate;
  }

  /** Where the response at `pointer` really is: the target of its `$ref`, if it is one. */
  #responsePointer(pointer: string): string {
    let node: unknown = this.#document;
    for (const part of pointer.replace(/^#\//, "").split("/")) node = (node as Json)?.[unescapePointer(part)];
    const ref = (node as Json | undefined)?.$ref;
    return typeof ref === "string" ? ref : pointer;
  }

  /** The object at a JSON pointer in the document, following a `$ref` found there. */
  #resolve(pointer: string): Json {
    let node: unknown = this.#document;
    for (const part of pointer.replace(/^#\//, "").split("/")) {
      node = (node as Json)?.[unescapePointer(part)];
    }
    if (node === undefined) throw new Error(`The OpenAPI document has nothing at ${pointer}.`);
    return this.#deref(node as Json);
  }

  #deref(node: Json): Json {
    return typeof node.$ref === "string" ? this.#resolve(node.$ref) : node;
  }
}

/**
 * Paths the document speaks for: the versioned API (any /vN, so an unknown version is still checked
 * as a missing route), health, metrics and the API reference. Everything else is the web face
 * (adapters/web: the settings area and dashboard), which is HTML and not part of the API.
 */
export function isApiPath(path: string): boolean {
  return /^\/(v\d+(\/|$|\?)|(healthz|readyz|metrics)(\/|$|\?)|docs(\/|$|\?))/.test(path);
}

const checkers = new Map<string, OpenApiChecker>();

/** One checker per distinct document text: compiling schemas is the expensive part. */
export function openApiCheckerFor(documentText: string): OpenApiChecker {
  let checker = checkers.get(documentText);
  if (!checker) {
    checker = new OpenApiChecker(JSON.parse(documentText) as OpenApiDocument);
    checkers.set(documentText, checker);
  }
  return checker;
}

/** Component references, pointed at the components registered with Ajv. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === "$ref" && typeof v === "string" ? v.replace("#/components/schemas/", `${COMPONENTS_ID}#/$defs/`) : rewriteRefs(v),
    ]),
  );
}

function describeParams(params: Record<string, unknown>): string {
  const interesting = Object.entries(params).filter(([, v]) => v !== undefined);
  return interesting.length === 0 ? "" : ` (${interesting.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(", ")})`;
}

function normalizeList(list: string): string {
  return list.split(",").map((m) => m.trim().toUpperCase()).filter(Boolean).sort().join(", ");
}

function pointerEscape(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

function unescapePointer(part: string): string {
  return part.replace(/~1/g, "/").replace(/~0/g, "~");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
