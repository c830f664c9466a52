/** The OpenAPI 3.1 document, generated from the operations' schemas. */
export { buildOpenApiDocument, openApiPath, type OpenApiDocument, type OpenApiOptions } from "./document.ts";
