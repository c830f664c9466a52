/**
 * A libSQL server that stops answering (sqld gone): /healthz 200, /readyz 503, and requests that need
 * the database answer 503 storage_unavailable, saying the database does not answer (docs/api.md and
 * docs/operations.md: "A database server that does not answer a request in time is answered so too").
 * A 500 internal_error tells a client and a load balancer that certkeeper itself is broken, and is not
 * the retryable answer the operations documentation promises.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { startSqld, type SqldServer } from "./support/sqld.ts";
import { seedOwner } from "./support/accounts.ts";
import { callServe, startServe, type ServeProcess } from "./support/cli.ts";

setDefaultTimeout(60_000);
let sqld: SqldServer | undefined;
let serve: ServeProcess | undefined;
afterAll(async () => {
  await serve?.stop("SIGKILL");
  await sqld?.close();
});

test("sqld killed: healthz 200, readyz 503, a keyed request 503 storage_unavailable (not 500 internal_error)", async () => {
  sqld = await startSqld();
  const { key } = await seedOwner(sqld.url, { plan: "pro" });
  serve = await startServe({ env: { CERTKEEPER_DATABASE_URL: sqld.url, CERTKEEPER_DNS_SERVERS: "off" } });
  expect((await callServe(serve, key, "GET", "/v1/certificates")).status).toBe(200);

  process.kill(sqld.pid, "SIGKILL");
  await Bun.sleep(300);
  expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${serve.url}/readyz`)).status).toBe(503);
  const read = await callServe(serve, key, "GET", "/v1/certificates");
  const write = await callServe(serve, key, "POST", "/v1/channels", { type: "email", name: "ops", config: { email: "ops@acme.test" } });
  expect({ read: [read.status, read.body.error?.code], write: [write.status, write.body.error?.code] }).toEqual({
    read: [503, "storage_unavailable"],
    write: [503, "storage_unavailable"],
  });
});
