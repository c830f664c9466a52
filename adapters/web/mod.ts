/**
 * The web face of certkeeper: the settings area (sign-in, API Keys, Members) and the dashboard, as
 * server-rendered pages. Framework-free: a list of routes with web-standard handlers, which the HTTP
 * adapter (adapters/elysia) registers one line each. The product logic lives in core/accounts.
 *
 * @example
 * for (const route of createWebRoutes(core)) {
 *   app.route(route.method, route.path, ({ request, params }) => route.handle({ request, params }));
 * }
 */
import type { Core } from "../../core/app/mod.ts";
import { loggedPath } from "../../core/http/mod.ts";
import { ASSET_VERSION, SCRIPT, STYLESHEET } from "./assets.ts";
import { errorPage, noted, type WebHandler, type WebRoute } from "./guard.ts";
import { apiKeyRoutes } from "./routes/api_keys.ts";
import { dashboardRoutes } from "./routes/dashboard.ts";
import { memberRoutes } from "./routes/members.ts";
import { sessionRoutes } from "./routes/session.ts";
import { accountRoutes } from "./routes/account.ts";
import { certificateRoutes } from "./routes/certificates.ts";
import { channelRoutes } from "./routes/channels.ts";
import { watchRoutes } from "./routes/watches.ts";

export { clientAddress } from "./http.ts";
export { requestFacts } from "./guard.ts";
export type { WebRequest, WebHandler, WebRoute } from "./guard.ts";

export function createWebRoutes(core: Core): WebRoute[] {
  const routes = [...sessionRoutes(core), ...dashboardRoutes(core), ...certificateRoutes(core), ...channelRoutes(core), ...watchRoutes(core), ...apiKeyRoutes(core), ...memberRoutes(core), ...accountRoutes(core), ...assetRoutes()];
  return routes.map((route) => ({ ...route, handle: lastResort(core, route.handle) }));
}

function assetRoutes(): WebRoute[] {
  const asset = (body: string, type: string) => async () =>
    new Response(body, {
      headers: { "content-type": type, "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff", etag: `"${ASSET_VERSION}"` },
    });
  return [
    { method: "GET", path: "/assets/certkeeper.css", handle: asset(STYLESHEET, "text/css; charset=utf-8") },
    { method: "GET", path: "/assets/certkeeper.js", handle: asset(SCRIPT, "text/javascript; charset=utf-8") },
  ];
}

/** An unexpected failure is logged and answered with a page, never a stack trace. */
function lastResort(core: Core, handle: WebHandler): WebHandler {
  return async (input) => {
    try {
      return await handle(input);
    } catch (error) {
      const url = new URL(input.request.url);
      core.services.logger.error("web page failed", { method: input.request.method, path: loggedPath(url.pathname), error });
      return noted(errorPage(undefined, { status: 500, title: "Something went wrong", message: "Something went wrong on our side; try again in a moment." }), {
        code: "internal_error",
      });
    }
  };
}

/**
 * Whether a request for a missing address comes from a browser showing pages: it accepts HTML (a
 * browser's navigation does; curl's and fetch's `*\/*` and API clients' JSON do not).
 */
export function wantsPage(request: Request): boolean {
  return request.method === "GET" && /\btext\/html\b/i.test(request.headers.get("accept") ?? "");
}

/**
 * Where a browser asking for an address that only takes a form (the address a form posted to, typed
 * again or reached through history) is sent: the nearest page above it, by `pages` (the GET routes'
 * paths, `:name` for a parameter); the dashboard when none is.
 */
export function pageAbove(request: Request, pages: readonly string[]): Response {
  const segments = new URL(request.url).pathname.split("/");
  const served = (candidate: string[]) =>
    pages.some((page) => {
      const parts = page.split("/");
      return parts.length === candidate.length && parts.every((part, i) => part.startsWith(":") || part === candidate[i]);
    });
  for (let end = segments.length - 1; end > 1; end--) {
    const candidate = segments.slice(0, end);
    if (served(candidate)) return new Response(null, { status: 303, headers: { location: candidate.join("/") } });
  }
  return new Response(null, { status: 303, headers: { location: "/" } });
}

/** The 404 a browser gets: a page saying what is missing and where to go. */
export function notFoundPage(request: Request): Response {
  const path = new URL(request.url).pathname;
  return errorPage(undefined, {
    status: 404,
    title: "Page not found",
    message: `There is no page at ${path}. The dashboard lists your certificates; the API is described at /docs.`,
  });
}
