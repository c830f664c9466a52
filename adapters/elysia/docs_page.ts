/**
 * The interactive API reference: a small HTML page and its start-up script, rendering
 * /v1/openapi.json with Swagger UI (swagger-ui-dist), every file served by this server.
 * URLs are relative, so the page also works behind a proxy that mounts the API under a prefix.
 */

/** The files of the page, by the name they are served under at /docs/{name}. */
export const DOCS_ASSETS: Record<string, { from: "swagger-ui-dist" | "inline"; file: string; type: string }> = {
  "swagger-ui.css": { from: "swagger-ui-dist", file: "swagger-ui.css", type: "text/css; charset=utf-8" },
  "swagger-ui-bundle.js": { from: "swagger-ui-dist", file: "swagger-ui-bundle.js", type: "text/javascript; charset=utf-8" },
  "docs.js": { from: "inline", file: "docs.js", type: "text/javascript; charset=utf-8" },
};

/**
 * Nothing but this server: scripts and styles from /docs, the document from /v1. Swagger UI sets
 * inline styles, hence 'unsafe-inline' for styles (never for scripts).
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The page at /docs; `version` busts caches of the assets when the package changes. */
export function docsPage(version: string): string {
  const v = encodeURIComponent(version);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>certkeeper API reference</title>
  <link rel="stylesheet" href="docs/swagger-ui.css?v=${v}">
</head>
<body>
  <noscript>This reference needs JavaScript. The OpenAPI document is at <a href="v1/openapi.json">/v1/openapi.json</a>.</noscript>
  <div id="reference" data-document="v1/openapi.json"></div>
  <script src="docs/swagger-ui-bundle.js?v=${v}"></script>
  <script src="docs/docs.js?v=${v}"></script>
</body>
</html>
`;
}

/** Starts Swagger UI; a file of its own, so the page's policy can forbid inline scripts. */
export const DOCS_SCRIPT = `"use strict";
(function () {
  var root = document.getElementById("reference");
  window.ui = SwaggerUIBundle({
    url: new URL(root.getAttribute("data-document"), document.baseURI).href,
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 1,
    // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
    validatorUrl: null,
  });
})();
`;
