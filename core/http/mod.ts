/**
 * The HTTP face of core: the pipeline over web-standard Request and Response (api.ts), bounded body
 * reading, and the health routes. An HTTP adapter mounts these; it writes no request logic itself.
 */
export { createApi, loggedPath, requestLine, routeParams, type Api } from "./api.ts";
export { MAX_BODY_BYTES, readBounded, readJsonBody } from "./body.ts";
export { healthz, readyz } from "./health.ts";
export { urlEncodedPairs } from "./url_encoded.ts";
