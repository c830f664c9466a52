/**
 * A scrape of /metrics while the database server is gone (sqld killed): the per-certificate gauges come
 * from the database, so it fails, before anything is sent, as a 503 `storage_unavailable` in its request
 * line; and what the operator's log collector sees stays the log CONTRACT §10 describes: one JSON object
 * per line on stdout, no stack trace printed by the runtime on stderr.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { startSqld, type SqldServer } from "./support/sqld.ts";
import { seedOwner } from "./support/accounts.ts";
import { callServe, startServe, type ServeProcess } from "./support/cli.ts";

setDefaultTimeout(60_000);
const TOKEN = "metr1cs-t0ken-db-down";
let sqld: SqldServer | undefined;
let serve: ServeProcess | undefined;
afterAll(async () => {
  await serve?.stop("SIGKILL");
  await sqld?.close();
});

test("sqld killed: a /metrics scrape is logged as JSON lines on stdout, with nothing (no stack trace) on stderr", async () => {
  sqld = await startSqld();
  const { key } = await seedOwner(sqld.url, { plan: "pro" });
  serve = await startServe({ env: { CERTKEEPER_DATABASE_URL: sqld.url, CERTKEEPER_DNS_SERVERS: "off", CERTKEEPER_METRICS_TOKEN: TOKEN, CERTKEEPER_LOG_LEVEL: "info" } });
  expect((await callServe(serve, key, "GET", "/v1/certificates")).status).toBe(200);
  const before = await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(before.status).toBe(200);
  await before.text();

  process.kill(sqld.pid, "SIGKILL");
  await Bun.sleep(300);
  expect((await fetch(`${serve.url}/readyz`)).status).toBe(503);
  // Nothing is sent before the database is read: the scrape is a 503 with its code, not a 200 cut short.
  const down = await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect([down.status, ((await down.json()) as any).error.code]).toEqual([503, "storage_unavailable"]);
  await Bun.sleep(200);

  expect(await serve.stop("SIGTERM", 10_000)).toBe(0);
  const { stdout, stderr } = serve.output();
  expect(stdout).toContain('"msg":"metrics scrape failed"');
  for (const line of stdout.split("\n").filter((l) => l !== "")) expect(() => JSON.parse(line)).not.toThrow();
  expect(stderr).toBe("");
  const line = stdout.split("\n").find((l) => l.includes(`"requestId":"${down.headers.get("x-request-id")}"`) && l.includes('"msg":"request"'));
  expect(JSON.parse(line!)).toMatchObject({ path: "/metrics", status: 503, code: "storage_unavailable" });
});
