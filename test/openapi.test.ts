/**
 * The OpenAPI document: valid OpenAPI 3.1 by a third-party validator, generated from every operation
 * with every error it can answer, plain JSON; the interactive reference served from this server alone;
 * and the response check that the harness applies to every response.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { compileErrors, validate } from "@readme/openapi-parser";
import { ERROR_STATUS, type ErrorCode } from "../core/base/errors.ts";
import { buildOpenApiDocument, openApiPath, type OpenApiDocument } from "../core/openapi/document.ts";
import { COMMON_ERRORS } from "../core/operations/operation.ts";
import { OPERATIONS } from "../core/operations/mod.ts";
import packageJson from "../package.json" with { type: "json" };
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { OpenApiChecker } from "./support/openapi_check.ts";

type Json = Record<string, any>;

let h: Harness;
/** As served; loosely typed, since the tests walk into it. */
let document: Json;

beforeAll(async () => {
  h = await createHarness();
  const response = await h.request("GET", "/v1/openapi.json", { key: null });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("application/json");
  document = response.body;
});

afterAll(() => h.close());

/** The codes an operation must document: the pipeline's, the permission check of writes, its own. */
function expectedCodes(operation: (typeof OPERATIONS)[number]): ErrorCode[] {
  const codes = new Set<ErrorCode>([...COMMON_ERRORS, ...operation.errors]);
  if (operation.access === "write") codes.add("permission_denied");
  // Every operation but a GET reads a body: one that takes none refuses one sent (too large, not JSON).
  for (const code of ["payload_too_large", "unsupported_media_type"] as const) {
    if (operation.body || operation.method !== "GET") codes.add(code);
    else codes.delete(code);
  }
  return [...codes];
}

const wire = (code: ErrorCode) => (code === "certificate_unreachable" ? "certificate_not_found" : code);

describe("GET /v1/openapi.json", () => {
  test("is valid OpenAPI 3.1 according to @readme/openapi-parser", async () => {
    expect(document.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(document) as never);
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.valid).toBe(true);
  });

  test("the validator does reject a broken document (the check above can fail)", async () => {
    const broken = structuredClone(document) as Json;
    delete broken.paths["/v1/certificates"].get.responses["200"].description;
    broken.paths["/v1/certificates"].get.operationId = "addCertificate";
    expect((await validate(broken as never)).valid).toBe(false);
  });

  test("is the document generated from OPERATIONS, as plain JSON", () => {
    const built = buildOpenApiDocument(OPERATIONS, { version: packageJson.version });
    expect(document).toEqual(JSON.parse(JSON.stringify(built)));
    const noise: string[] = [];
    (function walk(value: unknown, at: string) {
      if (typeof value !== "object" || value === null) return;
      if (Object.getOwnPropertySymbols(value).length > 0) noise.push(`${at}: symbol keys`);
      for (const [key, v] of Object.entries(value)) {
        if (key === "$id") noise.push(`${at}/$id`);
        walk(v, `${at}/${key}`);
      }
    })(built, "#");
    expect(noise).toEqual([]);
    expect(document.info).toMatchObject({ title: "certkeeper", version: packageJson.version });
    for (const topic of ["Authorization: Bearer", "ck_test_", "X-RateLimit-Remaining", "nextCursor", "X-Request-Id"]) {
      expect(document.info.description).toContain(topic);
    }
  });

  test("names shared resource schemas in components/schemas", () => {
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(["Certificate", "CreatedCertificate", "ErrorEnvelope"]),
    );
    const get = document.paths["/v1/certificates/{id}"]!.get!;
    expect(get.responses["200"].content["application/json"].schema.properties.data).toEqual({ $ref: "#/components/schemas/Certificate" });
  });

  test("accepts every Part II value wherever its kind is: statuses, statusReasons, event kinds, channel types", () => {
    const values = (schema: Json): unknown[] => schema.enum ?? (schema.anyOf ?? schema.oneOf).flatMap((s: Json) => s.const ?? s.enum ?? (s.type === "null" ? [null] : []));
    const schemas = document.components.schemas;
    // Literal lists, not the product's constants: a value dropped from both must still fail here.
    expect(values(schemas.CertificateStatus).sort()).toEqual(["expired", "expiring", "invalid", "revoked", "unreachable", "valid"]);
    expect(values(schemas.StatusReason)).toEqual(
      expect.arrayContaining(["chain_expiring", "starttls_refused", "revoked", "expiring_soon", "connection_refused", null]),
    );
    expect(values(schemas.Endpoint.properties.statusReason.$ref ? schemas.StatusReason : schemas.Endpoint.properties.statusReason)).toContain("starttls_refused");
    expect(values(schemas.Event.properties.type)).toEqual(
      expect.arrayContaining(["certificate.chain_expiring", "certificate.revoked", "certificate.issued"]),
    );
    expect(values(schemas.Channel.properties.type)).toEqual(expect.arrayContaining(["pagerduty", "teams", "telegram"]));
    const status = document.paths["/v1/certificates"].get.parameters.find((p: Json) => p.name === "status");
    expect(status.schema.items).toEqual({ $ref: "#/components/schemas/CertificateStatus" });
  });

  test.each(OPERATIONS.map((operation) => [operation.id, operation] as const))(
    "%s appears with its method, path, parameters, body and every error code",
    (_id, operation) => {
      const path = openApiPath(operation.path);
      const documented = document.paths[path]?.[operation.method.toLowerCase()] as Json;
      expect(documented).toBeDefined();
      expect(documented.operationId).toBe(operation.id);
      expect(documented.summary).toBe(operation.summary);
      expect(documented.security).toEqual([{ apiKey: [] }]);
      const parameters = (documented.parameters ?? []).map((p: Json) => `${p.in}:${p.name}`);
      for (const name of path.match(/\{([^}]+)\}/g) ?? []) expect(parameters).toContain(`path:${name.slice(1, -1)}`);
      for (const name of Object.keys(operation.query.properties)) expect(parameters).toContain(`query:${name}`);
      expect(documented.requestBody !== undefined).toBe(operation.body !== undefined);
      if (operation.example?.request) {
        expect(documented.requestBody.content["application/json"].example).toEqual(operation.example.request);
      }

      const success = documented.responses[String(operation.status)];
      expect(Object.keys(success.headers)).toEqual(["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]);
      expect(success.content["application/json"].schema).toBeDefined();

      const codes = expectedCodes(operation);
      const statuses = new Set(codes.map((code) => String(ERROR_STATUS[code])));
      expect(Object.keys(documented.responses).sort()).toEqual([String(operation.status), ...statuses].sort());
      for (const code of codes) {
        const response = documented.responses[String(ERROR_STATUS[code])];
        const media = response.content["application/json"];
        expect(media.schema.properties.error.properties.code.enum).toContain(wire(code));
        expect(media.examples[wire(code)].value).toEqual({ error: { code: wire(code), message: expect.any(String) } });
        expect(response.headers["X-Request-Id"]).toEqual({ $ref: "#/components/headers/X-Request-Id" });
      }
      if (statuses.has("429")) expect(Object.keys(documented.responses["429"].headers)).toContain("Retry-After");
    },
  );

  test("every error envelope allows exactly the codes of its status", () => {
    for (const item of Object.values(document.paths as Record<string, Json>)) {
      for (const operation of Object.values(item) as Json[]) {
        for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
          const codes: string[] | undefined = response.content?.["application/json"]?.schema?.properties?.error?.properties?.code?.enum;
          for (const code of codes ?? []) {
            const statuses = Object.entries(ERROR_STATUS).filter(([c]) => wire(c as ErrorCode) === code).map(([, s]) => String(s));
            expect(statuses).toContain(status);
          }
        }
      }
    }
  });

  test("documents /healthz, /readyz and the documentation itself, without a key", () => {
    const service = ["/healthz", "/readyz", "/v1/openapi.json", "/docs", "/docs/{asset}"];
    for (const path of service) expect(document.paths[path]!.get!.security).toEqual([]);
    expect(Object.keys(document.paths["/readyz"]!.get!.responses)).toEqual(["200", "503"]);
  });

  test("every JSON response schema compiles with Ajv (JSON Schema 2020-12, strict)", () => {
    expect(new OpenApiChecker(document as OpenApiDocument).compileAll()).toBeGreaterThan(OPERATIONS.length * 4);
  });
});

describe("GET /docs", () => {
  test("serves an HTML page that loads everything from this server", async () => {
    const page = await h.request("GET", "/docs", { key: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
    const html = page.body as string;
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/(?:src|href)\s*=\s*["']\/\//i);

    const references = [...html.matchAll(/(?:src|href|data-document)\s*=\s*"([^"]+)"/g)].map((m) => m[1]!);
    expect(references.length).toBeGreaterThanOrEqual(4);
    for (const reference of references) {
      const url = new URL(reference, "http://localhost/docs");
      expect(url.host).toBe("localhost");
      const asset = await h.request("GET", url.pathname + url.search, { key: null });
      expect(asset.status).toBe(200);
      const type = asset.headers.get("content-type");
      if (url.pathname.endsWith(".js")) expect(type).toBe("text/javascript; charset=utf-8");
      else if (url.pathname.endsWith(".css")) expect(type).toBe("text/css; charset=utf-8");
      else expect(type).toStartWith("application/json");
    }
  });

  test("the start-up script points Swagger UI at this server's document, with no outside validator", async () => {
    const script = (await h.request("GET", "/docs/docs.js", { key: null })).body as string;
    expect(script).toContain("SwaggerUIBundle(");
    expect(script).toContain("validatorUrl: null");
    expect(script).not.toMatch(/https?:\/\//i);
    const bundle = await h.request("GET", "/docs/swagger-ui-bundle.js", { key: null });
    expect((bundle.body as string).length).toBeGreaterThan(100_000);
    expect(bundle.body as string).toContain("SwaggerUIBundle");
  });

  test("an unknown asset is the API's 404", async () => {
    expectError(await h.request("GET", "/docs/../../package.json", { key: null }), 404, "not_found");
    expectError(await h.request("GET", "/docs/index.html", { key: null }), 404, "not_found");
  });

  test("another method on a documentation or health route is 405 with Allow", async () => {
    for (const path of ["/docs", "/v1/openapi.json", "/healthz"]) {
      const response = await h.request("POST", path, { key: null, body: {} });
      expectError(response, 405, "method_not_allowed");
      expect(response.headers.get("allow")).toBe("GET");
    }
  });
});

describe("the response check (applied by the harness to every response)", () => {
  const checker = () => new OpenApiChecker(document as OpenApiDocument);
  const headers = (extra: Record<string, string> = {}) =>
    new Headers({ "content-type": "application/json; charset=utf-8", "x-request-id": "req_abcdefghijklmnop", ...extra });
  const rateLimit = { "x-ratelimit-limit": "60", "x-ratelimit-remaining": "59", "x-ratelimit-reset": "1790000000" };
  const meta = { requestId: "req_abcdefghijklmnop" };

  test("request() fails on a response the document does not allow", async () => {
    const body = { type: "email", name: "Ops", config: { email: "ops@example.com" } };
    const created = expectData(await h.request("POST", "/v1/channels", { body }), 201);
    // A store regression: a name that is no longer a string.
    await h.store.channels.update({ organizationId: h.org.id, mode: "live" }, created.id, { name: 42 as never, updatedAt: Date.now() });
    const failure = await h.request("GET", `/v1/channels/${created.id}`).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain("GET /v1/channels/{id} 200: body/data/name must be string");
    expectData(await h.request("DELETE", `/v1/channels/${created.id}`), 200);
  });

  test("accepts a declared status with a conforming body", () => {
    const list = { method: "GET", path: "/v1/certificates?limit=5", status: 200, headers: headers(rateLimit), body: { data: [], meta: { ...meta, nextCursor: null } } };
    expect(checker().problems(list)).toEqual([]);
  });

  test("rejects a status the operation does not declare", () => {
    const problems = checker().problems({ method: "GET", path: "/v1/certificates", status: 409, headers: headers(), body: { error: { code: "duplicate_domain", message: "x" } } });
    expect(problems.join()).toContain("status 409 is not declared");
  });

  test("rejects an error code the operation does not declare for that status", () => {
    const problems = checker().problems({ method: "GET", path: "/v1/certificates/cert_x", status: 400, headers: headers(), body: { error: { code: "invalid_domain", message: "x" } } });
    expect(problems.join()).toContain("must be equal to one of the allowed values");
  });

  test("rejects a body that departs from the schema, and a missing required header", () => {
    const problems = checker().problems({ method: "GET", path: "/v1/certificates", status: 200, headers: headers(), body: { data: [{ id: "cert_1" }], meta } });
    const text = problems.join("\n");
    expect(text).toContain("header X-RateLimit-Limit is required but missing");
    expect(text).toContain("/data/0 must have required property");
    expect(text).toContain("must have required property 'nextCursor'");
  });

  test("rejects an undeclared content type", () => {
    const problems = checker().problems({ method: "GET", path: "/healthz", status: 200, headers: new Headers({ "content-type": "text/plain" }), body: "ok" });
    expect(problems.join()).toContain("content type text/plain");
  });

  test("a path that is no route must be the API's 404; a route's other method its 405", () => {
    const c = checker();
    const notFound = { error: { code: "not_found", message: "No route" } };
    expect(c.problems({ method: "GET", path: "/v2/things", status: 404, headers: headers(), body: notFound })).toEqual([]);
    expect(c.problems({ method: "GET", path: "/v2/things", status: 200, headers: headers(), body: {} }).join()).toContain("no route");
    const notAllowed = { error: { code: "method_not_allowed", message: "no" } };
    expect(c.problems({ method: "PUT", path: "/v1/events", status: 405, headers: headers({ allow: "GET" }), body: notAllowed })).toEqual([]);
    expect(c.problems({ method: "PUT", path: "/v1/events", status: 405, headers: headers({ allow: "GET, PUT" }), body: notAllowed }).join()).toContain("Allow");
    expect(c.problems({ method: "PUT", path: "/v1/events", status: 200, headers: headers(), body: {} }).join()).toContain("not 405");
  });
});
