/**
 * The Elysia app: routes registered from core's operation list, each answered by core's pipeline
 * (core.api), beside the health, documentation, metrics and settings-area routes.
 *
 * @example
 * const app = createHttpApp(core);
 * const response = await app.handle(new Request("http://localhost/healthz"));
 */
import { Elysia } from "elysia";
import type { Core } from "../../core/app/mod.ts";
import { healthz, readyz, routeParams } from "../../core/http/mod.ts";
import { metricsResponse } from "../../core/metrics/mod.ts";
import { createDocumentation } from "./docs.ts";
import { clientAddress, createWebRoutes, notFoundPage, pageAbove, requestFacts, wantsPage } from "../web/mod.ts";

const WRITE_METHODS = ["POST", "PUT", "PATCH", "DELETE"];

export function createHttpApp(core: Core): Elysia {
  const app = new Elysia();
  const methodsByPath = new Map<string, string[]>();
  for (const operation of core.operations) {
    // parse: "none": core reads the body itself, after authentication, with its own size and type rules.
    app.route(operation.method, operation.path, ({ request, params }) => core.api.handle(operation, request, params), {
      parse: "none",
    } as never);
    methodsByPath.set(operation.path, [...(methodsByPath.get(operation.path) ?? []), operation.method]);
  }
  const docs = createDocumentation(core);
  /** Responses made outside the pipeline get their X-Request-Id, request line and a sent key's rate limit from core. */
  const finished =
    (handle: (request: Request, params: Record<string, string>, requestId: string) => Response | Promise<Response>) =>
    ({ request, params }: { request: Request; params: Record<string, string> }) =>
      core.api.keyless(request, (requestId) => handle(request, params, requestId));
  /**
   * Health probes come every few seconds: their request lines are debug, not info, and they read no key
   * (/healthz answers while the process is up, whatever the database does).
   */
  const probe = (handle: () => Response | Promise<Response>) => async ({ request }: { request: Request }) => {
    const started = performance.now();
    return core.api.finish(request, await handle(), { started, level: "debug" });
  };
  app.get("/healthz", probe(() => healthz()));
  app.get("/readyz", probe(() => readyz(core.services.store)));
  app.get("/v1/openapi.json", finished(() => docs.document()));
  app.get("/docs", finished(() => docs.page()));
  app.get("/docs/:asset", finished((request, params) => docs.asset(request, params.asset!)));
  for (const path of ["/healthz", "/readyz", "/v1/openapi.json", "/docs", "/docs/:asset"]) methodsByPath.set(path, ["GET"]);
  // The settings area and dashboard (adapters/web): web-standard handlers, the peer's address for the sign-in slowdown.
  const webRoutes = createWebRoutes(core);
  const pages = webRoutes.filter((route) => route.method === "GET").map((route) => route.path);
  const forms = new Set(webRoutes.filter((route) => route.method !== "GET").map((route) => route.path));
  for (const route of webRoutes) {
    app.route(
      route.method,
      route.path,
      async ({ request, params, server }) => {
        const started = performance.now();
        const address = clientAddress(request, server?.requestIP(request)?.address);
        const response = await route.handle({ request, params: routeParams(route.path, request.url, params as Record<string, string>), clientAddress: address });
        return core.api.finish(request, response, { started, fields: requestFacts(response) });
      },
      { parse: "none" } as never,
    );
    methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
  }
  // Without CERTKEEPER_METRICS_TOKEN there is no /metrics route at all: 404 exactly as any unknown path.
  if (core.services.config.metricsToken !== undefined) {
    app.get("/metrics", finished((request, _params, requestId) => metricsResponse(core.services, request, requestId)));
    methodsByPath.set("/metrics", ["GET"]);
  }
  for (const [path, methods] of methodsByPath) {
    // A browser at an address a form posts to (typed again, or through history) is sent to the page above it.
    const formOnly = forms.has(path) && !methods.includes("GET");
    const refuse = ({ request }: { request: Request }) =>
      formOnly && wantsPage(request) ? core.api.finish(request, pageAbove(request, pages)) : core.api.methodNotAllowed(request, methods);
    app.all(path, refuse);
    // A fixed path beside a parameter's (/v1/certificates/summary beside /v1/certificates/:id) is
    // refused by method, or the router takes the other methods for the parameter's route.
    if (!path.includes(":")) for (const method of WRITE_METHODS) if (!methods.includes(method)) app.route(method, path, refuse, { parse: "none" } as never);
  }
  app.onError(({ code, request, error }) => {
    // A browser asking for a page gets a page; API clients (JSON, curl's */*) get the API's 404.
    if (code === "NOT_FOUND" && wantsPage(request)) return core.api.finish(request, notFoundPage(request), { fields: { code: "not_found" } });
    if (code === "NOT_FOUND") return core.api.notFound(request);
    core.services.logger.error("unhandled error in the HTTP adapter", { error });
    return core.api.internalError(request);
  });
  return app as unknown as Elysia;
}
