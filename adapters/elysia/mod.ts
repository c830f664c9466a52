/**
 * The HTTP face of certkeeper: Elysia routes registered from core's operation list. Every request is
 * answered by core's pipeline; this file only maps routes to it.
 *
 * @example
 * const app = createHttpApp(core);
 * const response = await app.handle(new Request("http://localhost/healthz"));
 */
import { Elysia } from "elysia";
import type { Core } from "../../core/core.ts";
import { healthz, readyz } from "../../core/health.ts";
import { newId } from "../../core/ids.ts";
import { createDocumentation } from "./docs.ts";

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
  app.get("/healthz", () => stamped(healthz()));
  app.get("/readyz", async () => stamped(await readyz(core.services.store)));
  app.get("/v1/openapi.json", async () => stamped(await docs.document()));
  app.get("/docs", async () => stamped(await docs.page()));
  app.get("/docs/:asset", async ({ request, params }) => stamped(await docs.asset(request, params.asset)));
  for (const path of ["/healthz", "/readyz", "/v1/openapi.json", "/docs", "/docs/:asset"]) methodsByPath.set(path, ["GET"]);
  for (const [path, methods] of methodsByPath) {
    app.all(path, ({ request }) => core.api.methodNotAllowed(request, methods));
  }
  app.onError(({ code, request, error }) => {
    if (code === "NOT_FOUND") return core.api.notFound(request);
    core.services.logger.error("unhandled error in the HTTP adapter", { error });
    return core.api.internalError(request);
  });
  return app as unknown as Elysia;
}

/** Every response carries X-Request-Id (CONTRACT §4); operations set their own, these routes get one here. */
function stamped(response: Response): Response {
  if (!response.headers.has("x-request-id")) response.headers.set("x-request-id", newId("req"));
  return response;
}
