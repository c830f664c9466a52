/**
 * The OpenAPI document and the interactive reference, as web-standard handlers. The document is built
 * once from the operation list; the reference's files are read from node_modules on first use.
 *
 * @example
 * const docs = createDocumentation(core);
 * app.get("/v1/openapi.json", () => docs.document());
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Core } from "../../core/app/mod.ts";
import { buildOpenApiDocument } from "../../core/openapi/mod.ts";
import packageJson from "../../package.json" with { type: "json" };
import { DOCS_ASSETS, DOCS_CONTENT_SECURITY_POLICY, DOCS_SCRIPT, docsPage } from "./docs_page.ts";

export interface Documentation {
  /** GET /v1/openapi.json */
  document(): Response;
  /** GET /docs */
  page(): Response;
  /** GET /docs/{name}; an unknown name is the API's 404. */
  asset(request: Request, name: string): Response | Promise<Response>;
}

export function createDocumentation(core: Core): Documentation {
  const metrics = core.services.config.metricsToken !== undefined;
  // Built at the first request for it, not at start: about 70 ms a start, and most servers are never asked.
  let document: string | undefined;
  const openApi = () => (document ??= JSON.stringify(buildOpenApiDocument(core.operations, { version: packageJson.version, metrics })));
  const swaggerUiVersion = readPackageVersion("swagger-ui-dist");
  const page = docsPage(`${packageJson.version}-${swaggerUiVersion}`);
  const files = new Map<string, Uint8Array | string>();

  const respond = (body: BodyInit, type: string, headers: Record<string, string> = {}) =>
    new Response(body, {
      // Its X-Request-Id is the route's (core.api.keyless, which answers and logs it).
      headers: { "content-type": type, "x-content-type-options": "nosniff", ...headers },
    });

  return {
    document: () => respond(openApi(), "application/json; charset=utf-8", { "access-control-allow-origin": "*" }),
    page: () =>
      respond(page, "text/html; charset=utf-8", {
        "content-security-policy": DOCS_CONTENT_SECURITY_POLICY,
        "cache-control": "no-cache",
      }),
    asset(request, name) {
      const asset = Object.hasOwn(DOCS_ASSETS, name) ? DOCS_ASSETS[name] : undefined;
      // Answered (and its request line written) by the route's core.api.keyless, once.
      if (!asset) throw core.api.noRoute(request);
      let body = files.get(name);
      if (body === undefined) {
        body = asset.from === "inline" ? DOCS_SCRIPT : readFileSync(packageFile(asset.from, asset.file));
        files.set(name, body);
      }
      // Page URLs carry ?v=<versions>, so a day of caching never serves a stale file for long.
      return respond(body as BodyInit, asset.type, { "cache-control": "public, max-age=86400" });
    },
  };
}

function packageFile(pkg: string, file: string): string {
  return fileURLToPath(import.meta.resolve(`${pkg}/${file}`));
}

function readPackageVersion(pkg: string): string {
  return (JSON.parse(readFileSync(packageFile(pkg, "package.json"), "utf8")) as { version: string }).version;
}
