/**
 * Drives certkeeper's HTTP API with openapi-fetch, typed by schema.d.ts (generated from the API's
 * OpenAPI document): adds a certificate, lists, gets and deletes it, and handles typed errors.
 *
 *   CERTKEEPER_URL=http://127.0.0.1:3000 CERTKEEPER_API_KEY=ck_live_… bun examples/typed-client/main.ts example.com[:port]
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.d.ts";

type ErrorCode = components["schemas"]["ErrorEnvelope"]["error"]["code"];

const [target] = process.argv.slice(2);
const apiKey = process.env.CERTKEEPER_API_KEY;
if (!target || !apiKey) {
  console.error("usage: CERTKEEPER_API_KEY=ck_live_… [CERTKEEPER_URL=http://127.0.0.1:3000] bun examples/typed-client/main.ts DOMAIN[:PORT]");
  process.exit(2);
}
const [domain, port] = target.split(":") as [string, string | undefined];

const client = createClient<paths>({
  baseUrl: process.env.CERTKEEPER_URL ?? "http://127.0.0.1:3000",
  headers: { Authorization: `Bearer ${apiKey}` },
});

/** Every error body is typed: `code` is one of the codes this operation can answer. */
function fail(what: string, error: { error: { code: ErrorCode; message: string } }): never {
  console.error(`${what} failed: ${error.error.code}: ${error.error.message}`);
  process.exit(1);
}

// Add: the body is checked against AddCertificateBody at compile time.
const added = await client.POST("/v1/certificates", { body: { domain, ...(port ? { port: Number(port) } : {}) } });
if (added.error) fail("add", added.error);
const certificate = added.data.data;
console.log(`added ${certificate.id}: ${certificate.domain}:${certificate.port} is ${certificate.status}, ${certificate.daysUntilExpiry} days left`);

// List: query parameters are typed as the server takes them (limit a number, status a list of statuses).
const listed = await client.GET("/v1/certificates", { params: { query: { domain, limit: 10 } } });
if (listed.error) fail("list", listed.error);
console.log(`listed ${listed.data.data.length} certificate(s) matching "${domain}"; next cursor: ${listed.data.meta.nextCursor}`);

// Get: the path parameter is required by the types.
const got = await client.GET("/v1/certificates/{id}", { params: { path: { id: certificate.id } } });
if (got.error) fail("get", got.error);
console.log(`got ${got.data.data.id}: issuer ${got.data.data.issuer}, serial ${got.data.data.serialNumber}, reason ${got.data.data.statusReason}`);

// A typed error: the compiler knows which codes adding a certificate can answer.
const refused = await client.POST("/v1/certificates", { body: { domain: `https://${domain}/` } });
if (refused.error) {
  switch (refused.error.error.code) {
    case "invalid_domain":
      console.log(`refused as expected (${refused.response.status} invalid_domain): ${refused.error.error.message}`);
      break;
    default:
      fail("the refused add", refused.error);
  }
}

// Delete, then the certificate is gone: a 404 with its own code.
const deleted = await client.DELETE("/v1/certificates/{id}", { params: { path: { id: certificate.id } } });
if (deleted.error) fail("delete", deleted.error);
console.log(`deleted ${deleted.data.data.id}: ${deleted.data.data.deleted}`);
const gone = await client.GET("/v1/certificates/{id}", { params: { path: { id: certificate.id } } });
if (gone.error?.error.code === "certificate_not_found") console.log(`gone: ${gone.response.status} certificate_not_found`);
else fail("the get after delete", gone.error ?? { error: { code: "internal_error", message: "it is still there" } });
