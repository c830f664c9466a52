/**
 * While the database is still being opened at start (a database server waited for), `/readyz` and
 * every other request answer 503 with `Retry-After: 5`, so that a load balancer or client knows when
 * to look again; `/healthz` answers 200 meanwhile.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { CLI_MAIN, freePort } from "./support/cli.ts";

setDefaultTimeout(30_000);
let child: ReturnType<typeof Bun.spawn> | undefined;
afterAll(async () => {
  child?.kill("SIGKILL");
  await child?.exited;
});

test("while a database server is waited for at start, /readyz's 503 carries Retry-After: 5 as every other request's does", async () => {
  const port = await freePort();
  const closed = await freePort(); // nothing listens there: the server waits up to 10 s for it
  child = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CERTKEEPER_DATABASE_URL: `http://127.0.0.1:${closed}`,
      CERTKEEPER_PORT: String(port),
      CERTKEEPER_LOG_LEVEL: "error",
      CERTKEEPER_DNS_SERVERS: "off",
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  let healthz: number | string = "refused";
  for (let i = 0; i < 50 && healthz !== 200; i++) {
    healthz = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => "refused");
    if (healthz !== 200) await Bun.sleep(100);
  }
  expect(healthz).toBe(200);
  const api = await fetch(`http://127.0.0.1:${port}/v1/certificates`);
  const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
  expect({ status: api.status, retryAfter: api.headers.get("retry-after") }).toEqual({ status: 503, retryAfter: "5" });
  expect({ status: readyz.status, retryAfter: readyz.headers.get("retry-after") }).toEqual({ status: 503, retryAfter: "5" });
});
