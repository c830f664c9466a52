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
  for (const [path, methods] of methodsByPath) {
    app.all(path, ({ request }) => core.api.methodNotAllowed(request, methods));
  }
  app.get("/healthz", () => healthz());
  app.get("/readyz", () => readyz(core.services.store));
  app.onError(({ code, request, error }) => {
    if (code === "NOT_FOUND") return core.api.notFound(request);
    core.services.logger.error("unhandled error in the HTTP adapter", { error });
    return core.api.internalError(request);
  });
  return app as unknown as Elysia;
}
